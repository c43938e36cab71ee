// The two-thread floor: how fast, on this machine and in this run, a program can go from the CSV
// to every outcome recorded when it journals each row before sending and splits the work over two
// threads the best known way. Measured, not reckoned: a prototype does the work every such design
// must do, and nothing more.
//   intake thread (twoThreadsIntake.ts): csv-parse, the number check, groups, one row per
//     (group, number), batches of 200, every row, group and batch in smsdrop's journal schema
//     through smsdrop's row inserter, in intake's growing transactions; closed batches are posted
//     to the main thread after the commit that holds them;
//   main thread: counts each group's rows in one pass over the characters (so a group read in full goes
//     at once, as smsdrop's count thread does), and sends each batch with smsdrop's own client
//     (signing, encoding, undici, decoding) at the benchmark's concurrency, its attempt committed
//     before it leaves and its outcome after it answers, a commit per turn of the event loop in a
//     side file (as smsdrop's intents); at the end, the outcomes are written into the journal.
// Left out, so the figure is a floor: the encoding check, smsdrop's finer row checks and messages,
// repeats, the daemon's state, the result file, retries. A ratio this prototype cannot reach, no
// design of this shape reaches on this machine, to within the few percent its timing differs from
// smsdrop's (README: Benchmark).
// Run by the benchmark as a process of its own (`node --import tsx bench/twoThreads.ts ARGS`, the
// credentials in TWO_THREADS_CREDENTIALS), which prints one JSON object.
import { spawn } from 'node:child_process';
import { createReadStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pLimit from 'p-limit';
import { openJournal } from '../src/journal/open.js';
import { createProviderClient } from '../src/provider/client.js';
import type { SendOutcome } from '../src/provider/types.js';
import { startWorker } from '../src/intake/thread.js';
import type { Credentials } from './baselines.js';
import { threadCpuSeconds, track } from './processes.js';
import type { ClosedBatch, IntakeMessage, IntakeThreadInput } from './twoThreadsIntake.js';
import { SLOT_BITS, slotOf } from './twoThreadsSlots.js';

export interface TwoThreadResult {
  /** From the first read of the file to the last outcome written into the journal. */
  seconds: number;
  /** Node's own start and the modules' loading, before that (not in `seconds`). */
  startupSeconds: number;
  cpuSeconds: number;
  /** CPU of the intake thread and of the main thread (the rest: V8's and libuv's helper threads). */
  intakeThreadCpuSeconds: number;
  mainThreadCpuSeconds: number;
  simulatorCpuSeconds: number;
  peakRssMb: number;
  requests: number;
  accepted: number;
  /** What its journal and side file hold once done, counted after the timing (see checkJournal). */
  journal: JournalCheck;
  /** Seconds from the first read until the intake thread's last commit. */
  intakeSeconds: number;
  /** Requests not accepted (should be 0). */
  failures: number;
}

/**
 * The floor's journal, read once it is done: every row stored with its verdict, each valid
 * (group, number) once, in the batch whose numbers hold it, and each batch sent once (one attempt)
 * and accepted. With the requests carrying exactly their batch's committed numbers, that is each
 * number sent once.
 */
export interface JournalCheck {
  rows: number;
  valid: number;
  /** Distinct (group, number) among the valid rows. */
  distinctValid: number;
  /** Valid rows whose batch's numbers hold their number. */
  inTheirBatch: number;
  invalid: number;
  duplicates: number;
  batches: number;
  batchesNotAccepted: number;
  /** Attempts in the side file, and the batches they name. */
  attempts: number;
  batchesAttempted: number;
}

function checkJournal(journal: Database.Database, side: Database.Database): JournalCheck {
  const count = (db: Database.Database, text: string) => db.prepare(text).pluck().get() as number;
  return {
    rows: count(journal, 'SELECT count(*) FROM rows'),
    valid: count(journal, "SELECT count(*) FROM rows WHERE intake = 'valid'"),
    distinctValid: count(journal, "SELECT count(*) FROM (SELECT DISTINCT group_id, phone FROM rows WHERE intake = 'valid')"),
    inTheirBatch: count(
      journal,
      "SELECT count(*) FROM rows r JOIN batch_numbers n ON n.batch_id = r.batch_id WHERE r.intake = 'valid' AND instr(',' || n.phones || ',', ',' || r.phone || ',') > 0",
    ),
    invalid: count(journal, "SELECT count(*) FROM rows WHERE intake = 'invalid'"),
    duplicates: count(journal, "SELECT count(*) FROM rows WHERE intake = 'duplicate'"),
    batches: count(journal, 'SELECT count(*) FROM batches'),
    batchesNotAccepted: count(journal, "SELECT count(*) FROM batches WHERE state <> 'accepted'"),
    attempts: count(side, 'SELECT count(*) FROM attempts'),
    batchesAttempted: count(side, 'SELECT count(DISTINCT batch_id) FROM attempts'),
  };
}

interface Args {
  csv: string;
  journal: string;
  baseUrl: string;
  concurrency: number;
  creds: Credentials;
}

/** Runs the prototype in a process of its own on a fresh journal (its CPU and memory are its own). */
export async function measureTwoThreads(a: Args, cpuOfSimulator: () => number): Promise<TwoThreadResult> {
  const script = path.join(import.meta.dirname, 'twoThreads.ts');
  const args = ['--import', 'tsx', script, '--csv', a.csv, '--journal', a.journal, '--base-url', a.baseUrl, '--concurrency', String(a.concurrency)];
  const simulatorStart = cpuOfSimulator();
  // The credentials go in the environment, not the command line (which any user's `ps` shows).
  const env = { ...process.env, TWO_THREADS_CREDENTIALS: JSON.stringify(a.creds) };
  const child = track(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env }));
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`two-thread prototype exited with ${code}`);
  return { ...(JSON.parse(out) as Omit<TwoThreadResult, 'simulatorCpuSeconds'>), simulatorCpuSeconds: cpuOfSimulator() - simulatorStart };
}

