// One writer per journal: the daemon and `smsdrop send` take an exclusive lock file in the data
// directory, so two processes can never send the same batches. A lock left by a dead process
// (crash, SIGKILL) is noticed by its pid and taken over. Pids are only meaningful on one machine
// (one pid namespace): do not share a data directory between hosts or containers.
import {
  closeSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { SmsdropError } from '../errors.js';

export class LockedError extends SmsdropError {
  constructor(
    readonly lockFile: string,
    readonly holderPid: number,
    holder: string,
  ) {
    super(
      'E_DATA_DIR_LOCKED',
      `another smsdrop process (pid ${holderPid}: ${holder}) is using ${path.dirname(lockFile)}; stop it first, or use another data directory`,
    );
  }
}

export interface Lock {
  release(): void;
}

export function acquireLock(dataDir: string, what: string): Lock {
  const lockFile = path.join(dataDir, 'smsdrop.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeSync(fd, JSON.stringify({ pid: process.pid, what, since: new Date().toISOString() }));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            if (readHolder(lockFile)?.pid === process.pid) unlinkSync(lockFile);
          } catch {
            // already gone
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const seen = statOrUndefined(lockFile);
      const holder = readHolder(lockFile);
      if (holder && holder.pid !== process.pid && isAlive(holder.pid))
        throw new LockedError(lockFile, holder.pid, holder.what);
      // A lock with no readable holder is being written by a process starting right now.
      if (!holder && seen && Date.now() - seen.mtimeMs < 5_000)
        throw new LockedError(lockFile, 0, 'starting');
      if (seen) removeStaleLock(lockFile, seen.ino);
    }
  }
  throw new SmsdropError(
    'E_DATA_DIR_LOCKED',
    `cannot take the lock ${lockFile}: another process keeps taking it`,
  );
}

/**
 * Takes a dead process's lock away, atomically: it is renamed aside first, and if what was
 * renamed is not the file judged stale (another process replaced it in between), it is put back.
 */
function removeStaleLock(lockFile: string, staleIno: number): void {
  const aside = `${lockFile}.stale-${process.pid}-${Date.now()}`;
  try {
    renameSync(lockFile, aside);
  } catch {
    return; // someone else removed it first; try again
  }
  if (statSync(aside).ino !== staleIno) {
    try {
      linkSync(aside, lockFile); // a live lock: restore it (fails if yet another one appeared)
    } finally {
      unlinkSync(aside);
    }
    return;
  }
  unlinkSync(aside);
}

function statOrUndefined(file: string): { ino: number; mtimeMs: number } | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

interface LockHolder {
  pid: number;
  what: string;
  since?: string;
}

function readHolder(lockFile: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(lockFile, 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}

/** The live process holding the data directory's lock, if any (for `smsdrop status`). */
export function lockHolder(dataDir: string): LockHolder | undefined {
  const holder = readHolder(path.join(dataDir, 'smsdrop.lock'));
  return holder && isAlive(holder.pid) ? holder : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
