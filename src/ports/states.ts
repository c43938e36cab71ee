// State names of the journal, and the state machine of a batch, written down where they live.
//
// A ROW ends in exactly one of: invalid, duplicate, accepted, failed, unknown, cancelled; until
// then it is pending. invalid and duplicate are decided at intake (rows.intake, by the planner); a
// valid row's status is its batch's outcome, read through the row_results view (the row itself is
// never rewritten).
//
// A BATCH is one request's worth of numbers of one group:
//
//   planned ──start attempt──▶ sending ──accepted / 160054──────────▶ accepted   (final)
//      ▲                          │──batch-rejected, exhausted ───────▶ failed     (final)
//      │                          │──in doubt, reqId off ─────────────▶ unknown    (final)
//      │                          │──number-rejected, > 1 number ─────▶ split      (final; two
//      │                          │                                     new planned halves)
//      └──retryable / account-fatal / rate-limited (with a delay)───┘
//
//   planned ──`smsdrop cancel` (the file's)──▶ cancelled (final: never requested since)
//   failed / unknown ──`smsdrop retry`──▶ retried (final; its numbers move to a new planned batch)
//   cancelled ──`smsdrop retry --cancelled`──▶ retried
//   unknown ──`smsdrop retry`, its reqId still remembered──▶ planned (sent again under that reqId)
//   planned, in doubt, its reqId no longer safe to resend under ──▶ unknown
//
// `sending` is written (with the attempt) BEFORE the request leaves, and replaced by the outcome
// right after. A batch found in `sending` at start-up was cut off mid-request: it may have been
// received. With a reqId it goes back to planned and is retried with the same reqId (the
// provider answers 160054 if it already took it); without one it becomes unknown and is never
// resent automatically. `maybe_sent` remembers that some attempt may have reached the provider,
// so a batch that then runs out of attempts ends unknown, not failed: failed means not sent.
/** What intake decided about a row. */
export const ROW_INTAKE = { valid: 'valid', invalid: 'invalid', duplicate: 'duplicate' } as const;

export const ROW_STATUS = {
  invalid: 'invalid',
  duplicate: 'duplicate',
  pending: 'pending',
  accepted: 'accepted',
  failed: 'failed',
  unknown: 'unknown',
  cancelled: 'cancelled',
} as const;
export type RowStatus = (typeof ROW_STATUS)[keyof typeof ROW_STATUS];

export const BATCH_STATE = {
  planned: 'planned',
  sending: 'sending',
  accepted: 'accepted',
  failed: 'failed',
  unknown: 'unknown',
  split: 'split',
  retried: 'retried',
  cancelled: 'cancelled',
} as const;
export type BatchState = (typeof BATCH_STATE)[keyof typeof BATCH_STATE];

/** States a batch may still be sent from: its rows are pending. */
export const UNSETTLED_STATES: readonly BatchState[] = [BATCH_STATE.planned, BATCH_STATE.sending];
/** Final states that are their rows' outcome. */
export const OUTCOME_STATES: readonly BatchState[] = [
  BATCH_STATE.accepted,
  BATCH_STATE.failed,
  BATCH_STATE.unknown,
  BATCH_STATE.cancelled,
];
/** Final states whose requests were made: a cancelled batch never was. */
export const REQUESTED_STATES: readonly BatchState[] = [
  BATCH_STATE.accepted,
  BATCH_STATE.failed,
  BATCH_STATE.unknown,
];
/** A valid row's status: its batch's outcome, pending until the batch has one (as row_results). */
export function rowStatusOfBatch(state: string | null): RowStatus {
  return state !== null && (OUTCOME_STATES as readonly string[]).includes(state)
    ? (state as RowStatus)
    : ROW_STATUS.pending;
}
/** Batches that got an outcome: those that still have it, and those `smsdrop retry` replaced. */
export const SETTLED_STATES: readonly string[] = [...OUTCOME_STATES, BATCH_STATE.retried];
/** The outcome a settled batch got (a retried one: failed, or unknown when it may have gone). */
export const SETTLED_AS = `CASE WHEN state != '${BATCH_STATE.retried}' THEN state WHEN maybe_sent = 0 THEN '${BATCH_STATE.failed}' ELSE '${BATCH_STATE.unknown}' END`;

/** Final states whose numbers went on in other batches (split halves, a retry's new batches). */
export const REPLACED_STATES: readonly BatchState[] = [BATCH_STATE.split, BATCH_STATE.retried];

/**
 * Every move a batch may make (the drawing above), and no other: moveBatch (moves.ts) checks
 * each change of state against it. sending -> sending is an attempt whose intent was replayed
 * after a crash (intents.ts) on a batch already cut off mid-request.
 */
export const BATCH_MOVES: Readonly<Record<BatchState, readonly BatchState[]>> = {
  planned: [BATCH_STATE.sending, BATCH_STATE.unknown, BATCH_STATE.cancelled],
  sending: [
    BATCH_STATE.sending,
    BATCH_STATE.accepted,
    BATCH_STATE.failed,
    BATCH_STATE.unknown,
    BATCH_STATE.planned,
    BATCH_STATE.split,
  ],
  accepted: [],
  failed: [BATCH_STATE.retried],
  unknown: [BATCH_STATE.planned, BATCH_STATE.retried],
  split: [],
  retried: [],
  cancelled: [BATCH_STATE.retried],
};

/** States as an SQL list for `IN`: "('planned', 'sending')". */
export function sqlList(states: readonly string[]): string {
  return `(${states.map((s) => `'${s}'`).join(', ')})`;
}

/**
 * What may already have reached the provider for a batch (batches.maybe_sent):
 * none: every earlier answer said "not sent"; all: some request may have been accepted whole
 * (no answer came); part: the provider said it failed but may have sent some (ambiguous code).
 */
export const DOUBT = { none: 0, all: 1, part: 2 } as const;
export type Doubt = (typeof DOUBT)[keyof typeof DOUBT];

// A FILE: intake (rows being written) -> sending (planned; batches going out) -> done (every row
// final). refused: the file as a whole could not be read (no phone column, unreadable...).
export const FILE_STATUS = {
  intake: 'intake',
  sending: 'sending',
  done: 'done',
  refused: 'refused',
} as const;
export type FileStatus = (typeof FILE_STATUS)[keyof typeof FILE_STATUS];

// What an operator set on a file (files.control), beside its status: held (waiting for approval;
// SMSDROP_APPROVAL), paused, cancelled (its planned batches cancelled, for good); none: it goes,
// from files.start_at on when that is set (scheduled). Only a file with none may start a request.
export const FILE_CONTROL = {
  held: 'held',
  paused: 'paused',
  cancelled: 'cancelled',
} as const;
export type FileControl = (typeof FILE_CONTROL)[keyof typeof FILE_CONTROL];
