// Watching inbox/: a file is reported once its size has stopped changing for `stabilityMs`
// (chokidar's awaitWriteFinish), so a file still being copied or saved is not taken half-written
// unless the copy pauses for longer than that (the pipeline then refuses it as it grows).
// Names that editors and browsers use while writing (.part, ~$x...) are ignored until renamed; a
// rename shows up as a new file. Files already there at start are reported the same way.
// A file that does not end with a line break may be a copy paused inside its last row: it must
// stay unchanged TAIL_WAIT_FACTOR times longer before it is reported (settledTail).
// What is never taken is said once (onNotAFile): a folder, and a symbolic link to nothing, which
// chokidar reports not at all (it is looked for at start and whenever the folder changes).
import { openSync, closeSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type FSWatcher, watch } from 'chokidar';
import { isIgnoredName } from './folders.js';

export interface InboxWatcher {
  close(): Promise<void>;
}

export interface WatchOptions {
  stabilityMs: number;
  /** A file in inbox/ that has stopped growing (absolute path). */
  onFile(file: string): void;
  /** A stable file without a line break at its end waits `ms` more before it is reported. */
  onTailWait?(file: string, ms: number): void;
  onError(err: Error): void;
  /**
   * An entry of inbox/ that is never taken (`what`: "a folder", "a symbolic link to nothing"); told
   * once per entry.
   */
  onNotAFile?: (entry: string, what: string) => void;
}

/** How long a file must stay unchanged, and how often its size is looked at meanwhile. */
interface Timing {
  stabilityMs: number;
  pollMs: number;
}

/** Resolves once the initial scan is done and the watch is live. */
export async function watchInbox(inbox: string, options: WatchOptions): Promise<InboxWatcher> {
  const root = path.resolve(inbox);
  // Under 100 ms the polling of awaitWriteFinish would not see a pause between writes.
  const timing: Timing = {
    stabilityMs: Math.max(options.stabilityMs, 100),
    pollMs: Math.min(100, Math.max(options.stabilityMs / 4, 20)),
  };
  const watcher: FSWatcher = watch(root, {
    depth: 0,
    ignoreInitial: false,
    awaitWriteFinish: { stabilityThreshold: timing.stabilityMs, pollInterval: timing.pollMs },
    ignored: (file) => path.resolve(file) !== root && isIgnoredName(path.basename(file)),
    // Otherwise chokidar silently skips a file whose owner may not read it (mode 0o000, say): it
    // must be reported, so that it goes to failed/ with the reason (EACCES) instead of sitting in
    // inbox/ unnoticed. A file the daemon cannot read is refused by the pipeline either way.
    ignorePermissionErrors: true,
  });
  let closed = false;
  watcher.on('add', (file) => {
    const abs = path.resolve(file);
    if (path.dirname(abs) !== root) return;
    void settledTail(abs, timing, options, () => closed).then(() => {
      if (!closed) options.onFile(abs);
    });
  });
  watcher.on('error', (err) =>
    options.onError(err instanceof Error ? err : new Error(String(err))),
  );
  const notAFile = notAFileTeller(root, options.onNotAFile);
  watcher.on('addDir', (dir) => notAFile.folder(path.resolve(dir)));
  watcher.on('raw', () => notAFile.lookForBrokenLinks());
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  notAFile.lookForBrokenLinks();
  let closing: Promise<void> | undefined;
  return {
    close: () => {
      closed = true;
      return (closing ??= watcher.close());
    },
  };
}

/** Tells each folder and link to nothing in inbox/ once (ignored names left out). */
function notAFileTeller(root: string, tell: WatchOptions['onNotAFile']) {
  const told = new Set<string>();
  const once = (entry: string, what: string) => {
    if (!tell || told.has(entry) || isIgnoredName(path.basename(entry))) return;
    told.add(entry);
    tell(entry, what);
  };
  return {
    folder: (dir: string) => {
      if (dir !== root && path.dirname(dir) === root) once(dir, 'a folder');
    },
    lookForBrokenLinks: () => {
      if (!tell) return;
      for (const link of brokenLinksIn(root)) once(link, 'a symbolic link to nothing');
    },
  };
}

/** Symbolic links directly in `dir` whose target does not exist; [] when dir cannot be read. */
function brokenLinksIn(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isSymbolicLink())
      .map((entry) => path.join(dir, entry.name))
      .filter((link) => {
        try {
          statSync(link);
          return false;
        } catch {
          return true;
        }
      });
  } catch {
    return [];
  }
}

/**
 * How many stability periods more a file without a line break at its end must stay unchanged.
 * Excel and most tools end a CSV file with one; a copy that paused inside a row does not, and
 * taken then, its last row would be sent cut short (the file would then be refused as it grows:
 * pipeline/index.ts).
 */
export const TAIL_WAIT_FACTOR = 4;

/**
 * Resolves once the file has not changed for TAIL_WAIT_FACTOR x stabilityMs, or for stabilityMs
 * once it ends with a line break (it may have grown again: stable again first), or is gone.
 */
async function settledTail(
  file: string,
  { stabilityMs, pollMs }: Timing,
  options: WatchOptions,
  isClosed: () => boolean,
): Promise<void> {
  let last = tailOf(file);
  if (last === undefined || last.complete) return;
  const waitMs = stabilityMs * TAIL_WAIT_FACTOR;
  options.onTailWait?.(file, waitMs);
  let unchangedSince = Date.now();
  while (!isClosed() && Date.now() - unchangedSince < (last.complete ? stabilityMs : waitMs)) {
    await sleep(pollMs);
    const now = tailOf(file);
    if (now === undefined) return;
    if (now.size !== last.size) unchangedSince = Date.now();
    last = now;
  }
}

/**
 * The file's size and whether its last byte ends a line (an empty file counts as complete);
 * undefined when it cannot be read.
 */
function tailOf(file: string): { size: number; complete: boolean } | undefined {
  try {
    const { size } = statSync(file);
    if (size === 0) return { size, complete: true };
    const fd = openSync(file, 'r');
    try {
      const byte = Buffer.alloc(1);
      readSync(fd, byte, 0, 1, size - 1);
      return { size, complete: byte[0] === 0x0a || byte[0] === 0x0d };
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined; // gone, or unreadable: taken at once, and the pipeline says why
  }
}
