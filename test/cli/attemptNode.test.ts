// Each attempt names the process that made it (attempts.node), on SQLite too: one server, but each
// start is another process, and an operator reading the journal after a restart can tell which
// life sent what. `status` there shows no node of a file: one process does everything.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { contactsCsv, CREDENTIALS, startSimulatorProcess, tempDir } from '../daemon/helpers.js';
import { withSqliteFile } from '../sqliteFile.js';
import { smsdrop } from './helpers.js';

describe('the node of an attempt, on SQLite', () => {
  const work = tempDir('attempt-node');
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  test("a send's attempts name its process; status names no node", async () => {
    const sim = await startSimulatorProcess(work);
    after(() => sim.stop());
    const csv = path.join(work, 'list.csv');
    fs.writeFileSync(csv, contactsCsv(12));
    const env = { ...CREDENTIALS, SMSDROP_BASE_URL: sim.url, SMSDROP_DATA_DIR: work };
    const sent = await smsdrop(['send', csv], env);
    assert.equal(sent.status, 0, sent.stderr);
    const nodes = withSqliteFile(
      work,
      // the process is kept once, in processes, each attempt referring to it
      (db) =>
        db
          .prepare(
            'SELECT DISTINCT p.name AS node FROM attempts a JOIN processes p ON p.id = a.node',
          )
          .all() as { node: unknown }[],
    );
    assert.equal(nodes.length, 1, JSON.stringify(nodes));
    assert.match(String(nodes[0]!.node), /^.+:\d+$/, 'host and pid');
    const status = await smsdrop(['status', '--json'], env);
    assert.equal(status.status, 0, status.stderr);
    assert.doesNotMatch(status.stdout, /read_by|batches_held_by/);
  });
});