/**
 * Rows per group slot (slotOf the cells after the phone, as the line holds them: the file has no
 * quotes), in one pass over the characters: no line or key string is made.
 */
async function countGroups(csv: string): Promise<Uint32Array> {
  const counts = new Uint32Array(1 << SLOT_BITS);
  let line = 0;
  /** Where the current line's group cells began in `text`, or -1 before its first comma. */
  let from = -1;
  let tail = '';
  const count = (text: string, end: number) => {
    if (line++ > 0) counts[from < 0 ? slotOf('', 0, 0) : slotOf(text, from, end)]!++;
  };
  for await (const chunk of createReadStream(csv, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
    const text = tail + (chunk as string);
    let lineStart = 0;
    from = -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 44 && from < 0) from = i + 1;
      else if (c === 10) {
        count(text, text.charCodeAt(i - 1) === 13 ? i - 1 : i);
        lineStart = i + 1;
        from = -1;
      }
    }
    tail = text.slice(lineStart);
  }
  if (tail !== '') {
    from = tail.indexOf(',') + 1;
    count(tail, tail.length);
  }
  return counts;
}

/**
 * Records written once per turn of the event loop, in one transaction: `write` resolves once the
 * record is committed (an attempt must be on disk before its request leaves).
 */
function perTurnWriter(side: Database.Database, sqlText: string) {
  const statement = side.prepare(sqlText);
  let queued: unknown[][] = [];
  let waiters: Array<() => void> = [];
  const flush = side.transaction((records: unknown[][]) => {
    for (const r of records) statement.run(r);
  });
  return (record: unknown[]): Promise<void> => {
    if (queued.length === 0) {
      setImmediate(() => {
        const [records, done] = [queued, waiters];
        queued = [];
        waiters = [];
        flush(records);
        for (const resolve of done) resolve();
      });
    }
    queued.push(record);
    return new Promise((resolve) => waiters.push(resolve));
  };
}

