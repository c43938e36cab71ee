// A `smsdrop send` stopped midway on one journal: the file that `resume`, `status` and the result
// file are tested on. The real CLI as a child process, against the real simulator.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after } from 'node:test';
import {
  cleanEnv,
  CREDENTIALS,
  contactsCsv,
  type Proc,
  startProcess,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';

/** What a test's processes and folders are left to: killed and removed when its file ends. */
export interface Leftovers {
  running: Proc[];
  dirs: string[];
}

/**
 * `contacts.csv` of `rows` rows, sent one request of 2 numbers at a time to a 30 ms simulator and
 * stopped (SIGINT) after the first request: its work folder (the file and its result file are
 * there), and the environment its commands run with.
 */
export async function stopSendMidway(
  tag: string,
  rows: number,
  journalEnv: Record<string, string>,
  leftovers: Leftovers,
): Promise<{ work: string; env: Record<string, string> }> {
  const work = tempDir(tag);
  leftovers.dirs.push(work);
  const sim = await startSimulatorProcess(work, ['--latency-ms', '30']);
  after(() => sim.stop());
  const env = {
    ...CREDENTIALS,
    ...journalEnv,
    SMSDROP_BASE_URL: sim.url,
    SMSDROP_DATA_DIR: path.join(work, 'data'),
    SMSDROP_MAX_PER_REQUEST: '2',
    SMSDROP_CONCURRENCY: '1',
  };
  const csv = path.join(work, 'contacts.csv');
  fs.writeFileSync(csv, contactsCsv(rows));
  const send = startProcess(['send', csv], cleanEnv(env));
  leftovers.running.push(send);
  await waitUntil(() => sim.records().length > 0, 60_000, 'a first request', send.output);
  send.kill('SIGINT');
  assert.notEqual((await send.exited).code, 0, `stopped midway:\n${send.output()}`);
  return { work, env };
}
