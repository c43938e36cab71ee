// SMSDROP_KEEP: a file that ended longer ago is pruned, by the daemon at its start and by
// `smsdrop prune`. No trace of its numbers is left in the journal's files on disk, `report` still
// lists it with its counts, and the same bytes dropped again send nothing. A keep shorter than the
// windows stops start-up with one line.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import {
  daemonEnv,
  listDir,
  numbersOf,
  type Proc,
  type Simulator,
  startDaemon,
  startProcess,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';

const dirs: string[] = [];
const procs: Proc[] = [];
const sims: Simulator[] = [];
after(async () => {
  for (const p of procs) p.kill('SIGKILL');
  for (const s of sims) await s.stop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const ROWS = 30;
const WATCHED = numbersOf(ROWS)[7]!;
const KEEP = { SMSDROP_KEEP: '2s', SMSDROP_REPEAT_WINDOW: 'off', SMSDROP_RESUME_WITHIN: 'off' };

/**
 * One message to ROWS numbers, and two rows with broken numbers (a rejected file, invalid_cells).
 */
function listCsv(): string {
  return `phone,template,data1,data2\n${numbersOf(ROWS)
    .map((n) => `${n},1,code,5`)
    .join('\n')}\n12-34x,1,code,5\n99-${WATCHED}x,1,code,5\n`;
}

/** The journal's files as bytes: the database, its WAL and the intents file with its WAL. */
function journalBytes(dataDir: string): Buffer {
  const names = listDir(dataDir).filter((n) => n.startsWith('journal.'));
  return Buffer.concat(names.map((n) => fs.readFileSync(path.join(dataDir, n))));
}

async function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  const proc = startProcess(args, env);
  const { code } = await proc.exited;
  return { code, output: proc.output() };
}

describe('pruning (SMSDROP_KEEP)', () => {
  it('leaves no number in the journal files, keeps the counts, and still recognises the bytes', async () => {
    const dir = tempDir('prune');
    dirs.push(dir);
    const sim = await startSimulatorProcess(dir);
    sims.push(sim);
    const dataDir = path.join(dir, 'data');
    const settings = { dataDir, simulator: sim, env: KEEP };
    const first = await startDaemon(settings);
    procs.push(first);
    fs.writeFileSync(path.join(dataDir, 'inbox', 'list.csv'), listCsv());
    await waitUntil(
      () => fs.existsSync(path.join(dataDir, 'done', 'list.result.csv')),
      30_000,
      'list.csv done',
      () => first.output(),
    );
    const ended = Date.now();
    first.kill('SIGTERM');
    await first.exited;
    assert.ok(
      journalBytes(dataDir).includes(WATCHED),
      'the number is in the journal before pruning',
    );
    assert.deepEqual(listDir(path.join(dataDir, 'done')), [
      'list.csv',
      'list.rejected.csv',
      'list.result.csv',
    ]);

    await sleep(Math.max(0, ended + 2_500 - Date.now())); // past SMSDROP_KEEP
    const env = daemonEnv(settings);
    const dry = await cli(['prune', '--dry-run'], env);
    assert.equal(dry.code, 0, dry.output);
    assert.match(
      dry.output,
      /^would prune 1 file\(s\) .*: 32 rows, 1 batches, 1 attempts; .*would remove 3 file\(s\) from done\/ and failed\//,
    );

    // The daemon prunes at its start.
    const second = await startDaemon(settings);
    procs.push(second);
    await second.waitFor(/pruned 1 file\(s\) .*: 32 rows/);
    assert.deepEqual(
      listDir(path.join(dataDir, 'done')),
      [],
      "the file's CSV, result and rejected files went too",
    );
    const accepted = sim.records().length;
    fs.writeFileSync(path.join(dataDir, 'inbox', 'again.csv'), listCsv());
    await waitUntil(
      () => fs.existsSync(path.join(dataDir, 'done', 'again.duplicate.txt')),
      30_000,
      'again.csv filed as a duplicate',
      () => second.output(),
    );
    assert.equal(sim.records().length, accepted, 'the same bytes again sent nothing');
    assert.match(
      fs.readFileSync(path.join(dataDir, 'done', 'again.duplicate.txt'), 'utf8'),
      /rows were pruned on .*smsdrop report 1/,
    );
    second.kill('SIGTERM');
    assert.equal((await second.exited).code, 0, second.output());

    assert.ok(
      !journalBytes(dataDir).includes(WATCHED),
      'no trace of the number in the journal files on disk',
    );
    const report = await cli(['report', '--format', 'json'], env);
    const [line] = JSON.parse(report.output) as Array<Record<string, unknown>>;
    assert.deepEqual(
      [
        line!.name,
        line!.status,
        line!.rows,
        line!.invalid,
        line!.accepted,
        line!.failed,
        line!.pending,
        line!.requests,
      ],
      ['list.csv', 'done', 32, 2, 30, 0, 0, 1],
    );
    const status = await cli(['status', '--json'], env);
    const journal = (
      JSON.parse(status.output) as {
        journal: { pruned_files: number; oldest_file: unknown; bytes: number };
      }
    ).journal;
    assert.deepEqual([journal.pruned_files, journal.oldest_file], [1, null]);
    const again = await cli(['prune'], env);
    assert.match(again.output, /^pruned 0 file\(s\)/);
  });

  it('refuses a keep shorter than the windows: exit 2, one line, E_CONFIG_KEEP', async () => {
    const dir = tempDir('prune-refused');
    dirs.push(dir);
    const env = daemonEnv({ dataDir: path.join(dir, 'data'), env: { SMSDROP_KEEP: '2s' } });
    const status = await cli(['status'], env);
    assert.equal(status.code, 2);
    assert.match(
      status.output,
      /^smsdrop: E_CONFIG_KEEP: invalid configuration: keep \(SMSDROP_KEEP\) = "2s" is shorter than SMSDROP_REPEAT_WINDOW = 24h and SMSDROP_RESUME_WITHIN = 24h: .*, or turn them off\n$/,
    );
    const flag = await cli(
      ['prune', '--older-than', '1h'],
      daemonEnv({ dataDir: path.join(dir, 'data') }),
    );
    assert.equal(flag.code, 2);
    assert.match(
      flag.output,
      /^smsdrop: E_CONFIG_KEEP: prune: --older-than = "1h" is shorter than .*, or turn them off\n$/,
    );
  });
});
