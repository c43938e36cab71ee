// The daemon on the paths where a shared prepared statement, switched into array mode by the repeat
// guard, once made intake read a group as `undefined` and refuse the file part-way, for good: a
// file with a number twice inside a large group after another file; a file of many groups
// stopped while it is read, then resumed. Real processes; the simulator's record is the truth.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  assertEachOnce,
  contactsCsv,
  listDir,
  numbersOf,
  type Proc,
  resultRows,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

const BIG = 5_000;
const bigGroupNumbers = numbersOf(BIG, 100_000);
/** One message to BIG numbers, the first of them written again at the end. */
const bigGroupCsv = () =>
  `phone,template,data1,data2\n${[...bigGroupNumbers, bigGroupNumbers[0]].map((n) => `${n},1,big,5`).join('\n')}\n`;

/** 20,000 rows in 2,000 groups of ten numbers each. */
const MANY = 20_000;
const manyNumbers = numbersOf(MANY, 200_000);
const manyGroupsCsv = () =>
  `phone,template,data1,data2\n${manyNumbers.map((n, i) => `${n},1,group${i % 2000},5`).join('\n')}\n`;

describe(
  'smsdrop run: large groups after other files, and a file stopped while it is read',
  // no timeout of its own: scripts/run-tests.mjs bounds the file
  () => {
    let dir: string;
    let sim: Simulator;
    const running: Proc[] = [];
    const daemon = async (data: string): Promise<Proc> => {
      const proc = await startDaemon({ dataDir: data, simulator: sim });
      running.push(proc);
      return proc;
    };

    before(async () => {
      dir = tempDir('daemon-big-groups');
      sim = await startSimulatorProcess(dir);
    });

    after(async () => {
      for (const proc of running) proc.kill('SIGKILL');
      await Promise.all(running.map((proc) => proc.exited));
      await sim?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('a file with a number twice inside a large group, after another file: done, each number once', async () => {
      const data = path.join(dir, 'after');
      const proc = await daemon(data);
      fs.writeFileSync(path.join(data, 'inbox', 'first.csv'), contactsCsv(3, { from: 1 }));
      await waitUntil(
        () => fs.existsSync(path.join(data, 'done', 'first.result.csv')),
        30_000,
        'done/first.csv',
        proc.output,
      );
      fs.writeFileSync(path.join(data, 'inbox', 'big.csv'), bigGroupCsv());
      await waitUntil(
        () =>
          listDir(path.join(data, 'done')).includes('big.result.csv') ||
          listDir(path.join(data, 'failed')).length > 0,
        60_000,
        'big.csv to end',
        proc.output,
      );
      assert.deepEqual(listDir(path.join(data, 'failed')), [], proc.output());
      assertEachOnce(
        sim.records().filter((r) => r.datas[0] === 'big'),
        bigGroupNumbers,
      );
      const statuses = resultRows(path.join(data, 'done', 'big.result.csv')).map((r) => r.status);
      assert.deepEqual(
        [
          statuses.filter((s) => s === 'accepted').length,
          statuses.filter((s) => s === 'duplicate').length,
        ],
        [BIG, 1],
      );
      proc.kill('SIGTERM');
      assert.equal((await proc.exited).code, 0);
    });

    it('a file of many groups stopped while it is read, after other files: the restart finishes it, each number once', async () => {
      const data = path.join(dir, 'after'); // the data directory of the test above: other files in its journal
      const first = await daemon(data);
      fs.writeFileSync(path.join(data, 'inbox', 'many-groups.csv'), manyGroupsCsv());
      await first.waitFor(/taken many-groups\.csv/, 30_000);
      first.kill('SIGTERM');
      assert.equal((await first.exited).code, 0, first.output());
      const second = await daemon(data);
      const ended = () =>
        [...listDir(path.join(data, 'done')), ...listDir(path.join(data, 'failed'))].includes(
          'many-groups.csv',
        );
      await waitUntil(ended, 60_000, 'many-groups.csv to end', second.output);
      assert.ok(!listDir(path.join(data, 'failed')).includes('many-groups.csv'), second.output());
      assertEachOnce(
        sim.records().filter((r) => r.datas[0]!.startsWith('group')),
        manyNumbers,
      );
      second.kill('SIGTERM');
      assert.equal((await second.exited).code, 0);
    });
  },
);
