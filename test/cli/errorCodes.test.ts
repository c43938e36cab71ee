// Errors with stable codes (issue 24, items 2-4): every code used in src/ is in docs/errors.md and
// the other way round; and each way the settings or the machine can be wrong before sending ends
// the real CLI or daemon with exit 2 and one line `smsdrop: E_CODE: message`, no stack, no secret.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { SETTINGS, settingCode, type ConfigKey } from '../../src/config/index.js';
import { ERROR_CODES } from '../../src/errors.js';
import { inspectFile } from '../../src/intake/inspect.js';
import { openWriter } from '../../src/journals/index.js';
import { FILE_STATUS } from '../../src/ports/states.js';
import { contactsCsv, REPO, startDaemon, tempDir, waitUntil } from '../daemon/helpers.js';
import { type Run, smsdrop } from './helpers.js';

const TOKEN = 'S3cretT0ken0000000000000000000042';
const PROVIDER = {
  SMSDROP_BASE_URL: 'http://127.0.0.1:9',
  SMSDROP_ACCOUNT_SID: 'ACerrors0000000000000000000001',
  SMSDROP_AUTH_TOKEN: TOKEN,
  SMSDROP_APP_ID: 'APPerrors000000000000000000001',
};

/** Exit 2 and, on stderr, one line `smsdrop: CODE: …`: no stack, no token. */
function assertCodeLine(run: Run, code: string, also?: RegExp): void {
  assert.equal(run.status, 2, run.stderr);
  const lines = run.stderr
    .trimEnd()
    .split('\n')
    .filter((l) => l.startsWith('smsdrop: '));
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0]!, new RegExp(`^smsdrop: ${code}: `));
  if (also) assert.match(lines[0]!, also);
  assert.doesNotMatch(run.stderr, /\n\s+at |unexpected error/, 'no stack');
  assert.ok(!run.stderr.includes(TOKEN) && !run.stdout.includes(TOKEN), 'never the token');
}

