// How far a file being read has been read, noted in the journal (files.read_bytes) while intake
// reads it: until its rows are counted, status and the progress line estimate them from it.
import type { FileStore } from '../ports/index.js';
import { bytesRead } from '../intake/readPosition.js';

/** How often how far the file has been read is noted in the journal. */
const READ_NOTE_MS = 1_000;

/**
 * Notes in the journal, now and then, how far the file has been read (read_bytes): until its rows
 * are counted, status and the progress line estimate them from it. A note that fails is no
 * reason to stop reading: the next one tries again.
 */
export function noteReading(
  files: Pick<FileStore, 'noteReadBytes'>,
  fileId: number,
  filePath: string,
): { stop(): void } {
  let noting = false;
  const timer = setInterval(() => {
    const bytes = bytesRead(filePath);
    if (noting || bytes === undefined || bytes === 0) return;
    noting = true;
    files
      .noteReadBytes(fileId, bytes)
      .catch(() => {})
      .finally(() => (noting = false));
  }, READ_NOTE_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
