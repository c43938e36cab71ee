// Watching inbox/: a file is reported once it has not changed for `stabilityMs` (stable.ts), so a
// file still being copied or saved is not taken half-written unless the copy pauses for longer than
// that (the pipeline then refuses it as it grows). Names that editors and browsers use while
// writing (.part, ~$x...) are ignored until renamed; a rename shows up as a new file. Files already
// there at start are reported the same way.
// chokidar's events, whatever their kind (a name re-used at once comes as "change", or as nothing),
// only say which path to look at; what is there decides. inbox/ is also scanned every `rescanMs`,
// as a safety net: a file no event announced is reported as found by the rescan. On a network
// share (SMB/CIFS, NFS), where the files other machines write raise no event here, `pollMs` makes
// chokidar poll instead.
// A file that does not end with a line break may be a copy paused inside its last row: it must
// stay unchanged TAIL_WAIT_FACTOR times longer before it is reported.
// What is never taken is said once (onNotAFile): a folder, and a symbolic link to nothing, which
// chokidar reports not at all (it is looked for at start and whenever the folder changes).
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import { isIgnoredName } from '../datadir/inbox.js';
import { followStableFiles, type FoundBy } from './stable.js';

export { TAIL_WAIT_FACTOR, type FoundBy } from './stable.js';

export interface InboxWatcher {
  close(): Promise<void>;
}

export interface WatchOptions {
  stabilityMs: number;
  /** How often inbox/ is scanned whatever the events say. */
  rescanMs: number;
  /** 0: events (inotify); otherwise chokidar polls every `pollMs` (folders without events). */
  pollMs?: number;
  /** A file in inbox/ that has stopped changing (absolute path), and how it was first seen. */
  onFile(file: string, foundBy: FoundBy): void;
  /** A stable file without a line break at its end waits `ms` more before it is reported. */
  onTailWait?(file: string, ms: number): void;
  onError(err: Error): void;
  /**
   * An entry of inbox/ that is never taken (`what`: "a folder", "a symbolic link to nothing"); told
   * once per entry.
   */
  onNotAFile?: (entry: string, what: string) => void;
}

/** Resolves once the initial scan is done and the watch is live. */
export async function watchInbox(inbox: string, options: WatchOptions): Promise<InboxWatcher> {
  const root = path.resolve(inbox);
  const stable = followStableFiles(root, {
    // Under 100 ms a stat every pollMs would not see a pause between writes.
    stabilityMs: Math.max(options.stabilityMs, 100),
    pollMs: Math.min(100, Math.max(options.stabilityMs / 4, 20)),
    onFile: (file, foundBy) => options.onFile(file, foundBy),
    onTailWait: (file, ms) => options.onTailWait?.(file, ms),
  });
  const polling = (options.pollMs ?? 0) > 0;
  const watcher: FSWatcher = watch(root, {
    depth: 0,
    // What is there at start is found by the scan below.
    ignoreInitial: true,
    ignored: (file) => path.resolve(file) !== root && isIgnoredName(path.basename(file)),
    // Otherwise chokidar silently skips a file whose owner may not read it (mode 0o000, say): it
    // must be reported, so that it goes to failed/ with the reason (EACCES) instead of sitting in
    // inbox/ unnoticed. A file the daemon cannot read is refused by the pipeline either way.
    ignorePermissionErrors: true,
    ...(polling
      ? { usePolling: true, interval: options.pollMs, binaryInterval: options.pollMs }
      : {}),
  });
  const notAFile = notAFileTeller(root, options.onNotAFile);
  for (const event of ['add', 'change', 'unlink'] as const)
    watcher.on(event, (file) => stable.look(path.resolve(file), 'event'));
  watcher.on('raw', (_event, evPath, details) => {
    const file = rawTarget(root, evPath, details);
    if (file) stable.look(file, 'event');
    notAFile.lookForBrokenLinks();
  });
  watcher.on('error', (err) =>
    options.onError(err instanceof Error ? err : new Error(String(err))),
  );
  watcher.on('addDir', (dir) => notAFile.folder(path.resolve(dir)));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  const scan = (foundBy: FoundBy) => {
    stable.scan(foundBy);
    for (const entry of foldersIn(root)) notAFile.folder(entry);
    notAFile.lookForBrokenLinks();
  };
  scan('start');
  const rescan = setInterval(() => scan('rescan'), options.rescanMs);
  let closing: Promise<void> | undefined;
  return {
    close: () => {
      clearInterval(rescan);
      stable.stop();
      return (closing ??= watcher.close());
    },
  };
}

/**
 * The path in inbox/ a raw event is about: the file a file's own watcher watches, or the name the
 * folder's watcher gives.
 */
function rawTarget(root: string, evPath: unknown, details: unknown): string | undefined {
  const watched = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
  if (typeof watched === 'string' && path.resolve(watched) !== root) return path.resolve(watched);
  return typeof evPath === 'string' && evPath !== '' ? path.resolve(root, evPath) : undefined;
}

/** Folders directly in `dir`; [] when it cannot be read. */
function foldersIn(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => path.join(dir, entry.name));
  } catch {
    return [];
  }
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
