// `node --import tsx bench/planRows.ts ROOT FILE`: intake and the planner over FILE through ROOT's
// src (a checkout, e.g. extracted with `git archive`), into a fresh journal in a temporary folder:
// read, check, group, place in batches and journal every row, as `send` does before sending.
// Timed from outside as a whole process, two checkouts in turn: the ratio of their CPU is the
// change's, diluted by what both do alike (parsing, SQLite).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [root, file] = process.argv.slice(2);
if (!root || !file) {
  process.stderr.write('usage: node --import tsx bench/planRows.ts ROOT FILE\n');
  process.exit(2);
}
const load = async <T>(module: string): Promise<T> =>
  (await import(pathToFileURL(path.join(path.resolve(root), 'src', module)).href)) as T;
const { readRows } = await load<typeof import('../src/intake/index.js')>('intake/index.ts');
const { openScratch } = await load<typeof import('../src/journal/index.js')>('journal/index.ts');
const { createRowWriter } =
  await load<typeof import('../src/plan/rowWriter.js')>('plan/rowWriter.ts');
const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-plan-bench-'));
try {
  const journal = await openScratch(path.join(dir, 'journal.sqlite'));
  const size = statSync(file).size;
  const record = await journal.files.create({
    sha256: 'bench',
    name: 'bench.csv',
    path: file,
    size,
    encoding: 'utf-8',
  });
  const writer = createRowWriter(journal.files.planStore(record.id), {
    maxPerRequest: 200,
    fileBytes: size,
  });
  for await (const chunk of readRows(file, {
    encoding: 'utf-8',
    allowInternational: false,
    defaultAppId: 'APPbench000000000000000000000001',
    decodedExactly: true,
    quoted: false,
  }))
    await writer.write(chunk);
  process.stdout.write(`${JSON.stringify(await writer.finish())}\n`);
  await journal.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