async function run(a: Args): Promise<Omit<TwoThreadResult, 'simulatorCpuSeconds' | 'startupSeconds'>> {
  const started = process.hrtime.bigint();
  const client = createProviderClient({ baseUrl: a.baseUrl, accountSid: a.creds.accountSid, authToken: a.creds.authToken, format: 'json', maxPerRequest: 200, connectTimeoutMs: 10_000, responseTimeoutMs: 30_000, connections: a.concurrency });
  mkdirSync(path.dirname(a.journal), { recursive: true });
  const side = new Database(`${a.journal}.outcomes.sqlite`);
  side.pragma('journal_mode = WAL');
  side.pragma('synchronous = NORMAL');
  side.exec('CREATE TABLE attempts (batch_id INTEGER, req_id TEXT, started_at TEXT); CREATE TABLE outcomes (batch_id INTEGER, state TEXT, status_code TEXT, finished_at TEXT, numbers INTEGER)');
  const writeAttempt = perTurnWriter(side, 'INSERT INTO attempts VALUES (?, ?, ?)');
  const writeOutcome = perTurnWriter(side, 'INSERT INTO outcomes VALUES (?, ?, ?, ?, ?)');
  const limit = pLimit(a.concurrency);
  const sends: Array<Promise<void>> = [];
  let failures = 0;

  const send = async (b: ClosedBatch) => {
    await writeAttempt([b.id, b.reqId, new Date().toISOString()]);
    const to = b.phones.split(',');
    const outcome: SendOutcome = await client.send({ to, appId: a.creds.appId, templateId: b.templateId, datas: b.datas, reqId: b.reqId });
    if (outcome.kind !== 'accepted') failures++;
    const state = outcome.kind === 'accepted' ? 'accepted' : outcome.kind === 'rejected' ? 'failed' : 'unknown';
    await writeOutcome([b.id, state, 'statusCode' in outcome ? outcome.statusCode : null, new Date().toISOString(), to.length]);
  };

  const intake: IntakeThreadInput = { csv: a.csv, journalFile: a.journal, appId: a.creds.appId };
  const worker = startWorker(import.meta.url, 'twoThreadsIntake', { workerData: intake });
  let intakeSeconds = 0;
  let intakeThreadCpuSeconds = 0;
  const intakeDone = new Promise<void>((resolve, reject) => {
    worker.on('error', reject);
    worker.on('message', (m: IntakeMessage) => {
      if ('batches' in m) for (const b of m.batches) sends.push(limit(() => send(b)));
      else {
        intakeSeconds = Number(process.hrtime.bigint() - started) / 1e9;
        intakeThreadCpuSeconds = m.cpuSeconds;
        resolve();
      }
    });
  });
  const counts = await countGroups(a.csv);
  worker.postMessage(counts, [counts.buffer as ArrayBuffer]);
  await intakeDone;
  await worker.terminate();
  await Promise.all(sends);
  await client.close();

  // The outcomes into the journal, as the sender's records would end (one transaction).
  const journal = openJournal(a.journal);
  const outcomes = side.prepare('SELECT batch_id, state, status_code, finished_at, numbers FROM outcomes').raw().all() as Array<[number, string, string | null, string, number]>;
  const update = journal.prepare('UPDATE batches SET state = ?, status_code = ?, attempts = 1, updated_at = ? WHERE id = ?');
  journal.transaction(() => {
    for (const [id, state, code, at] of outcomes) update.run(state, code, at, id);
  })();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage();
  const mainThreadCpuSeconds = threadCpuSeconds();
  const check = checkJournal(journal.connection, side);
  journal.close();
  side.close();
  const accepted = outcomes.reduce((sum, o) => sum + (o[1] === 'accepted' ? o[4] : 0), 0);
  return {
    seconds,
    journal: check,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    intakeThreadCpuSeconds,
    mainThreadCpuSeconds,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    requests: sends.length,
    accepted,
    intakeSeconds,
    failures,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { csv: { type: 'string' }, journal: { type: 'string' }, 'base-url': { type: 'string' }, concurrency: { type: 'string' } } });
  const startupSeconds = performance.now() / 1000;
  const creds = JSON.parse(process.env.TWO_THREADS_CREDENTIALS ?? '{}') as Credentials;
  const result = await run({ csv: values.csv!, journal: values.journal!, baseUrl: values['base-url']!, concurrency: Number(values.concurrency), creds });
  process.stdout.write(`${JSON.stringify({ ...result, startupSeconds })}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) await main();
