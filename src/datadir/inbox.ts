// What waits in inbox/, read from the folder (so a file the daemon has not taken is seen too), and
// which names in it are not files to take.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Names being written or owned by an editor: left alone until renamed. */
export function isIgnoredName(name: string): boolean {
  return name.startsWith('.') || name.startsWith('~$') || /\.(part|tmp|crdownload)$/i.test(name);
}

/** A file waiting in inbox/: since its last change there (a move into it, or a write). */
export interface WaitingFile {
  name: string;
  bytes: number;
  since: string;
  waiting_seconds: number;
}

/** The files of inbox/ the daemon would take, longest waiting first; [] when it cannot be read. */
export function filesWaitingIn(inbox: string, now: number = Date.now()): WaitingFile[] {
  let names: string[];
  try {
    names = readdirSync(inbox).filter((name) => !isIgnoredName(name));
  } catch {
    return [];
  }
  return names
    .flatMap((name) => {
      try {
        const stats = statSync(path.join(inbox, name));
        return stats.isFile() ? [{ name, bytes: stats.size, changed: stats.ctimeMs }] : [];
      } catch {
        return []; // gone meanwhile, or a link to nothing
      }
    })
    .sort((a, b) => a.changed - b.changed || a.name.localeCompare(b.name))
    .map(({ name, bytes, changed }) => ({
      name,
      bytes,
      since: new Date(changed).toISOString(),
      waiting_seconds: Math.max(0, Math.floor((now - changed) / 1000)),
    }));
}
