// Sending a file's batches: bounded concurrency, optional pacing, every request signed afresh by
// the client, every attempt journalled before the request and its outcome right after.
import type { LimitFunction } from 'p-limit';
import type { Config } from '../config/index.js';
import type { BatchRecord, BatchToSend, Transition } from '../ports/records.js';
import type { Awaitable } from '../ports/awaitable.js';
import type { SendStore } from '../ports/send.js';
import type { ControlStore } from '../ports/control.js';
import { type Doubt, OUTCOME_STATES } from '../ports/states.js';
import { freeNow, type HeldResult, heldBy } from './control.js';
import type { ProviderClient } from '../provider/client.js';
import type { SendOutcome } from '../provider/types.js';
import type { AccountSlots, SlotRelease } from '../ports/account.js';
import { accountSlot, howEnded } from './accountSlot.js';
import { fenced, leaseCheck, putBackFenced, releaseUnsent } from './fence.js';
import type { AdaptiveConcurrency } from './concurrency.js';
import { accountStopCode } from '../provider/codes.js';
import { type Decision, decideAfterAttempt, retrySettings, whyNotUnderOwnReqId } from './policy.js';
import type { AccountPause, PauseCode, RateLimiter, StartTicket } from './rate.js';
import { sleepUnlessStopped } from './sleep.js';
import type { SendWindow } from './window.js';

export interface SendContext {
  /** The journal's side of sending: due batches, and the writes around each request. */
  send: SendStore;
  client: ProviderClient;
  config: Config;
  /** Shared request concurrency (one p-limit for the whole process). */
  limit: LimitFunction;
  /**
   * Lowers and raises `limit` as the provider answers (send/concurrency.ts); none: it stays as set.
   */
  concurrency?: AdaptiveConcurrency;
  rateLimiter: RateLimiter;
  /**
   * The account's request slots when other processes send on it too (nodes sharing a PostgreSQL
   * journal); none: `limit` alone bounds the requests.
   */
  account?: AccountSlots;
  pause: AccountPause;
  /** The hours in which requests may start (config sendWindow); none: any hour. */
  window?: SendWindow;
  /** Aborted on shutdown: no new request starts; requests in flight finish and are recorded. */
  stopSignal?: AbortSignal;
  /**
   * An operator's hold on the file (held, paused, scheduled, cancelled), looked at before each
   * page of batches; none: nothing holds files (a dry run). The journal's attempt start checks it
   * too, so a command holds every request that had not started when it returned.
   */
  control?: Pick<ControlStore, 'control' | 'cancelLeftovers'>;
  /** Called after each batch reaches an outcome, with the rows it settled (0 if retried). */
  onBatchDone?: (event: { rowsSettled: number; transition: Transition['to'] }) => void;
  now?: () => number;
}

export type SendResult =
  | { state: 'finished' }
  | { state: 'paused'; reason: string; code: PauseCode }
  /** An operator holds the file (ports/control.ts): nothing more starts until that changes. */
  | HeldResult
  | { state: 'stopped' };

/** Sends until every batch of the file is final, or sending must stop. */
export async function sendFile(ctx: SendContext, fileId: number): Promise<SendResult> {
  await ctx.send.recoverInterrupted(fileId, ctx.config.reqId);
  const now = ctx.now ?? Date.now;
  for (;;) {
    const stop = stopReason(ctx) ?? (await heldBy(ctx, fileId));
    if (stop) return stop;
    await sendReadyBatches(ctx, fileId);
    const stopAfter = stopReason(ctx) ?? (await heldBy(ctx, fileId));
    if (stopAfter) return stopAfter;
    const next = await ctx.send.nextDueAt(fileId);
    if (next === null) return { state: 'finished' };
    const wait = next - now();
    if (wait > 0) await sleepUnlessStopped(wait, ctx.stopSignal);
  }
}

function stopReason(ctx: SendContext): SendResult | undefined {
  if (ctx.stopSignal?.aborted) return { state: 'stopped' };
  if (ctx.pause.paused)
    return { state: 'paused', reason: ctx.pause.reason!, code: ctx.pause.code! };
  return undefined;
}

/** Batches read at a time: enough to keep the requests flowing, few enough to keep memory flat. */
const PAGE = 100;

