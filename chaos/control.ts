// Control commands among the kills (--control): `smsdrop pause`, `resume` and `cancel` (rarer) on a
// file of the round in flight, run as the real CLI against the same journal, at random moments of
// a life. A command the file's state refuses (exit 2: done already, not read yet) is part of the
// game. The moment each cancel returned (exit 0) is kept per file, for the verdict: no request of
// a cancelled file starts after it, and no row it cancelled reaches the simulator.
import { setTimeout as sleep } from 'node:timers/promises';
import type { AcceptedRecord } from '../src/simulator/types.js';
import type { JournalFile } from './check.js';
import { type ChaosFile, expectedMessages } from './files.js';
import { lastLine, logFileOf, type ModeRun, type ModeSettings } from './mode.js';
import { lastJson, logProcess, runToEnd, startCli } from './procs.js';

export type ControlAction = 'pause' | 'resume' | 'cancel';

export interface ControlState {
  /** `idle`: a command due while no file was in flight (none run). */
  counts: Record<ControlAction, number> & { refused: number; idle: number };
  /** When each cancel command returned with exit 0 (ms since the epoch), by file name. */
  cancelledAt: Map<string, number>;
}

export function newControlState(): ControlState {
  return {
    counts: { pause: 0, resume: 0, cancel: 0, refused: 0, idle: 0 },
    cancelledAt: new Map(),
  };
}

/** Share of lives that get a command, and of commands that are a cancel (others: pause, resume). */
const COMMAND_SHARE = 0.8;
const CANCEL_SHARE = 0.25;

/**
 * The journal's files, or none while it cannot be read: no schema yet, PostgreSQL restarting (the
 * verdict reads it again at the end).
 */
async function filesNow(journal: () => Promise<JournalFile[]>): Promise<JournalFile[]> {
  try {
    return await journal();
  } catch {
    return [];
  }
}

/** Files in flight: read, not finished, not cancelled (those a command may still change). */
function inFlight(files: readonly JournalFile[]): string[] {
  return files
    .filter((f) => f.status !== 'done' && f.status !== 'refused' && f.control !== 'cancelled')
    .map((f) => f.name);
}

/**
 * Maybe one command, at a random moment within `windowMs`, on a file then in flight (read from
 * `journal`); run to its end (a foreground `resume`, when no daemon holds the data directory,
 * sends the file: one more sender among the others).
 */
export async function controlDuringLife(
  s: ModeSettings,
  run: ModeRun,
  env: NodeJS.ProcessEnv,
  windowMs: number,
  journal: () => Promise<JournalFile[]>,
): Promise<void> {
  if (s.random() >= COMMAND_SHARE) return;
  const at = Math.floor(s.random() * windowMs);
  const roll = s.random();
  const pick = s.random();
  const action: ControlAction = roll < CANCEL_SHARE ? 'cancel' : roll < 0.65 ? 'pause' : 'resume';
  await sleep(at);
  const names = inFlight(await filesNow(journal));
  const name = names[Math.floor(pick * names.length)];
  if (name === undefined) run.control.counts.idle++;
  else await runControl(s, run, run.control, env, action, name);
}

/** Commands while the daemons run to the end, where most of the sending happens. */
const FINISH_COMMANDS = 6;
const FINISH_WINDOW_MS = 1500;

/** Waits until a file is in flight (true), or the run is `over` (false). */
async function someInFlight(
  journal: () => Promise<JournalFile[]>,
  over: () => boolean,
): Promise<boolean> {
  while (inFlight(await filesNow(journal)).length === 0) {
    if (over()) return false;
    await sleep(200);
  }
  return true;
}

/**
 * While the daemons run to the end: up to FINISH_COMMANDS commands at random moments on files in
 * flight (each once one is, until the run is `over`), then a cancel when none has returned yet in
 * the run (so that every run judges one, when a file is still in flight), then every file left
 * paused resumed, so that the run can finish.
 */
export async function controlWhileFinishing(
  s: ModeSettings,
  run: ModeRun,
  env: NodeJS.ProcessEnv,
  journal: () => Promise<JournalFile[]>,
  over: () => boolean,
): Promise<void> {
  for (let i = 0; i < FINISH_COMMANDS && (await someInFlight(journal, over)); i++)
    await controlDuringLife(s, run, env, FINISH_WINDOW_MS, journal);
  const name = inFlight(await filesNow(journal))[0];
  if (run.control.cancelledAt.size === 0 && name !== undefined)
    await runControl(s, run, run.control, env, 'cancel', name);
  await resumePaused(s, run, run.control, env, await filesNow(journal));
}

