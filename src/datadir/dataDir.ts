// The data directory and its logs/ folder, checked before anything is opened in them: a path
// under a file, a read-only or full disk is then one line naming the folder and its code, not a
// stack from the first library that tripped over it (the log file's rotation, SQLite).
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type ErrorCode, errorCode, SmsdropError } from '../errors.js';

/**
 * Makes the data directory if needed and checks smsdrop can write there; throws an E_DATA_DIR_… or
 * E_DISK_FULL error.
 */
export function checkDataDir(dataDir: string): void {
  checkWritableDir(dataDir, {
    notADir: 'E_DATA_DIR_NOT_A_DIRECTORY',
    readOnly: 'E_DATA_DIR_READONLY',
    other: 'E_DATA_DIR_UNUSABLE',
    what: `the data directory ${dataDir} (SMSDROP_DATA_DIR)`,
  });
}

/** The same for one of the data directory's folders (inbox/, processing/…). */
export function checkDataFolder(dir: string): void {
  checkWritableDir(dir, {
    notADir: 'E_DATA_DIR_NOT_A_DIRECTORY',
    readOnly: 'E_DATA_DIR_READONLY',
    other: 'E_DATA_DIR_UNUSABLE',
    what: `the folder ${dir} of the data directory`,
  });
}

/** The same for the log folder, once the data directory is known to be fine. */
export function checkLogDir(logDir: string): void {
  checkWritableDir(logDir, {
    notADir: 'E_LOG_DIR',
    readOnly: 'E_LOG_DIR',
    other: 'E_LOG_DIR',
    what: `the log folder ${logDir}`,
  });
}

interface DirCodes {
  notADir: ErrorCode;
  readOnly: ErrorCode;
  other: ErrorCode;
  what: string;
}

function checkWritableDir(dir: string, codes: DirCodes): void {
  try {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (stat && !stat.isDirectory())
      throw new SmsdropError(
        codes.notADir,
        `${codes.what} is a file, not a directory: move the file away, or name another directory`,
      );
    mkdirSync(dir, { recursive: true });
    // Writing is the only test that holds for root too: access() says yes to root on a read-only
    // mount.
    const probe = path.join(dir, `.smsdrop-probe-${process.pid}`);
    writeFileSync(probe, 'x');
    rmSync(probe, { force: true });
  } catch (err) {
    throw dirError(err, codes);
  }
}

function dirError(err: unknown, codes: DirCodes): SmsdropError {
  if (err instanceof SmsdropError) return err;
  const code = errorCode(err) ?? 'unknown';
  const message = (err as Error).message;
  const said = `(${message.startsWith(code) ? '' : `${code}: `}${message})`;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return new SmsdropError(
      'E_DISK_FULL',
      `no space left to write in ${codes.what}: free some ${said}`,
    );
  if (code === 'ENOTDIR' || code === 'EEXIST')
    return new SmsdropError(
      codes.notADir,
      `${codes.what} cannot be made: part of its path is a file ${said}`,
    );
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new SmsdropError(
      codes.readOnly,
      `${codes.what} cannot be written (read-only, or owned by another user): give smsdrop a folder it may write ${said}`,
    );
  }
  return new SmsdropError(codes.other, `${codes.what} cannot be used ${said}`);
}
