// The daemon's side of a lapsed claim (src/daemon/lifecycle.ts): a file whose intake another node
// took over is neither refused nor filed under failed/; its copy waits in processing/ and is
// looked at again, as the 'elsewhere' outcome. The real runtime on a real PostgreSQL journal.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import type { FileLife } from '../../src/daemon/fileLife.js';
import { prepareFolders } from '../../src/daemon/folders.js';
import { handleFile } from '../../src/daemon/lifecycle.js';
import { silentLogger } from '../../src/log/logger.js';
import { openPool } from '../../src/pgjournal/schema.js';
import { openRuntime } from '../../src/pipeline/runtime.js';
import { contactsCsv, listDir, tempDir } from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe('a daemon whose file another node took over', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  /** Node A's daemon reads a file; once its first commit is seen, `lapse` runs (SQL). */
  async function readWhileLapsing(lapse: string) {
    const url = await pg15.cluster.freshDatabase();
    const dir = tempDir('pg-claim-lapse');
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const folders = prepareFolders(path.join(dir, 'data'));
    const config = loadConfig({
      env: {
        SMSDROP_DATA_DIR: folders.root,
        SMSDROP_DATABASE_URL: url,
        SMSDROP_NODE_ID: 'node-a',
      },
      configDir: dir,
    });
    const runtime = await openRuntime(config, { role: 'test', log: silentLogger() });
    after(() => runtime.close());
    const life: FileLife = {
      folders,
      ctx: runtime.context,
      files: runtime.journal.files,
      outbox: runtime.journal.outbox,
      log: silentLogger(),
      active: new Map(),
      busy: new Map(),
      cooldown: async () => {},
      fresh: new Set<string>(),
    };
    fs.writeFileSync(path.join(folders.processing, 'big.csv'), contactsCsv(40_000));

    const sql = openPool(url, 1);
    sql.on('error', () => undefined);
    after(() => sql.end());
    let takenOver = false;
    const takeOver = (async () => {
      // Once the intake's first commit is seen: node B claims the file (A's claim "passed").
      for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(20)) {
        const { rows } = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM rows');
        if (rows[0]!.n === 0) continue;
        const taken = await sql.query(lapse);
        takenOver = taken.rowCount === 1;
        return;
      }
    })();
    const result = await handleFile(life, 'big.csv');
    await takeOver;
    assert.ok(takenOver, 'the claim lapsed while A read the file');
    assert.ok(result?.again, 'the copy is looked at again later');
    assert.deepEqual(listDir(folders.processing), ['big.csv']);
    assert.deepEqual(listDir(folders.failed), []);
    assert.deepEqual(listDir(folders.done), []);
    const { rows } = await sql.query<{ status: string }>('SELECT status FROM files');
    assert.deepEqual(rows, [{ status: 'intake' }], 'not refused');
  }

  test('taken over by another node: the copy waits in processing/, not refused', async () => {
    await readWhileLapsing("UPDATE file_readers SET node = 'node-b'");
  });

  test('its claim passed, nobody took it yet: the same', async () => {
    await readWhileLapsing("UPDATE file_readers SET until = clock_timestamp() - interval '1 s'");
  });
});
