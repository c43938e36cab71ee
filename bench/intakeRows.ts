// `node --import tsx bench/intakeRows.ts ROOT FILE`: intake alone (read, decode, csv-parse, check
// and normalise each row) over FILE through ROOT's src/intake (a checkout, e.g. the commit before
// a change extracted with `git archive`), no journal: timed from outside as a whole process, two
// checkouts in turn, the ratio of their CPU is the change's. Prints the rows and invalid rows.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [root, file] = process.argv.slice(2);
if (!root || !file) {
  process.stderr.write('usage: node --import tsx bench/intakeRows.ts ROOT FILE\n');
  process.exit(2);
}
const intake = (await import(
  pathToFileURL(path.join(path.resolve(root), 'src/intake/index.ts')).href
)) as typeof import('../src/intake/index.js');
let rows = 0;
let invalid = 0;
for await (const chunk of intake.readRows(file, {
  encoding: 'utf-8',
  allowInternational: false,
  defaultAppId: 'APPbench000000000000000000000001',
  decodedExactly: true,
  quoted: false,
})) {
  rows += chunk.length;
  for (const row of chunk) if (row.error !== undefined) invalid++;
}
process.stdout.write(`${JSON.stringify({ rows, invalid })}\n`);
