// One writer per journal: the daemon and `smsdrop send` take an exclusive lock file in the data
// directory, so two processes can never send the same batches. A lock left by a dead process
// (crash, SIGKILL) is noticed by its pid and taken over. Pids are only meaningful on one machine
// (one pid namespace): do not share a data directory between hosts or containers.
import {
  linkSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { SmsdropError } from '../errors.js';

export class LockedError extends SmsdropError {
  constructor(
    readonly lockFile: string,
    readonly holderPid: number,
    /** What the holder said it is (acquireLock's `what`: 'smsdrop run (daemon)'…). */
    readonly holder: string,
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
    if (createLock(lockFile, what)) {
      removeDeadDrafts(dataDir);
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
    }
    const seen = statOrUndefined(lockFile);
    const holder = readHolder(lockFile);
    if (holder && holder.pid !== process.pid && isAlive(holder.pid))
      throw new LockedError(lockFile, holder.pid, holder.what);
    // No readable holder: locks appear whole (createLock), so this one is broken, not being made.
    if (seen) removeStaleLock(lockFile, seen.ino);
  }
  throw new SmsdropError(
    'E_DATA_DIR_LOCKED',
    `cannot take the lock ${lockFile}: another process keeps taking it`,
  );
}

const DRAFT = 'smsdrop.lock.new-';

/**
 * Creates the lock file with its holder in one step, a link to a file written first; false if a
 * lock is there. Opened, then written, a lock was empty in between: a process killed there kept
 * every start out for 5 s (each exiting 2 at once under a supervisor), as the chaos run found.
 */
function createLock(lockFile: string, what: string): boolean {
  const draft = path.join(path.dirname(lockFile), `${DRAFT}${process.pid}`);
  writeFileSync(draft, JSON.stringify({ pid: process.pid, what, since: new Date().toISOString() }));
  try {
    linkSync(draft, lockFile);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(draft);
  }
}

/** The drafts of processes killed between writing and removing them (createLock). */
function removeDeadDrafts(dataDir: string): void {
  for (const name of readdirSync(dataDir)) {
    if (!name.startsWith(DRAFT) || isAlive(Number(name.slice(DRAFT.length)))) continue;
    try {
      unlinkSync(path.join(dataDir, name));
    } catch {
      // removed by another process meanwhile
    }
  }
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
