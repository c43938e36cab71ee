// The bundled sample as the README runs it: `smsdrop send` on it, against the built-in simulator,
// exits 3 (its line 14 is invalid on purpose) and writes what samples/expected/ holds; and
// what the README's commands write stays out of git's tracked files.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs, { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isolatedSettings } from '../emptyConfig.js';
import { withSqliteFile } from '../sqliteFile.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const samples = path.join(repo, 'samples');
const tsxLoader = pathToFileURL(path.join(repo, 'node_modules/tsx/dist/loader.mjs')).href;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-samples-test-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * CSV lines without the columns that differ from run to run (the provider's message id and time).
 */
function stable(file: string): string[] {
  const lines = fs
    .readFileSync(file, 'utf8')
    .replace(/^\uFEFF/, '')
    .trimEnd()
    .split(/\r?\n/);
  const header = lines[0]!.split(',');
  const drop = new Set(
    ['sms_message_sid', 'date_created'].map((name) => header.indexOf(name)).filter((i) => i >= 0),
  );
  // The sample's cells hold no quoted commas in these columns' places: the last two columns go.
  return lines.map((line) => {
    const cells = line.split(',');
    return drop.size > 0 ? cells.slice(0, cells.length - drop.size).join(',') : line;
  });
}

/** `smsdrop send contacts.csv` in the test's folder, against the built-in simulator. */
function sendSample(): Promise<{ code: number; stdout: string; stderr: string }> {
  return smsdrop(['send', 'contacts.csv']);
}

/** `smsdrop ARGS` in the test's folder, on its data directory. */
function smsdrop(
  args: string[],
  settings: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...isolatedSettings(),
    ...settings,
  };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        '--import',
        tsxLoader,
        path.join(repo, 'src/cli.ts'),
        '--data-dir',
        path.join(dir, 'data'),
        ...args,
      ],
      { cwd: dir, env, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : 1) : 0,
          stdout,
          stderr,
        }),
    );
  });
}

describe('the bundled sample', () => {
  it('sends as samples/expected/ says, and exits 3 for its invalid row', async () => {
    fs.copyFileSync(path.join(samples, 'contacts.csv'), path.join(dir, 'contacts.csv'));
    const run = await sendSample();
    assert.equal(run.code, 3, run.stderr);
    assert.match(
      run.stdout,
      /rows 20 {2}invalid 1 {2}duplicates 1 {2}accepted 18 {2}failed 0 {2}unknown 0 {2}pending 0/,
    );
    assert.deepEqual(
      stable(path.join(dir, 'contacts.result.csv')),
      stable(path.join(samples, 'expected/contacts.result.csv')),
    );
    assert.equal(
      fs.readFileSync(path.join(dir, 'contacts.rejected.csv'), 'utf8'),
      fs.readFileSync(path.join(samples, 'expected/contacts.rejected.csv'), 'utf8'),
    );
    const expected = stable(path.join(samples, 'expected/contacts.result.csv'));
    assert.ok(
      expected.every(
        (line, i) => i === 0 || /,(accepted,"=""000000""",|duplicate,,|invalid,,)/.test(line),
      ),
      'the expected file shows what a run gives, not pending rows',
    );
  });

  it("finds rows with the README's SQL examples, after the sample was sent", () => {
    const block = /```sql\n([\s\S]*?)```/.exec(readFileSync(path.join(repo, 'README.md'), 'utf8'));
    const queries = block![1]!.trim().split('\n');
    assert.ok(queries.length > 0);
    withSqliteFile(path.join(dir, 'data'), (db) => {
      for (const query of queries) assert.ok(db.prepare(query).all().length > 0, query);
    });
  });

  it("sent again, answers already-sent and writes the earlier send's result files beside it", async () => {
    fs.rmSync(path.join(dir, 'contacts.result.csv'));
    fs.rmSync(path.join(dir, 'contacts.rejected.csv'));
    const run = await sendSample();
    // The earlier send's counts, so its exit status: line 14 is invalid.
    assert.equal(run.code, 3, run.stderr);
    assert.match(
      run.stdout,
      /contacts\.csv {2}already-sent .*the result files beside it are the earlier send's/,
    );
    assert.deepEqual(
      stable(path.join(dir, 'contacts.result.csv')),
      stable(path.join(samples, 'expected/contacts.result.csv')),
    );
    assert.equal(
      fs.readFileSync(path.join(dir, 'contacts.rejected.csv'), 'utf8'),
      fs.readFileSync(path.join(samples, 'expected/contacts.rejected.csv'), 'utf8'),
    );
  });

  it('sent again after its rows were pruned, leaves the result files beside it as they are', async () => {
    const windowsOff = { SMSDROP_REPEAT_WINDOW: 'off', SMSDROP_RESUME_WITHIN: 'off' };
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const prune = await smsdrop(['prune', '--older-than', '1s'], windowsOff);
    assert.equal(prune.code, 0, prune.stderr);
    const written = fs.readFileSync(path.join(dir, 'contacts.result.csv'), 'utf8');
    const run = await sendSample();
    assert.match(
      run.stdout,
      /already-sent .*its rows were pruned, so no result files were written/,
    );
    assert.equal(fs.readFileSync(path.join(dir, 'contacts.result.csv'), 'utf8'), written);
  });

  it(
    "what the README's commands write is ignored by git: outputs next to the sample, the data directory",
    { skip: !fs.existsSync(path.join(repo, '.git')) },
    () => {
      const written = [
        'samples/contacts.result.csv',
        'samples/contacts.rejected.csv',
        'data/inbox/contacts.csv',
        'data/done/contacts.csv',
        'data/journal.sqlite',
        'data/logs/smsdrop-2026-01-01.log',
      ];
      const check = spawnSync('git', ['check-ignore', '--no-index', ...written], {
        cwd: repo,
        encoding: 'utf8',
      });
      assert.deepEqual(check.stdout.trim().split('\n').sort(), [...written].sort(), check.stderr);
      const kept = spawnSync(
        'git',
        [
          'check-ignore',
          '--no-index',
          'samples/contacts.csv',
          'samples/expected/contacts.result.csv',
        ],
        { cwd: repo, encoding: 'utf8' },
      );
      assert.equal(kept.stdout, '', 'the sample and its expected results stay tracked');
    },
  );
});
