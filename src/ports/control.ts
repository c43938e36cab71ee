// An operator's hold on a file (files.control, files.start_at; states.ts FILE_CONTROL): approve,
// schedule, pause, resume, cancel. Written by whoever asks (the CLI, the HTTP API, any node) in
// the journal; the process sending the file obeys it, and no request of a file that is not free to
// go starts once the command has returned (the journals' attempt start checks it).
import type { Awaitable } from './awaitable.js';
import type { FileControl } from './states.js';

export type ControlAction = 'approve' | 'pause' | 'resume' | 'cancel';

export interface ControlCommand {
  action: ControlAction;
  /** approve: when the file may start (ISO 8601); none: now. */
  at?: string;
  /** Who asked, for the log and the webhook event: 'cli', 'api'. */
  by: string;
}

/** Where a file stands for its operator. */
export interface ControlState {
  fileId: number;
  name: string;
  control: FileControl | null;
  /** When a file free to go may start (ISO 8601); null: at once. */
  startAt: string | null;
}

export interface ControlResult extends ControlState {
  /** False: the file already was as asked (a second pause), nothing written. */
  changed: boolean;
  /** cancel: the numbers its cancelled batches held (never requested). */
  cancelled: number;
}

export interface ControlStore {
  /**
   * Applies the command in one transaction, with its webhook event (file.approved, file.paused,
   * file.resumed, file.cancelled). Throws E_CONTROL_REFUSED (the file's state does not allow it:
   * an ended file, a held one paused) or E_FILE_NOT_FOUND.
   */
  command(fileId: number, command: ControlCommand): Promise<ControlResult>;
  /** The file's control now (undefined: no such file). */
  control(fileId: number): Awaitable<ControlState | undefined>;
  /** Moves the planned batches of a cancelled file to cancelled; returns their numbers. */
  cancelLeftovers(fileId: number): Promise<number>;
}

/** Whether a file in this state may start requests at `now` (ms). */
export function freeToGo(state: Pick<ControlState, 'control' | 'startAt'>, now: number): boolean {
  return state.control === null && (state.startAt === null || Date.parse(state.startAt) <= now);
}

/** What a file waits for, in a word: held, scheduled, paused, cancelled; undefined: it goes. */
export function waitingFor(
  state: Pick<ControlState, 'control' | 'startAt'>,
  now: number,
): FileControl | 'scheduled' | undefined {
  if (state.control !== null) return state.control;
  return freeToGo(state, now) ? undefined : 'scheduled';
}
