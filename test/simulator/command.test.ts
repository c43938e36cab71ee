// `smsdrop simulate` as a real child process: first line, a request, the record, SIGTERM.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { DEMO_CREDENTIALS } from '../../src/config/index.js';
import { readRecordFile } from '../../src/simulator/index.js';
import { authOf, codeIn, jsonBody, sigOf, stampAt } from './helpers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-sim-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
}

function simulate(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const clean = { ...process.env };
  for (const key of ['SMSDROP_ACCOUNT_SID', 'SMSDROP_AUTH_TOKEN', 'SMSDROP_APP_ID'])
    delete clean[key];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'simulate', ...args], {
    cwd: root,
    env: { ...clean, ...env },
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  return { child, stdout: () => out, stderr: () => err };
}

async function firstLine(run: Run): Promise<string> {
  while (!run.stdout().includes('\n')) {
    if (run.child.exitCode !== null)
      throw new Error(`simulate exited ${run.child.exitCode}: ${run.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return run.stdout().split('\n')[0]!;
}

async function exitCode(run: Run): Promise<number | null> {
  if (run.child.exitCode === null) await once(run.child, 'exit');
  return run.child.exitCode;
}

describe('smsdrop simulate', { concurrency: true }, () => {
  test('prints "listening on <url>" first, serves the demo account, records, stops cleanly on SIGTERM', async () => {
    const record = path.join(dir, 'record.jsonl');
    const run = simulate([
      '--port',
      '0',
      '--timezone',
      'UTC',
      '--record',
      record,
      '--latency-ms',
      '1-3',
    ]);
    try {
      const line = await firstLine(run);
      assert.match(line, /^listening on http:\/\/127\.0\.0\.1:\d+$/);
      const url = line.slice('listening on '.length);
      const stamp = stampAt(new Date());
      const { accountSid, authToken, appId } = DEMO_CREDENTIALS;
      const res = await request(
        `${url}/2013-12-26/Accounts/${accountSid}/SMS/TemplateSMS?sig=${sigOf(stamp, accountSid, authToken)}`,
        {
          method: 'POST',
          headers: {
            accept: 'application/json',
            'content-type': 'application/json;charset=utf-8',
            authorization: authOf(stamp, accountSid),
          },
          body: jsonBody({
            to: '13800000001',
            appId,
            templateId: '1',
            datas: ['x', 'y'],
            reqId: 'cli-1',
          }),
        },
      );
      assert.equal(codeIn(await res.body.text()), '000000');
      run.child.kill('SIGTERM');
      assert.equal(await exitCode(run), 0);
      const records = readRecordFile(record);
      assert.equal(records.length, 1);
      assert.equal(records[0]!.reqId, 'cli-1');
      // The demo token is public and printed; templates are listed.
      assert.match(run.stdout(), new RegExp(`auth token: ${authToken}`));
      assert.match(
        run.stdout(),
        /templates: 1 \(2 variables\), 2 \(2 variables\), 3 \(0 variables\)/,
      );
      // Counted although the CLI keeps no records in memory.
      assert.match(
        run.stdout(),
        /^SIGTERM: stopping after 1 requests, 1 accepted, at most 1 at once$/m,
      );
    } finally {
      run.child.kill('SIGKILL');
    }
  });

  test('never prints a token that came from the environment', async () => {
    const secret = 'real-secret-token-0000000000000x';
    const run = simulate(['--port', '0', '--https', '--ca-file', path.join(dir, 'ca.pem')], {
      SMSDROP_ACCOUNT_SID: 'realsid',
      SMSDROP_AUTH_TOKEN: secret,
      SMSDROP_APP_ID: 'appA,appB',
    });
    try {
      assert.match(await firstLine(run), /^listening on https:\/\/127\.0\.0\.1:\d+$/);
      run.child.kill('SIGINT');
      assert.equal(await exitCode(run), 0);
      assert.doesNotMatch(run.stdout() + run.stderr(), new RegExp(secret));
      assert.match(run.stdout(), /app id: appA, appB/);
      assert.match(run.stdout(), /ca\.pem/);
    } finally {
      run.child.kill('SIGKILL');
    }
  });

  test('a bad --faults spec is a usage error: clear message, exit 2', async () => {
    const run = simulate(['--port', '0', '--faults', 'http500@2']);
    assert.equal(await exitCode(run), 2);
    assert.match(run.stderr(), /--faults: bad fault rule "http500@2"/);
    assert.equal(run.stdout(), '');
  });

  test('bad --templates and --latency-ms are usage errors too', async () => {
    const templates = simulate(['--templates', '1:x']);
    assert.equal(await exitCode(templates), 2);
    assert.match(templates.stderr(), /--templates: bad template "1:x"/);
    const latency = simulate(['--latency-ms', '80-10']);
    assert.equal(await exitCode(latency), 2);
    assert.match(latency.stderr(), /--latency-ms/);
  });
});
