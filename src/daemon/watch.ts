// Watching inbox/: a file is reported once its size has stopped changing for `stabilityMs`
// (chokidar's awaitWriteFinish), so a file still being copied or saved is never taken half-written.
// Names that editors and browsers use while writing (.part, ~$x...) are ignored until renamed; a
// rename shows up as a new file. Files already there at start are reported the same way.
import path from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import { isIgnoredName } from './folders.js';

export interface InboxWatcher {
  close(): Promise<void>;
}

export interface WatchOptions {
  stabilityMs: number;
  /** A file in inbox/ that has stopped growing (absolute path). */
  onFile(file: string): void;
  onError(err: Error): void;
}

/** Resolves once the initial scan is done and the watch is live. */
export async function watchInbox(inbox: string, options: WatchOptions): Promise<InboxWatcher> {
  const root = path.resolve(inbox);
  const watcher: FSWatcher = watch(root, {
    depth: 0,
    ignoreInitial: false,
    // Under 100 ms the polling of awaitWriteFinish would not see a pause between writes.
    awaitWriteFinish: { stabilityThreshold: Math.max(options.stabilityMs, 100), pollInterval: Math.min(100, Math.max(options.stabilityMs / 4, 20)) },
    ignored: (file) => path.resolve(file) !== root && isIgnoredName(path.basename(file)),
    // Otherwise chokidar silently skips a file whose owner may not read it (mode 0o000, say): it
    // must be reported, so that it goes to failed/ with the reason (EACCES) instead of sitting in
    // inbox/ unnoticed. A file the daemon cannot read is refused by the pipeline either way.
    ignorePermissionErrors: true,
  });
  watcher.on('add', (file) => {
    if (path.dirname(path.resolve(file)) === root) options.onFile(path.resolve(file));
  });
  watcher.on('error', (err) => options.onError(err instanceof Error ? err : new Error(String(err))));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  let closing: Promise<void> | undefined;
  return { close: () => (closing ??= watcher.close()) };
}
