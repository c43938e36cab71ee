// Log lines for machines: no colour codes when the output is not a terminal (pm2's log files,
// pipes), SMSDROP_LOG_FORMAT=json writes one JSON object per line, and neither lets a secret
// through.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isolatedSettings } from '../emptyConfig.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsxLoader = pathToFileURL(path.join(repo, 'node_modules/tsx/dist/loader.mjs')).href;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-logs-test-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const ESC = '\u001b';

function node(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const fullEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...isolatedSettings(),
    ...env,
  };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', tsxLoader, ...args],
      { cwd: dir, env: fullEnv, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

function csv(name: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, 'phone,templateId,data1,data2\n13800000001,1,a,b\n13800000002,1,a,b\n');
  return file;
}

/** A logger in a child process, its stderr a pipe: the registered secret must not come out. */
const LOGGER_SCRIPT = (format: string, colour: string) => `
import { createLogger } from ${JSON.stringify(pathToFileURL(path.join(repo, 'src/log/logger.ts')).href)};
import { registerSecret } from ${JSON.stringify(pathToFileURL(path.join(repo, 'src/log/redact.ts')).href)};
registerSecret('t0ken5ecret0000000000000000000042');
const log = createLogger({ level: 'info', format: ${JSON.stringify(format)}${colour === 'default' ? '' : `, colour: ${colour}`} });
log.warn('signed with t0ken5ecret0000000000000000000042', { url: 'https://x/?sig=ABCDEF', file: 'a.csv' });
log.info('second line');
`;

describe('logs', () => {
  it('smsdrop send logs plain readable lines to a pipe: no colour codes', async () => {
    const r = await node([
      path.join(repo, 'src/cli.ts'),
      '--data-dir',
      path.join(dir, 'plain'),
      'send',
      csv('plain.csv'),
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /info sending to BUILT-IN SIMULATOR/);
    for (const out of [r.stdout, r.stderr])
      assert.ok(!out.includes(ESC), `no escape codes: ${JSON.stringify(out)}`);
  });

  it('SMSDROP_LOG_FORMAT=json: every log line is one JSON object with level, message and timestamp (send --json: all on stderr)', async () => {
    const r = await node(
      [
        path.join(repo, 'src/cli.ts'),
        '--data-dir',
        path.join(dir, 'json'),
        'send',
        csv('json.csv'),
        '--json',
      ],
      { SMSDROP_LOG_FORMAT: 'json' },
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    assert.ok(lines.length >= 1);
    for (const line of lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      assert.equal(typeof entry.level, 'string');
      assert.equal(typeof entry.message, 'string');
      assert.ok(!Number.isNaN(Date.parse(String(entry.timestamp))));
    }
    assert.ok(lines.some((l) => /BUILT-IN SIMULATOR/.test(l)));
  });

  it('a bad SMSDROP_LOG_FORMAT is a setting error, exit 2', async () => {
    const r = await node([path.join(repo, 'src/cli.ts'), 'status'], {
      SMSDROP_LOG_FORMAT: 'yaml',
      SMSDROP_DATA_DIR: path.join(dir, 'none'),
    });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /logFormat \(SMSDROP_LOG_FORMAT\) = "yaml"/);
  });

  it('secrets are masked in text and in JSON; colour only when asked for or on a terminal', async () => {
    const [text, json, coloured] = await Promise.all([
      node(['--input-type=module', '-e', LOGGER_SCRIPT('text', 'default')]),
      node(['--input-type=module', '-e', LOGGER_SCRIPT('json', 'default')]),
      node(['--input-type=module', '-e', LOGGER_SCRIPT('text', 'true')]),
    ]);
    for (const r of [text, json, coloured]) {
      assert.equal(r.code, 0, r.stderr);
      const both = r.stderr + r.stdout;
      assert.ok(!both.includes('t0ken5ecret'), `the token is masked: ${both}`);
      assert.ok(!both.includes('ABCDEF'), `the sig is masked: ${both}`);
    }
    for (const r of [text, json]) assert.ok(!r.stderr.includes(ESC) && !r.stdout.includes(ESC));
    // The warning on stderr, the info line on stdout.
    assert.match(
      text.stderr,
      /^\S+Z warn signed with \*\*\* \{"url":"https:\/\/x\/\?sig=\*\*\*","file":"a\.csv"\}\n$/,
    );
    assert.match(text.stdout, /^\S+Z info second line\n$/);
    const entries = (json.stderr + json.stdout)
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      entries.map((e) => [e.level, e.message, e.file]),
      [
        ['warn', 'signed with ***', 'a.csv'],
        ['info', 'second line', undefined],
      ],
    );
    assert.ok(coloured.stderr.includes(`${ESC}[`), 'colour when asked for');
  });
});