/**
 * Batches that become due while a pass runs. `wait` resolves true once more may be due, false when
 * there will be none; `fromStart` is true when the next page should start again from the file's
 * first batch (batches released out of their ids' order at the end of reading: the result file is
 * written ahead in row order, results/spool.ts).
 */
export interface MoreBatches {
  wait(): Promise<boolean>;
  fromStart(): boolean;
}

/**
 * One pass over the batches that are due now, keeping the shared limit's queue fed. With
 * `more`, a pass that runs out of due batches asks it for more instead of ending: sending while a
 * file is read goes on without draining the requests in flight each time it catches up with the
 * reading.
 */
export async function sendReadyBatches(
  ctx: SendContext,
  fileId: number,
  more?: MoreBatches,
): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  const queued = new Set<number>();
  const unsent = new Set<number>(); // claimed, no outcome recorded: given back at the end
  const room = ctx.config.concurrency * 2;
  let afterId = 0;
  let failure: { error: unknown } | undefined;
  const stopping = () => failure !== undefined || stopReason(ctx) !== undefined;
  for (;;) {
    // A page starts only while the file is free to go: a pause holds the rest within a page.
    if (!(await freeNow(ctx, fileId))) break;
    if (more?.fromStart()) afterId = 0;
    // Only this loop sends these batches, so a page read now is still true when its turn comes;
    // room for PAGE new ones even if all queued are due again; sendFirst's come ahead of it.
    const { first, due } = await ctx.send.claimDueBatches({
      fileId,
      now: (ctx.now ?? Date.now)(),
      afterId,
      limit: PAGE + queued.size,
      skip: queued,
    });
    const firstIds = new Set(first.map((b) => b.batch.id));
    const page = [...first, ...due];
    for (const { batch } of page) unsent.add(batch.id);
    if (page.length === 0) {
      if (stopping() || !more || !(await more.wait())) break;
      afterId = 0; // a batch released meanwhile may have a lower id than the last one sent
      continue;
    }
    for (const toSend of page) {
      if (stopping()) break;
      while (inFlight.size >= room) await Promise.race(inFlight);
      if (stopping()) break;
      const id = toSend.batch.id;
      queued.add(id);
      const task: Promise<void> = ctx
        .limit(() => (failure ? undefined : sendBatch(ctx, toSend)))
        .then((sent) => {
          if (sent) unsent.delete(id);
          return sent?.recorded;
        })
        .catch((error: unknown) => void (failure ??= { error }))
        .finally(() => {
          inFlight.delete(task);
          queued.delete(id);
        });
      inFlight.add(task);
      if (!firstIds.has(id)) afterId = id;
    }
    if (stopping()) break;
  }
  // Never leave requests running behind a failure: the caller may hand the file to someone else.
  await Promise.all(inFlight);
  await releaseUnsent(ctx.send, unsent);
  if (failure) throw failure.error;
}

/**
 * One attempt for one batch: journal, request, journal. Resolves once the answer is in, with the
 * promise of its record: the request's slot in the concurrency limit is given back then, so the
 * next request's attempt joins the same journal transaction as this outcome (a turn of the event
 * loop sooner). The batch is not sent again before its record settles (sendReadyBatches).
 */
