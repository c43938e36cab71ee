// How far this process has read a file, from the system's own record of its descriptors: what
// the progress bar of `send` and the journal's read_bytes (status, the progress line) show while
// a file is read, without the reader having to say.
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';

/**
 * How far this process has read `file` with a sequential reader: the largest file position of its
 * descriptors open on it (Linux's /proc/self/fdinfo). Intake reads the file as a stream, which
 * moves its descriptor's position; the hash and the group count read at given offsets, which
 * leaves theirs at 0. Undefined where /proc cannot say.
 */
export function bytesRead(file: string): number | undefined {
  try {
    const target = realpathSync(file);
    let most: number | undefined;
    for (const fd of readdirSync('/proc/self/fd')) {
      let link: string;
      try {
        link = readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        continue; // closed meanwhile
      }
      if (link !== target) continue;
      const pos = /^pos:\s*(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (pos !== undefined) most = Math.max(most ?? 0, Number(pos));
    }
    return most ?? 0;
  } catch {
    return undefined;
  }
}
