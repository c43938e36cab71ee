// Which node does what of each unfinished file, when several nodes share a PostgreSQL journal: the
// node reading it (which files it when done) and the batches each node holds of it now. An
// operator asks this when a node is slow, gone or drained; a journal one process uses (SQLite)
// has no such read, and status shows nothing of it.
import type { FileNodes, StatusReads } from '../ports/reads.js';
import type { FileProgress } from './fileState.js';

/** `files`, each with its reader and its batches' holders, where the journal knows them. */
export async function withNodes(
  reads: Pick<StatusReads, 'fileNodes'>,
  files: FileProgress[],
): Promise<FileProgress[]> {
  if (!reads.fileNodes || files.length === 0) return files;
  const nodes = await reads.fileNodes(files.map((f) => f.id));
  const of = new Map<number, FileNodes>(nodes.map((n) => [n.fileId, n]));
  return files.map((f) => ({
    ...f,
    read_by: of.get(f.id)?.reader ?? null,
    batches_held_by: of.get(f.id)?.held ?? [],
  }));
}

/** One line per file: who reads it and who holds its batches (none: no line at all). */
export function fileNodesLines(files: readonly FileProgress[]): string[] {
  return files
    .filter((f) => f.read_by !== undefined)
    .map((f) => {
      const reader = f.read_by === null ? 'no node reads it now' : `read by ${f.read_by}`;
      const held = f.batches_held_by ?? [];
      const holders =
        held.length === 0
          ? 'no batch held'
          : `batches held: ${held.map((h) => `${h.node} ${h.batches}`).join(', ')}`;
      return `${f.name} (id ${f.id}): ${reader}; ${holders}`;
    });
}