async function sendBatch(
  ctx: SendContext,
  toSend: BatchToSend,
): Promise<{ recorded: Promise<void> } | undefined> {
  if (stopReason(ctx)) return;
  // Before the doubt check below: a batch that waits overnight (the sending window, a message
  // window) is judged when its turn comes, on that day's terms.
  const ticket = await waitForTurn(ctx, toSend.batch.numbers);
  if (!ticket) return;
  const { batch } = toSend;
  const now = ctx.now ?? Date.now;
  const notResent = batch.maybe_sent ? await whyNotResent(ctx, batch, new Date(now())) : undefined;
  if (notResent) {
    ticket.giveBack();
    await endUnknown(ctx, batch, notResent);
    return;
  }
  const reqId = ctx.config.reqId ? batch.req_id : null;
  const slot = await accountSlot(ctx.account, ctx.stopSignal, ticket);
  if (!slot) return;
  let attemptId: number | undefined;
  let outcome: SendOutcome | undefined;
  try {
    attemptId = await startAttempt(ctx, batch, reqId, ticket);
    if (attemptId === undefined) return;
    outcome = await request(ctx, toSend, reqId, slot);
  } finally {
    // With no attempt written, no request left: the slot is free at once.
    slot(attemptId === undefined ? 'answered' : howEnded(outcome));
  }
  if (!mayHaveSent(outcome)) ticket.giveBack();
  if (fenced(outcome)) return { recorded: putBackFenced(ctx.send, batch, attemptId) };
  const decision = await decide(ctx, batch, outcome, now);
  noteProviderHealth(ctx.pause, outcome, decision.pauseAccount === undefined);
  ctx.concurrency?.note(outcome);
  const recorded = ctx.send.recordOutcomes([
    {
      batchId: batch.id,
      transition: decision.transition,
      attempt: { id: attemptId, result: describeOutcome(outcome) },
    },
  ]);
  if (decision.pauseAccount)
    ctx.pause.pause(decision.pauseAccount, pauseCodeOf(decision, outcome), decision.pauseCode);
  const settled = OUTCOME_STATES.includes(decision.transition.to) ? batch.numbers : 0;
  return {
    recorded: recorded.then(() =>
      ctx.onBatchDone?.({ rowsSettled: settled, transition: decision.transition.to }),
    ),
  };
}

/**
 * The attempt, on disk before its request leaves; undefined (the ticket given back) when the
 * batch is no longer this one to send (someone else moved it). The ticket starts with it.
 */
async function startAttempt(
  ctx: SendContext,
  batch: BatchRecord,
  reqId: string | null,
  ticket: StartTicket,
): Promise<number | undefined> {
  let attemptId: number | undefined;
  try {
    [attemptId] = await ctx.send.startAttempts([{ batch, reqId }]);
  } catch (err) {
    ticket.giveBack();
    throw err;
  }
  if (attemptId === undefined) ticket.giveBack();
  else ticket.started();
  return attemptId;
}

/** A batch in doubt that may not be sent again now ends unknown, saying why. */
async function endUnknown(ctx: SendContext, batch: BatchRecord, notResent: string): Promise<void> {
  const statusMsg = `in doubt since ${batch.first_doubt_at ?? 'an earlier run'}; ${notResent}`;
  await ctx.send.recordOutcomes([
    { batchId: batch.id, transition: { to: 'unknown', statusCode: batch.status_code, statusMsg } },
  ]);
  ctx.onBatchDone?.({ rowsSettled: batch.numbers, transition: 'unknown' });
}

/** The batch's one request, under its reqId when it has one (reqId is on). */
function request(
  ctx: SendContext,
  toSend: BatchToSend,
  reqId: string | null,
  slot: SlotRelease,
): Promise<SendOutcome> {
  const { appId, templateId, datas, phones } = toSend;
  return ctx.client.send(
    { to: phones.split(','), appId, templateId, datas, ...(reqId ? { reqId } : {}) },
    leaseCheck(ctx.send, toSend.batch.id, slot),
  );
}

/** What to do with the batch after this attempt (send/policy.ts), told its history and settings. */
async function decide(
  ctx: SendContext,
  batch: BatchRecord,
  outcome: SendOutcome,
  now: () => number,
): Promise<Decision> {
  const attempts = batch.attempts + 1;
  const providerSilent = await outageSuspected(ctx, outcome, batch.id, attempts);
  return decideAfterAttempt(
    outcome,
    {
      attempts,
      deferrals: batch.deferrals,
      doubt: batch.maybe_sent as Doubt,
      numbers: batch.numbers,
      lastStatusCode: batch.status_code,
    },
    {
      ...retrySettings(ctx.config),
      providerSilent,
    },
    now(),
  );
}

/**
 * Why a batch that may already have reached the provider must not be sent again now, or undefined
 * when its reqId makes a resend safe (whyNotUnderOwnReqId). Asked of the batch's attempts, not
 * only of today's setting: reqId may have been switched off or on since an earlier run.
 */
