// A real SQLite journal for the PostgreSQL tests, made by the real `smsdrop send` against the
// simulator (its own process) with faults on: valid, invalid, duplicate and suppressed rows, rows
// the provider refuses (a blacklisted number), requests that fail and are retried or
// given up, and a second file that repeats rows of the first (sent by another file).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { smsdrop } from '../cli/helpers.js';
import net from 'node:net';
import {
  CREDENTIALS,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';

export const SUPPRESSED = '13911110000';
export const BLOCKED = '13922220000';

/** Valid numbers of the first file; the second repeats the first ten and adds ten. */
const numbers = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => String(13_900_000_000 + from + i));

function firstCsv(): string {
  const lines = ['phone,template,data1,data2,note'];
  for (const n of numbers(0, 60)) lines.push(`${n},1,code${n.slice(-2)},5,x`);
  lines.push(`${numbers(0, 1)[0]},1,code00,5,again`); // a duplicate within the file
  lines.push(`139 0000 0001,1,other,5,spaced`, `+86 139-0000-0002,1,other,5,plus`);
  lines.push('12-34x,1,bad,5,invalid', '999,1,bad,5,"short, quoted"');
  lines.push(`${SUPPRESSED},1,s,5,suppressed`, `${BLOCKED},1,b,5,blocked`);
  lines.push('0013800000000,1,lead,5,zero'); // an international number: a leading 0 Excel drops
  return `${lines.join('\n')}\n`;
}

function secondCsv(): string {
  const lines = ['phone,template,data1,data2,note'];
  for (const n of [...numbers(0, 10), ...numbers(100, 10)])
    lines.push(`${n},1,code${n.slice(-2)},5,y`);
  return `${lines.join('\n')}\n`;
}

export interface SentJournal {
  dataDir: string;
  simulator: Simulator;
  /** The environment the journal was made with (for more commands on it). */
  env: Record<string, string>;
}

/** Makes the journal (two sends, each to its end); the simulator is left running. */
export async function sentJournal(): Promise<SentJournal> {
  const dir = tempDir('pg-sent');
  const simulator = await startSimulatorProcess(dir, [
    ...['--blocked', BLOCKED],
    ...['--faults', 'http500@/5,status=160000@/7,cut-after@/9', '--seed', '11'],
  ]);
  const dataDir = path.join(dir, 'data');
  const env = {
    ...CREDENTIALS,
    SMSDROP_BASE_URL: simulator.url,
    SMSDROP_DATA_DIR: dataDir,
    SMSDROP_MAX_PER_REQUEST: '4',
    SMSDROP_CONCURRENCY: '2',
    SMSDROP_MAX_ATTEMPTS: '2',
    SMSDROP_RETRY_BASE_MS: '5',
    SMSDROP_RETRY_MAX_MS: '50',
    SMSDROP_PAUSE_AFTER_FAILURES: '0',
  };
  const added = await smsdrop(['suppress', 'add', SUPPRESSED, '--reason', 'asked us'], env);
  assert.equal(added.status, 0, added.stderr);
  for (const [name, text] of [
    ['first.csv', firstCsv()],
    ['second.csv', secondCsv()],
  ] as const) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    const sent = await smsdrop(['send', file, '--json'], env);
    assert.ok(
      sent.status === 0 || sent.status === 3,
      `send ${name}: ${sent.status}\n${sent.stderr}`,
    );
  }
  await throughDaemon(dataDir, simulator);
  return { dataDir, simulator, env };
}

/** A port nothing listens on: webhooks to it stay in the outbox. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A third file sent by the daemon, whose webhook cannot be delivered: events left in the outbox,
 * and the daemon's state.
 */
async function throughDaemon(dataDir: string, simulator: Simulator): Promise<void> {
  const hook = `http://127.0.0.1:${await closedPort()}/hook`;
  const daemon = await startDaemon({
    dataDir,
    simulator,
    env: { SMSDROP_WEBHOOK_URL: hook, SMSDROP_WEBHOOK_SECRET: 'hook-secret-0001' },
  });
  try {
    const rows = numbers(200, 5).map((n) => `${n},2,third,6`);
    fs.writeFileSync(
      path.join(dataDir, 'inbox', 'third.csv'),
      `phone,template,data1,data2\n${rows.join('\n')}\n`,
    );
    const result = path.join(dataDir, 'done', 'third.result.csv');
    await waitUntil(() => fs.existsSync(result), 90_000, 'third.result.csv', daemon.output);
  } finally {
    daemon.kill('SIGTERM');
    await daemon.exited;
  }
}
