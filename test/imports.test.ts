// The import graph of src/ has no circle (issue 31), among its files or among its folders, but for
// the ones listed here that are still being taken apart. Value imports first: those are the
// circles that run (scripts/importGraph.mjs reads the graph). The lists only shrink: a circle not
// listed fails, and so does a listed one that is gone (take it off the list). Then type imports
// too, with no list: a circle of types alone means two files or folders share a vocabulary that
// belongs to one of them (or to src/ports/), and it goes there.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { circles, fileGraph, folderGraph } from '../scripts/importGraph.mjs';

/** Circles among files of src/ still there, each sorted (paths relative to src/). */
const KNOWN_FILE_CIRCLES: readonly (readonly string[])[] = [];

/** Circles among folders of src/ still there, each sorted (a file directly in src/ is a folder). */
const KNOWN_FOLDER_CIRCLES: readonly (readonly string[])[] = [];

const src = fileURLToPath(new URL('../src', import.meta.url));
const files = fileGraph(src);
const withTypes = fileGraph(src, { types: true });
const folders = folderGraph(files);

const keyOf = (set: readonly string[]): string => `{${set.join(', ')}}`;

/** What `found` has that `known` lacks, and the other way round. */
function compare(
  found: string[][],
  known: readonly (readonly string[])[],
): { unknown: string[]; gone: string[] } {
  const foundKeys = new Set(found.map(keyOf));
  const knownKeys = new Set(known.map(keyOf));
  return {
    unknown: [...foundKeys].filter((key) => !knownKeys.has(key)),
    gone: [...knownKeys].filter((key) => !foundKeys.has(key)),
  };
}

/** The imports that make each edge inside a folder circle: what to change to break it. */
function folderEdges(sets: string[], graph = folders): string {
  const members = new Set(sets.flatMap((key) => key.slice(1, -1).split(', ')));
  const lines: string[] = [];
  for (const [from, to] of graph)
    for (const [other, why] of to)
      if (members.has(from) && members.has(other))
        lines.push(`${from} -> ${other}: ${why.join('; ')}`);
  return lines.join('\n');
}

/** The value imports among the files of each circle. */
function fileEdges(sets: string[], graph = files): string {
  const members = new Set(sets.flatMap((key) => key.slice(1, -1).split(', ')));
  const lines: string[] = [];
  for (const [from, targets] of graph)
    for (const target of targets)
      if (members.has(from) && members.has(target)) lines.push(`${from} -> ${target}`);
  return lines.join('\n');
}

describe('import circles in src/', () => {
  it('reads the graph: every file of src/ is in it, with the imports it makes', () => {
    assert.ok(files.size > 50, `only ${files.size} files read`);
    assert.ok(files.get('journal/open.ts')?.has('journal/connection.ts'));
  });

  it('no circle among files but the known ones', () => {
    const { unknown } = compare(circles(files), KNOWN_FILE_CIRCLES);
    assert.deepEqual(unknown, [], `new file circles; the imports in them:\n${fileEdges(unknown)}`);
  });

  it('no circle among folders but the known ones', () => {
    const { unknown } = compare(circles(folders), KNOWN_FOLDER_CIRCLES);
    assert.deepEqual(
      unknown,
      [],
      `new folder circles; the imports in them:\n${folderEdges(unknown)}`,
    );
  });

  it('every known circle is still there (once broken, it comes off the list)', () => {
    assert.deepEqual(compare(circles(files), KNOWN_FILE_CIRCLES).gone, []);
    assert.deepEqual(compare(circles(folders), KNOWN_FOLDER_CIRCLES).gone, []);
  });
});

describe('import circles in src/, type imports included', () => {
  it('reads the type imports too', () => {
    // ports/files.ts names PlanStore as a type only: absent from the value graph, there in this.
    assert.equal(files.get('ports/files.ts')?.has('ports/plan.ts'), false);
    assert.equal(withTypes.get('ports/files.ts')?.has('ports/plan.ts'), true);
  });

  it('no circle among files', () => {
    const found = circles(withTypes).map(keyOf);
    assert.deepEqual(
      found,
      [],
      `file circles; the imports in them:\n${fileEdges(found, withTypes)}`,
    );
  });

  it('no circle among folders', () => {
    const folders = folderGraph(withTypes);
    const found = circles(folders).map(keyOf);
    assert.deepEqual(
      found,
      [],
      `folder circles; the imports in them:\n${folderEdges(found, folders)}`,
    );
  });
});
