// smsdrop_journal_bytes on a daemon whose journal is PostgreSQL: the database's own size, as the
// journal's port reads it (StatusReads.size), not the size of an SQLite file the data directory
// does not have.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { openPool } from '../../src/pgjournal/schema.js';
import {
  httpUrlOf,
  type Proc,
  startDaemon,
  startSimulatorProcess,
  tempDir,
} from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe('smsdrop_journal_bytes on PostgreSQL', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const work = tempDir('pg-journal-bytes');
  let daemon: Proc | undefined;
  after(async () => {
    daemon?.kill('SIGKILL');
    await daemon?.exited;
    fs.rmSync(work, { recursive: true, force: true });
  });

  test("is the database's size, read at each scrape", async () => {
    const url = await pg15.cluster.freshDatabase();
    const sim = await startSimulatorProcess(work);
    after(() => sim.stop());
    daemon = await startDaemon({
      dataDir: path.join(work, 'data'),
      simulator: sim,
      env: { SMSDROP_DATABASE_URL: url, SMSDROP_HTTP: '127.0.0.1:0' },
    });
    const pool = openPool(url, 1);
    pool.on('error', () => undefined);
    after(() => pool.end());
    const databaseSize = async () =>
      Number(
        (await pool.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size'))
          .rows[0]!.size,
      );
    // The size may grow between two reads (the daemon writes): the scrape's lies between them.
    const before = await databaseSize();
    const metrics = await (await fetch(`${httpUrlOf(daemon)}/metrics`)).text();
    const later = await databaseSize();
    const shown = /^smsdrop_journal_bytes (\d+)$/m.exec(metrics);
    assert.ok(shown, metrics);
    const bytes = Number(shown[1]);
    assert.ok(before > 0);
    assert.ok(
      bytes >= before && bytes <= later,
      `smsdrop_journal_bytes ${bytes}, the database ${before}..${later} bytes`,
    );
    assert.ok(!fs.existsSync(path.join(work, 'data', 'journal.sqlite')), 'no SQLite journal');
  });
});
