// An operator's command on a file (ports/control.ts), on either journal: the file's row locked
// and read, the command checked against where the file stands (decideControl), the new control
// written with its webhook event, and for a cancel the file's planned batches cancelled, all in
// the caller's transaction. The attempt start reads the control in its own UPDATE (fileFreeToGo),
// so once this has committed no new request of a file that is not free to go starts.
import { SmsdropError } from '../errors.js';
import type { ControlCommand, ControlResult, ControlState } from '../ports/control.js';
import type { WebhookEvent } from '../ports/events.js';
import { BATCH_STATE, FILE_CONTROL, type FileControl, FILE_STATUS } from '../ports/states.js';
import { recordEvent } from './events.js';
import type { RuleContext } from './outcomes.js';
import { all, durable, get, type Rule, run } from './rule.js';

interface FileNow {
  name: string;
  status: string;
  control: FileControl | null;
  start_at: string | null;
}

/** A command the file's state does not allow: said to whoever asked, nothing written. */
export class ControlRefusedError extends SmsdropError {
  constructor(name: string, why: string) {
    super('E_CONTROL_REFUSED', `${name}: ${why}`);
  }
}

/** What the command makes of the file's control; undefined: it is so already. */
export function decideControl(
  file: FileNow,
  command: ControlCommand,
): { control: FileControl | null; startAt: string | null } | undefined {
  const ended = file.status === FILE_STATUS.done || file.status === FILE_STATUS.refused;
  if (ended)
    throw new ControlRefusedError(
      file.name,
      `it is ${file.status}: nothing is left to ${command.action}`,
    );
  const { control } = file;
  switch (command.action) {
    case 'approve':
      if (control === FILE_CONTROL.held) return { control: null, startAt: command.at ?? null };
      if (control === null && command.at !== undefined && file.start_at !== null)
        return { control: null, startAt: command.at }; // a new time for a scheduled file
      throw new ControlRefusedError(
        file.name,
        `it is ${control ?? 'not held'}: only a held file is approved`,
      );
    case 'pause':
      if (control === FILE_CONTROL.paused) return undefined;
      if (control !== null)
        throw new ControlRefusedError(
          file.name,
          `it is ${control}: ${control === FILE_CONTROL.held ? 'nothing goes until it is approved' : 'it will not go again'}`,
        );
      return { control: FILE_CONTROL.paused, startAt: file.start_at };
    case 'resume':
      if (control === null) return undefined;
      if (control !== FILE_CONTROL.paused)
        throw new ControlRefusedError(
          file.name,
          `it is ${control}: ${control === FILE_CONTROL.held ? 'approve it (smsdrop approve)' : 'a cancelled file is not resumed (smsdrop retry --cancelled sends its cancelled rows)'}`,
        );
      return { control: null, startAt: file.start_at };
    case 'cancel':
      if (control === FILE_CONTROL.cancelled) return undefined;
      return { control: FILE_CONTROL.cancelled, startAt: file.start_at };
  }
}

const EVENTS: Record<ControlCommand['action'], WebhookEvent> = {
  approve: 'file.approved',
  pause: 'file.paused',
  resume: 'file.resumed',
  cancel: 'file.cancelled',
};

/** Applies the command (see the top); `targets`: the webhook receivers. */
export function* applyControl(
  { dialect, guard }: RuleContext,
  targets: readonly string[],
  fileId: number,
  command: ControlCommand,
  now: string,
): Rule<ControlResult> {
  const file = yield* get<FileNow>(
    `SELECT name, status, control, start_at FROM files WHERE id = ?${dialect.forUpdate}`,
    fileId,
  );
  if (!file) throw new SmsdropError('E_USAGE', `no file ${fileId} in the journal`);
  const next = decideControl(file, command);
  const state = (c: Pick<ControlState, 'control' | 'startAt'>): ControlState => ({
    fileId,
    name: file.name,
    ...c,
  });
  if (!next)
    return {
      ...state({ control: file.control, startAt: file.start_at }),
      changed: false,
      cancelled: 0,
    };
  yield* run(
    'UPDATE files SET control = ?, start_at = ?, control_by = ?, control_at = ? WHERE id = ?',
    next.control,
    next.startAt,
    command.by,
    now,
    fileId,
  );
  const cancelled =
    next.control === FILE_CONTROL.cancelled
      ? yield* cancelPlanned({ dialect, guard }, fileId, now)
      : 0;
  // in the journal itself before the command returns (not only in SQLite's intents)
  yield* durable();
  const reason = `by ${command.by}${next.startAt !== null && command.action === 'approve' ? `, to start at ${next.startAt}` : ''}`;
  yield* recordEvent(targets, EVENTS[command.action], fileId, reason, now);
  return { ...state(next), changed: true, cancelled };
}

const CANCELLED_MSG = 'cancelled before it was requested';
const IN_DOUBT_MSG =
  'cancelled after a request that may have been received (no answer came): it may have been sent; not resent';

/**
 * The file's planned batches cancelled (BATCH_MOVES: planned -> cancelled), but for those an
 * earlier request of which may have been received (maybe_sent): those end unknown, as a batch
 * whose reqId may no longer be resent under does, never counted as cancelled. A batch that is
 * sending gets its outcome as any other; one a sender is moving to sending right now (its row
 * locked: Dialect.skipLocked) is left to it, and its attempt start, refused or not, decides. A
 * cancel thus never waits for a sender's transaction that waits for the file's row: no deadlock.
 * Returns the numbers cancelled.
 */
export function* cancelPlanned(
  { dialect, guard }: RuleContext,
  fileId: number,
  now: string,
): Rule<number> {
  const set = guard?.set;
  const also = set ? `, ${set[0]}` : '';
  const alsoParams = set?.slice(1) ?? [];
  let cancelled = 0;
  for (const [to, doubted, msg] of [
    [BATCH_STATE.unknown, '!=', IN_DOUBT_MSG],
    [BATCH_STATE.cancelled, '=', CANCELLED_MSG],
  ] as const) {
    const moved = yield* all<{ numbers: number | string }>(
      `UPDATE batches SET state = ?, status_code = NULL, status_msg = ?, updated_at = ${dialect.storedTime('?')}${also}
        WHERE id IN (SELECT id FROM batches WHERE file_id = ? AND state = 'planned'
          AND maybe_sent ${doubted} 0${dialect.skipLocked})
        RETURNING numbers`,
      to,
      msg,
      now,
      ...alsoParams,
      fileId,
    );
    if (to === BATCH_STATE.cancelled) for (const b of moved) cancelled += Number(b.numbers);
  }
  return cancelled;
}

/** The file's control as its operator sees it. */
export function* controlOf(fileId: number): Rule<ControlState | undefined> {
  const row = yield* get<{ name: string; control: FileControl | null; start_at: string | null }>(
    'SELECT name, control, start_at FROM files WHERE id = ?',
    fileId,
  );
  return row && { fileId, name: row.name, control: row.control, startAt: row.start_at };
}