async function whyNotResent(
  ctx: SendContext,
  batch: BatchRecord,
  now: Date,
): Promise<string | undefined> {
  const { everyAttemptCarriedReqId } = await ctx.send.attemptHistory(batch.id, batch.req_id);
  return whyNotUnderOwnReqId(
    { everyAttemptCarriedReqId, firstDoubtAt: batch.first_doubt_at },
    now,
    { reqIdOn: ctx.config.reqId, timezone: ctx.config.timezone },
  );
}

/**
 * Waits until the sending window is open and the rate limits let a request of `numbers` numbers
 * start, both at once: a long wait for a message window may end after the sending window closed.
 * Undefined when sending stops meanwhile.
 */
async function waitForTurn(ctx: SendContext, numbers: number): Promise<StartTicket | undefined> {
  for (;;) {
    if (ctx.window && !(await ctx.window.waitOpen(ctx.stopSignal))) return undefined;
    const ticket = await ctx.rateLimiter.take(numbers, ctx.stopSignal);
    if (!ticket) return undefined;
    if (stopReason(ctx)) {
      ticket.giveBack();
      return undefined;
    }
    if (!ctx.window || ctx.window.opensInMs() === 0) return ticket;
    ticket.giveBack(); // closed while the limits held it: wait for the window again
  }
}

/**
 * A batch about to run out of attempts on a request that got no answer at all (not sent, or in
 * doubt: 5xx, a timeout, a reset), while the provider answered no request (of this node, on
 * PostgreSQL) since its last attempts began: an outage, not the batch's fault (see
 * RetrySettings.providerSilent). Asked of the journal only then. Off with
 * SMSDROP_PAUSE_AFTER_FAILURES=0, like the pause itself.
 */
function outageSuspected(
  ctx: SendContext,
  outcome: SendOutcome,
  batchId: number,
  attempts: number,
): Awaitable<boolean> {
  // One attempt is no silence over time: a batch allowed a single attempt ends as it always did.
  if (ctx.config.pauseAfterFailures === 0 || attempts < Math.max(2, ctx.config.maxAttempts))
    return false;
  if (outcome.kind !== 'not-sent' && outcome.kind !== 'in-doubt') return false;
  return ctx.send.providerSilentFor(batchId, attempts);
}

/** The provider may have sent the messages (so they use up a message window): see recentStarts. */
function mayHaveSent(outcome: SendOutcome): boolean {
  if (outcome.kind === 'not-sent') return false;
  if (outcome.kind === 'rejected')
    return outcome.codeClass === 'ambiguous' || outcome.codeClass === 'duplicate-request';
  return true;
}

function noteProviderHealth(pause: AccountPause, outcome: SendOutcome, goingOn: boolean): void {
  if (outcome.kind === 'not-sent' || outcome.kind === 'in-doubt')
    pause.noteTrouble(outcome.reason, troubleCode(outcome));
  else if (outcome.kind === 'rejected' && outcome.codeClass === 'transient')
    pause.noteTrouble(`status ${outcome.statusCode}`, 'E_PROVIDER_FAILING');
  else pause.noteAnswer(goingOn);
}

/** What an answer that is no business answer says of the provider. */
function troubleCode(outcome: SendOutcome): PauseCode {
  if (outcome.kind !== 'not-sent') return 'E_PROVIDER_FAILING';
  return outcome.code ?? 'E_PROVIDER_UNREACHABLE';
}

/** The pause's code: the provider's status code's, or what the outcome says of the provider. */
function pauseCodeOf(decision: Decision, outcome: SendOutcome): PauseCode {
  return decision.pauseCode ? accountStopCode(decision.pauseCode) : troubleCode(outcome);
}

function describeOutcome(outcome: SendOutcome): {
  outcome: string;
  statusCode: string | null;
  reason: string | null;
} {
  switch (outcome.kind) {
    case 'accepted':
      // The batch keeps the smsMessageSid (sms_message_sid): a copy on the attempt would be a
      // second one for every request of the journal.
      return { outcome: outcome.kind, statusCode: outcome.statusCode, reason: null };
    case 'rejected':
      return {
        outcome: `rejected:${outcome.codeClass}`,
        statusCode: outcome.statusCode,
        reason: outcome.statusMsg ?? '',
      };
    default:
      return { outcome: outcome.kind, statusCode: null, reason: outcome.reason };
  }
}
