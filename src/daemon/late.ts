// Files that stopped part-way and rested too long: not resumed unasked (field-notes: a schedule
// long past should not fire by surprise).
import { FILE_STATUS } from '../ports/states.js';
import { formatDuration } from '../log/duration.js';
import { closedMsPerDay } from '../send/window.js';
import type { FileLife } from './fileLife.js';

export interface LateResume {
  fileId: number;
  /** Requests went out for it (its result file says what became of each row). */
  requested: boolean;
  reason: string;
  advice: string;
}

/**
 * A file that stopped part-way and has not moved for longer than resumeWithin (field-notes: a
 * schedule long past should not fire by surprise). A campaign dropped on Monday that a crash or
 * an account problem held up until Thursday is not sent on Thursday unasked: it goes to failed/
 * with a note, and dropping it into inbox/ again sends the rest (the same bytes go on where they
 * stopped: nothing goes twice; that taking is noted, so a pause or restart after it counts from
 * it). Undefined when it may go on.
 */
export async function lateResume(life: FileLife, sha256: string): Promise<LateResume | undefined> {
  const { config } = life.ctx;
  if (config.resumeWithin.ms === 0) return undefined;
  const record = await life.files.identify(sha256);
  if (!record || (record.status !== FILE_STATUS.intake && record.status !== FILE_STATUS.sending))
    return undefined;
  // An operator holds it (or cancelled it): the wait is theirs, no surprise.
  if (record.control !== null) return undefined;
  const lateness = await life.files.lateness(record.id);
  // An approval, a resume or a start time is the operator's word that it goes now.
  const movedAt = Math.max(
    ...[lateness.lastProgressAt, record.control_at, record.start_at]
      .filter((at) => at !== null)
      .map((at) => Date.parse(at)),
  );
  const idleMs = Date.now() - movedAt;
  const limit = lateLimit(config);
  if (!(idleMs > limit.ms)) return undefined;
  const requested = lateness.requestsMade > 0;
  return {
    fileId: record.id,
    requested,
    reason: `not resumed: it has not moved for ${formatDuration(idleMs / 1000)} (since ${new Date(movedAt).toISOString()}), longer than ${limit.text}; a message that late could reach people by surprise`,
    advice:
      `${requested ? 'Requests went out for it before; NAME.result.csv says what became of each row. ' : 'Nothing in it was sent. '}` +
      'To send the rest now, drop this same file into inbox/ again (not a copy saved again: its rows sent longer ago than SMSDROP_REPEAT_WINDOW would go again): it goes on where it stopped, and nothing is sent twice. To leave it unsent, leave it here.',
  };
}

/**
 * How long a file may rest before it is late: resumeWithin, or longer when smsdrop's own limits
 * can keep a file waiting longer (the sending window's closed hours and a message window's span
 * together): a wait the operator set up is no surprise.
 */
export function lateLimit(config: FileLife['ctx']['config']): { ms: number; text: string } {
  const plannedMs =
    (config.sendWindow ? closedMsPerDay(config.sendWindow) : 0) + (config.messageWindow?.ms ?? 0);
  const setting = `SMSDROP_RESUME_WITHIN (${config.resumeWithin.text})`;
  if (plannedMs <= config.resumeWithin.ms) return { ms: config.resumeWithin.ms, text: setting };
  return {
    ms: plannedMs,
    text: `${formatDuration(plannedMs / 1000)}, what the sending and message windows can make a file wait (more than ${setting})`,
  };
}
