// What an operator sees of a node on a PostgreSQL journal: the start-up line names the journal
// (host, database) and the node, never the URL's password; a login the server refuses is
// E_DATABASE_AUTH, one line and exit 2, not E_DATABASE_UNREACHABLE.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { cleanEnv, startDaemon, startProcess, tempDir } from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe("an operator's view of a PostgreSQL node", { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const dir = tempDir('pg-operator');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('the start-up line names the journal and the node, never the password', async () => {
    const url = new URL(await pg15.cluster.freshDatabase());
    url.password = 'n0tTheP4ssword'; // the test cluster trusts loopback: any password goes
    const daemon = await startDaemon({
      dataDir: path.join(dir, 'named'),
      env: { SMSDROP_DATABASE_URL: url.href, SMSDROP_NODE_ID: 'node-a' },
    });
    after(async () => {
      daemon.kill('SIGKILL');
      await daemon.exited;
    });
    const line =
      daemon
        .output()
        .split('\n')
        .find((l) => /smsdrop run: pid/.test(l)) ?? '';
    assert.match(line, new RegExp(`journal PostgreSQL host 127\\.0\\.0\\.1:${url.port}`), line);
    assert.match(line, new RegExp(`database ${url.pathname.slice(1)}; node node-a`), line);
    assert.doesNotMatch(daemon.output(), /n0tTheP4ssword/);

    const status = startProcess(
      ['status'],
      cleanEnv({ SMSDROP_DATA_DIR: path.join(dir, 'named'), SMSDROP_DATABASE_URL: url.href }),
    );
    assert.equal((await status.exited).code, 0, status.output());
    const journal =
      status
        .output()
        .split('\n')
        .find((l) => /^journal /.test(l)) ?? '';
    assert.match(journal, /PostgreSQL database/, status.output());
    assert.doesNotMatch(journal, /WAL|intents|free inside/, 'SQLite-only figures');
  });

  test('a login the server refuses is E_DATABASE_AUTH, one line, exit 2', async () => {
    const url = new URL(pg15.cluster.url);
    url.username = 'nobody_here';
    url.password = 's3cretW0rd';
    const status = startProcess(
      ['status'],
      cleanEnv({ SMSDROP_DATA_DIR: path.join(dir, 'refused'), SMSDROP_DATABASE_URL: url.href }),
    );
    const { code } = await status.exited;
    assert.equal(code, 2, status.output());
    assert.match(status.output(), /E_DATABASE_AUTH/);
    assert.doesNotMatch(status.output(), /E_DATABASE_UNREACHABLE|s3cretW0rd|\n\s+at /);
  });

  test('a node started while PostgreSQL is down says it waits, then runs', async () => {
    const url = await pg15.cluster.freshDatabase();
    process.kill(pg15.cluster.pid, 'SIGQUIT'); // pg_ctl stop -m immediate
    const daemon = startProcess(
      ['run'],
      cleanEnv({ SMSDROP_DATA_DIR: path.join(dir, 'waiting'), SMSDROP_DATABASE_URL: url }),
    );
    after(async () => {
      daemon.kill('SIGKILL');
      await daemon.exited;
    });
    await daemon.waitFor(
      /waiting up to 60 s for the journal's server: cannot use the PostgreSQL journal/,
    );
    await pg15.cluster.restart();
    await daemon.waitFor(/watching .*inbox/, 60_000);
  });
});
