// Which files of inbox/ are new and stable, decided from the folder itself, not from the order of
// watcher events. An event (or a rescan) only says "look at this path": the path is stat-ed, and a
// file there that was not reported yet is followed until it has not changed for the stability
// time, then reported once. A file is known by its identity (device, inode, size, mtime and ctime:
// moving or writing a file into inbox/ sets its ctime), so a file re-created under a name just
// taken is a new file whatever the watcher called its arrival ("change" for chokidar when the name
// was re-used before it saw it go, or no event at all on a network share).
import { closeSync, openSync, readdirSync, readSync, type Stats, statSync } from 'node:fs';
import path from 'node:path';
import { isIgnoredName } from '../datadir/inbox.js';

/** How a file first came to be looked at: a watcher event, the scan at start, or the rescan. */
export type FoundBy = 'event' | 'start' | 'rescan';

export interface StableFileOptions {
  stabilityMs: number;
  /** How often a followed file is stat-ed. */
  pollMs: number;
  onFile(file: string, foundBy: FoundBy): void;
  /** A stable file without a line break at its end waits `ms` more before it is reported. */
  onTailWait?(file: string, ms: number): void;
}

export interface StableFiles {
  /** Look at `file` now (an absolute path directly in the folder). */
  look(file: string, foundBy: FoundBy): void;
  /** Look at every entry of the folder. */
  scan(foundBy: FoundBy): void;
  stop(): void;
}

/**
 * How many stability periods a file without a line break at its end must stay unchanged. Excel
 * and most tools end a CSV file with one; a copy that paused inside a row does not, and taken then,
 * its last row would be sent cut short (the file would then be refused as it grows:
 * pipeline/index.ts).
 */
export const TAIL_WAIT_FACTOR = 4;

interface Followed {
  identity: string;
  unchangedSince: number;
  foundBy: FoundBy;
  toldTail: boolean;
}

export function followStableFiles(root: string, options: StableFileOptions): StableFiles {
  const followed = new Map<string, Followed>();
  /** Files reported, by path: the same identity there is not reported again. */
  const reported = new Map<string, string>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const look = (file: string, foundBy: FoundBy) => {
    if (stopped || path.dirname(file) !== root || isIgnoredName(path.basename(file))) return;
    const identity = identityOf(file);
    if (identity === undefined) {
      reported.delete(file);
      return;
    }
    if (reported.get(file) === identity || followed.has(file)) return;
    reported.delete(file);
    followed.set(file, { identity, unchangedSince: Date.now(), foundBy, toldTail: false });
    timer ??= setTimeout(poll, options.pollMs);
  };

  const poll = () => {
    timer = undefined;
    try {
      for (const [file, entry] of followed) if (!stopped) check(file, entry);
    } finally {
      if (!stopped && followed.size > 0) timer = setTimeout(poll, options.pollMs);
    }
  };

  const check = (file: string, entry: Followed) => {
    const identity = identityOf(file);
    if (identity === undefined) return void followed.delete(file);
    if (!isStable(file, entry, identity, options)) return;
    followed.delete(file);
    reported.set(file, identity);
    options.onFile(file, entry.foundBy);
  };

  const scan = (foundBy: FoundBy) => {
    const names = namesIn(root);
    if (names === undefined) return;
    for (const file of reported.keys()) if (!names.has(path.basename(file))) reported.delete(file);
    for (const name of names) look(path.join(root, name), foundBy);
  };

  return {
    look,
    scan,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * The followed file has not changed for the stability time (TAIL_WAIT_FACTOR times that when it
 * does not end with a line break, said once). `identity`: what it is now.
 */
function isStable(
  file: string,
  entry: Followed,
  identity: string,
  options: StableFileOptions,
): boolean {
  const now = Date.now();
  if (identity !== entry.identity) {
    entry.identity = identity;
    entry.unchangedSince = now;
    return false;
  }
  const unchanged = now - entry.unchangedSince;
  if (unchanged < options.stabilityMs) return false;
  const waitMs = options.stabilityMs * TAIL_WAIT_FACTOR;
  if (unchanged < waitMs && endsInsideALine(file)) {
    if (!entry.toldTail) options.onTailWait?.(file, waitMs - unchanged);
    entry.toldTail = true;
    return false;
  }
  return true;
}

/** A file's identity, or undefined when nothing readable as a file is there (links followed). */
function identityOf(file: string): string | undefined {
  let stats: Stats;
  try {
    stats = statSync(file);
  } catch {
    return undefined;
  }
  if (!stats.isFile()) return undefined;
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

function namesIn(dir: string): Set<string> | undefined {
  try {
    return new Set(readdirSync(dir));
  } catch {
    return undefined;
  }
}

/**
 * The file's last byte does not end a line. An empty file, and one that cannot be read (taken at
 * once, the pipeline then says why), count as complete.
 */
function endsInsideALine(file: string): boolean {
  try {
    const { size } = statSync(file);
    if (size === 0) return false;
    const fd = openSync(file, 'r');
    try {
      const byte = Buffer.alloc(1);
      readSync(fd, byte, 0, 1, size - 1);
      return byte[0] !== 0x0a && byte[0] !== 0x0d;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}
