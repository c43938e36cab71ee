// `smsdrop status` and `report` without SMSDROP_DATABASE_URL on the data directory of a node whose
// journal is PostgreSQL: the data directory's own record (journal.json, written when the node
// opened its journal) says where the journal is, in one line with exit 2, never the password;
// not "journal none yet". A real daemon on a real PostgreSQL, the real CLI.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { cleanEnv, startDaemon, startProcess, tempDir } from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe(
  "status finds the journal from the data directory's record",
  { skip: postgresMissing() },
  () => {
    const pg15 = usePostgres();
    const work = tempDir('pg-journal-record');
    after(() => fs.rmSync(work, { recursive: true, force: true }));

    test('status and report say where the journal is: exit 2, one line, no password', async () => {
      const dataDir = path.join(work, 'node');
      const url = (await pg15.cluster.freshDatabase()).replace('postgres@', 'postgres:s3cret@');
      const daemon = await startDaemon({ dataDir, env: { SMSDROP_DATABASE_URL: url } });
      daemon.kill('SIGTERM');
      assert.deepEqual(await daemon.exited, { code: 0, signal: null }, daemon.output());

      for (const args of [['status'], ['report', '1']]) {
        const cli = startProcess(args, cleanEnv({ SMSDROP_DATA_DIR: dataDir }));
        assert.deepEqual(await cli.exited, { code: 2, signal: null }, cli.output());
        const lines = cli.output().trim().split('\n');
        assert.equal(lines.length, 1, cli.output());
        assert.match(
          lines[0]!,
          new RegExp(
            `^smsdrop: E_JOURNAL_POSTGRES: this data directory's journal is PostgreSQL at 127\\.0\\.0\\.1:${pg15.cluster.port}/test_1 \\(user postgres\\): set SMSDROP_DATABASE_URL$`,
          ),
        );
      }
      assert.doesNotMatch(fs.readFileSync(path.join(dataDir, 'journal.json'), 'utf8'), /s3cret/);
    });
  },
);