const dirs: string[] = [];
const dir = (prefix: string) => {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('error codes', () => {
  it('every code used in src/ is listed in docs/errors.md, and every code listed there is used', () => {
    const sources = (d: string): string[] =>
      fs
        .readdirSync(d, { withFileTypes: true })
        .flatMap((e) =>
          e.isDirectory()
            ? sources(path.join(d, e.name))
            : e.name.endsWith('.ts')
              ? [path.join(d, e.name)]
              : [],
        );
    const used = new Set<string>();
    for (const file of sources(path.join(REPO, 'src')))
      for (const [, code] of fs.readFileSync(file, 'utf8').matchAll(/'(E_[A-Z0-9_]+)'/g))
        used.add(code!);
    // and each setting's code, made from its name
    for (const key of Object.keys(SETTINGS)) used.add(settingCode(key as ConfigKey));
    const docs = fs.readFileSync(path.join(REPO, 'docs', 'errors.md'), 'utf8');
    const listed = new Set([...docs.matchAll(/^\| `(E_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]!));
    assert.deepEqual(
      [...used].filter((c) => !listed.has(c)).sort(),
      [],
      'used in src/, not in docs/errors.md',
    );
    assert.deepEqual(
      [...listed].filter((c) => !used.has(c)).sort(),
      [],
      'in docs/errors.md, not used in src/',
    );
  });
});

describe('the ErrorCode union', () => {
  it('docs/errors.md lists every code of ERROR_CODES and of the settings, and nothing else', () => {
    const docs = fs.readFileSync(path.join(REPO, 'docs', 'errors.md'), 'utf8');
    const listed = new Set([...docs.matchAll(/^\| `(E_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]!));
    const union = new Set<string>([
      ...ERROR_CODES,
      ...Object.keys(SETTINGS).map((key) => settingCode(key as ConfigKey)),
    ]);
    assert.deepEqual([...union].filter((c) => !listed.has(c)).sort(), [], 'not in docs/errors.md');
    assert.deepEqual([...listed].filter((c) => !union.has(c)).sort(), [], 'not in ERROR_CODES');
  });

  it('no production code throws a bare Error: each error says its code', () => {
    const bare: string[] = [];
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const file = path.join(d, e.name);
        if (e.isDirectory()) walk(file);
        // The simulator is a test tool; the dashboard's script runs in the browser.
        else if (/\.ts$/.test(e.name) && !/simulator|dashboard/.test(file))
          fs.readFileSync(file, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              if (/\bthrow new Error\(|fail\(new Error\(/.test(line))
                bare.push(`${path.relative(REPO, file)}:${i + 1}`);
            });
      }
    };
    walk(path.join(REPO, 'src'));
    assert.deepEqual(bare, []);
  });
});

describe('set-up errors: exit 2, one line with the code', () => {
  it('a CA file that cannot be read: send and run', async () => {
    const d = dir('err-ca');
    const csv = path.join(d, 'x.csv');
    fs.writeFileSync(csv, contactsCsv(2));
    const env = (data: string) => ({
      SMSDROP_DATA_DIR: path.join(d, data),
      SMSDROP_CA_FILE: '/nope.pem',
      ...PROVIDER,
    });
    const [send, run] = await Promise.all([
      smsdrop(['send', csv], env('a')),
      smsdrop(['run'], env('b')),
    ]);
    for (const r of [send, run]) assertCodeLine(r, 'E_CONFIG_CA_FILE', /\/nope\.pem/);
  });

  it('a data directory that is a file, lies under a file, or whose logs/ is a file', async () => {
    const d = dir('err-datadir');
    const file = path.join(d, 'plain-file');
    fs.writeFileSync(file, 'x');
    const withLogsFile = path.join(d, 'data');
    fs.mkdirSync(withLogsFile);
    fs.writeFileSync(path.join(withLogsFile, 'logs'), 'x');
    const csv = path.join(d, 'x.csv');
    fs.writeFileSync(csv, contactsCsv(2));
    const cases: Array<[string, string, string[]]> = [
      [file, 'E_DATA_DIR_NOT_A_DIRECTORY', ['send', csv]],
      [file, 'E_DATA_DIR_NOT_A_DIRECTORY', ['run']],
      [path.join(file, 'data'), 'E_DATA_DIR_NOT_A_DIRECTORY', ['send', csv]],
      [path.join(file, 'data'), 'E_DATA_DIR_NOT_A_DIRECTORY', ['run']],
      [withLogsFile, 'E_LOG_DIR', ['send', csv]],
      [withLogsFile, 'E_LOG_DIR', ['run']],
    ];
    const runs = await Promise.all(
      cases.map(([dataDir, , args]) => smsdrop(args, { SMSDROP_DATA_DIR: dataDir })),
    );
    runs.forEach((r, i) => assertCodeLine(r, cases[i]![1]));
  });

  it('a read-only data directory (a read-only mount: modes do not stop root)', async (t) => {
    const d = dir('err-readonly');
    const ro = path.join(d, 'ro');
    fs.mkdirSync(ro);
    const why = mount(ro, 'ro,size=1m');
    if (why) return t.skip(why);
    try {
      const csv = path.join(d, 'x.csv');
      fs.writeFileSync(csv, contactsCsv(2));
      const [send, run] = await Promise.all([
        smsdrop(['send', csv], { SMSDROP_DATA_DIR: ro }),
        smsdrop(['run'], { SMSDROP_DATA_DIR: ro }),
      ]);
      for (const r of [send, run]) assertCodeLine(r, 'E_DATA_DIR_READONLY');
    } finally {
      spawnSync('umount', [ro]);
    }
  });

  it('a disk that fills up during send: E_DISK_FULL, not a stack', async (t) => {
    const d = dir('err-full');
    const small = path.join(d, 'small');
    fs.mkdirSync(small);
    const why = mount(small, 'size=400k');
    if (why) return t.skip(why);
    try {
      const csv = path.join(d, 'big.csv');
      fs.writeFileSync(csv, contactsCsv(20_000));
      const r = await smsdrop(['send', csv, '--json'], {
        SMSDROP_DATA_DIR: path.join(small, 'data'),
        SMSDROP_LOG_LEVEL: 'error',
      });
      assertCodeLine(r, 'E_DISK_FULL');
    } finally {
      spawnSync('umount', [small]);
    }
  });

  it('provider settings half given: exit 2 naming what is missing; the commands that only read do not mind', async () => {
    const d = dir('err-creds');
    const csv = path.join(d, 'x.csv');
    fs.writeFileSync(csv, contactsCsv(2));
    const data = path.join(d, 'data');
    const appOnly = await smsdrop(['send', csv], {
      SMSDROP_DATA_DIR: data,
      SMSDROP_APP_ID: PROVIDER.SMSDROP_APP_ID,
    });
    assertCodeLine(
      appOnly,
      'E_CONFIG_CREDENTIALS',
      /baseUrl \(SMSDROP_BASE_URL\), accountSid \(SMSDROP_ACCOUNT_SID\), authToken \(SMSDROP_AUTH_TOKEN\) not set/,
    );
    const noUrl = {
      SMSDROP_DATA_DIR: data,
      SMSDROP_ACCOUNT_SID: PROVIDER.SMSDROP_ACCOUNT_SID,
      SMSDROP_AUTH_TOKEN: TOKEN,
    };
    assertCodeLine(
      await smsdrop(['run'], noUrl),
      'E_CONFIG_CREDENTIALS',
      /baseUrl \(SMSDROP_BASE_URL\) not set/,
    );
    for (const args of [['report'], ['status'], ['suppress', 'list']]) {
      const r = await smsdrop(args, { ...noUrl, SMSDROP_BASE_URL: 'ftp://not-a-provider' });
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    }
  });
});

describe(
  'a file planned for one provider is not sent on with another',
  // no timeout of its own: scripts/run-tests.mjs bounds the file
  () => {
    it('send and resume exit 2 with E_PROVIDER_CHANGED naming both; the daemon files it in failed/ with the code', async () => {
      const d = dir('err-provider');
      const data = path.join(d, 'data');
      const csv = path.join(d, 'list.csv');
      fs.writeFileSync(csv, contactsCsv(3));
      await plannedForSimulator(data, csv);
      const env = { SMSDROP_DATA_DIR: data, ...PROVIDER };
      const send = await smsdrop(['send', csv, '--json'], env);
      assertCodeLine(
        send,
        'E_PROVIDER_CHANGED',
        /planned for the built-in simulator, but the provider settings now name 127\.0\.0\.1 \(account ACerrors0+1\)/,
      );
      assert.equal((JSON.parse(send.stdout) as { code: string }).code, 'E_PROVIDER_CHANGED');
      assertCodeLine(await smsdrop(['resume', '1'], env), 'E_PROVIDER_CHANGED');

      fs.mkdirSync(path.join(data, 'processing'), { recursive: true });
      fs.copyFileSync(csv, path.join(data, 'processing', 'list.csv'));
      const daemon = await startDaemon({ dataDir: data, env: PROVIDER });
      try {
        const note = path.join(data, 'failed', 'list.error.txt');
        await waitUntil(
          () => fs.existsSync(note),
          30_000,
          'list.csv in failed/',
          () => daemon.output(),
        );
        assert.match(
          fs.readFileSync(note, 'utf8'),
          /reason: E_PROVIDER_CHANGED: list\.csv \(file 1\) was planned for the built-in simulator/,
        );
        assert.ok(!daemon.output().includes(TOKEN));
      } finally {
        daemon.kill('SIGKILL');
        await daemon.exited;
      }
    });
  },
);

/** A journal where csv's bytes were planned for the built-in simulator and stopped part-way. */
async function plannedForSimulator(dataDir: string, csv: string): Promise<void> {
  const inspection = await inspectFile(csv);
  fs.mkdirSync(dataDir, { recursive: true });
  const { handle } = await openWriter(
    { dataDir },
    {
      role: 'errorCodes test',
      synchronous: 'normal',
      reqIdOn: false,
      onLost: () => assert.fail('the journal lost requests’ records'),
    },
  );
  try {
    const file = await handle.files.create({
      sha256: inspection.sha256,
      name: 'list.csv',
      path: csv,
      size: inspection.size,
      encoding: inspection.encoding,
      provider: 'the built-in simulator',
    });
    await handle.files.status(file.id, FILE_STATUS.sending);
  } finally {
    await handle.close();
  }
}

/** Mounts a tmpfs at dir; the reason it cannot, if it cannot (not root, no permission). */
function mount(dir: string, options: string): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root to mount a small or read-only tmpfs';
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0
    ? undefined
    : `cannot mount a tmpfs here: ${(r.stderr || r.error?.message || '').trim()}`;
}