/** One command to its end; a cancel that returned 0 is timed. */
export async function runControl(
  s: ModeSettings,
  run: ModeRun,
  state: ControlState,
  env: NodeJS.ProcessEnv,
  action: ControlAction,
  name: string,
): Promise<void> {
  const proc = startCli([action, name, ...(action === 'resume' ? [] : ['--json'])], env);
  run.starts++;
  const { exit, timedOut } = await runToEnd(proc, s.finishTimeoutMs);
  const returned = Date.now();
  const what = `${action} ${name}`;
  logProcess(logFileOf(s), what, proc, exit);
  state.counts[action]++;
  if (timedOut) run.problems.push(`${what} did not finish within ${s.finishTimeoutMs} ms`);
  else if (exit.code === 2) {
    state.counts.refused++;
    run.notes.push(`${what}: refused: ${lastLine(proc.output())}`);
  } else if (exit.code === 1 || exit.code === null)
    run.problems.push(`${what} exited ${exit.code ?? exit.signal}: ${lastLine(proc.output())}`);
  else if (action === 'cancel' && lastJson(proc.output())?.control === 'cancelled') {
    if (!state.cancelledAt.has(name)) state.cancelledAt.set(name, returned);
    run.notes.push(`${what}: returned at ${new Date(returned).toISOString()}`);
  }
}

/** The files an operator left paused resumed, so that the run can finish. */
export async function resumePaused(
  s: ModeSettings,
  run: ModeRun,
  state: ControlState,
  env: NodeJS.ProcessEnv,
  files: readonly JournalFile[],
): Promise<void> {
  for (const f of files)
    if (f.control === 'paused') await runControl(s, run, state, env, 'resume', f.name);
}

/** A batch of a cancelled file, and the moments its attempts started (ISO 8601). */
export interface CancelledBatch {
  fileName: string;
  reqId: string;
  state: string;
  starts: string[];
}

/** One SQL text for both journals: the batches of cancelled files, one row per attempt. */
export const CANCELLED_BATCHES_SQL = `SELECT f.name AS file_name, b.req_id, b.state, a.started_at
  FROM batches b JOIN files f ON f.id = b.file_id LEFT JOIN attempts a ON a.batch_id = b.id
  WHERE f.control = 'cancelled' ORDER BY b.id, a.id`;

export interface BatchRow {
  file_name: string;
  req_id: string;
  state: string;
  started_at: string | null;
}

export function groupBatches(rows: readonly BatchRow[]): CancelledBatch[] {
  const byReqId = new Map<string, CancelledBatch>();
  for (const r of rows) {
    let batch = byReqId.get(r.req_id);
    if (!batch) {
      batch = { fileName: r.file_name, reqId: r.req_id, state: r.state, starts: [] };
      byReqId.set(r.req_id, batch);
    }
    if (r.started_at !== null) batch.starts.push(r.started_at);
  }
  return [...byReqId.values()];
}

/**
 * What is wrong with the cancelled files: a cancelled row the simulator received, a row unknown
 * though no request of it ever started, a request that started after the cancel returned (in the
 * journal, or at the simulator without an attempt started before it), a cancel that returned 0
 * on a file the journal does not hold as cancelled.
 */
export function checkCancels(
  state: ControlState,
  journal: readonly JournalFile[],
  batches: readonly CancelledBatch[],
  records: readonly AcceptedRecord[],
): string[] {
  const problems: string[] = [];
  for (const name of state.cancelledAt.keys())
    if (!journal.some((f) => f.name === name && f.control === 'cancelled'))
      problems.push(`${name}: its cancel returned 0, but the journal does not hold it cancelled`);
  const received = new Map<string, number[]>();
  for (const r of records)
    if (r.reqId) received.set(r.reqId, [...(received.get(r.reqId) ?? []), Date.parse(r.time)]);
  for (const b of batches) {
    const got = received.get(b.reqId) ?? [];
    const what = `${b.fileName} batch ${b.reqId}`;
    if (b.state === 'cancelled' && got.length > 0)
      problems.push(`${what}: cancelled, yet the simulator received it ${got.length} time(s)`);
    if (b.state === 'unknown' && b.starts.length === 0)
      problems.push(`${what}: unknown, though no request of it ever started`);
    const cancelAt = state.cancelledAt.get(b.fileName);
    if (cancelAt === undefined) continue;
    const starts = b.starts.map((t) => Date.parse(t));
    const late = starts.filter((t) => t > cancelAt);
    if (late.length > 0)
      problems.push(
        `${what}: an attempt started at ${new Date(late[0]!).toISOString()}, after the cancel returned at ${new Date(cancelAt).toISOString()}`,
      );
    if (got.some((t) => t > cancelAt) && !starts.some((t) => t <= cancelAt))
      problems.push(
        `${what}: received after the cancel returned at ${new Date(cancelAt).toISOString()}, with no attempt started before it`,
      );
  }
  return problems;
}

export function formatControl(state: ControlState): string {
  const c = state.counts;
  return `${c.pause} pause, ${c.resume} resume, ${c.cancel} cancel (${c.refused} refused by the file's state; ${c.idle} due with no file in flight), ${state.cancelledAt.size} files cancelled`;
}

/**
 * The messages that must be delivered: those of the files not cancelled, but for those a cancelled
 * file holds too (a repeat of a cancelled row may be left to it, and it may end cancelled).
 */
export function requiredMessages(
  files: readonly ChaosFile[],
  cancelled: ReadonlyMap<string, number>,
): Set<string> {
  const ofCancelled = expectedMessages(files.filter((f) => cancelled.has(f.name)));
  const required = expectedMessages(files.filter((f) => !cancelled.has(f.name)));
  for (const key of ofCancelled) required.delete(key);
  return required;
}
