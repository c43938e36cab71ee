// What to tell about a file's run: the refusal to send on with another provider, the rows left
// to other files as repeats, and whether every row was accepted. Pure functions, used by the
// pipeline, the daemon and the commands (send, retry, resume).
import type { RepeatWindow } from '../config/settings/durations.js';
import { SmsdropError } from '../errors.js';
import { BUILT_IN_SIMULATOR } from '../provider/connect.js';
import { FILE_STATUS, type FileCounts, type FileRecord, type WaitingFile } from '../ports/index.js';

/**
 * The refusal to go on with a file planned for another provider or account than `provider`
 * (E_PROVIDER_CHANGED), or undefined. Its rows were planned for that account (its appIds, its
 * templates), and requests went there; sent on elsewhere, the rest would go from an account nobody
 * meant, or, planned for the built-in simulator, reach people whose list's first part never did.
 */
export function providerChange(
  file: FileRecord,
  provider: string | undefined,
): SmsdropError | undefined {
  if (!provider || !file.provider || file.provider === provider) return undefined;
  const fresh =
    file.provider === BUILT_IN_SIMULATOR
      ? '; to send it for real from its first row, use a new data directory (SMSDROP_DATA_DIR)'
      : '';
  return new SmsdropError(
    'E_PROVIDER_CHANGED',
    `${file.name} (file ${file.id}) was planned for ${file.provider}, but the provider settings now name ${provider}: it is not sent on with another provider or account. Set the provider settings back to finish it${fresh}`,
  );
}

/**
 * What to tell about a file's rows that other files had sent (the repeat window), or undefined
 * when there were none: the one event of this kind an operator must not miss.
 */
export function repeatsNote(
  counts: FileCounts,
  window: RepeatWindow | undefined,
  waiting: readonly WaitingFile[] = [],
): string | undefined {
  if (counts.repeats === 0) return undefined;
  const notYet = waiting.reduce((n, w) => n + w.rows, 0);
  const sending = waiting.filter((w) => w.inProgress);
  const idle = waitingNote(waiting);
  return (
    `${counts.repeats} row(s) not sent: another file sent the same message to their number${window ? ` within the repeat window (${window.text})` : ''}` +
    `${notYet > 0 ? ' or will' : ''}, so they count as duplicates (the result file names the file and line of each); to send them all the same: smsdrop send --resend FILE` +
    (sending.length > 0 ? `. Still being sent with ${namedFiles(sending)}` : '') +
    (idle ? `. ${idle}` : '')
  );
}

const namedFiles = (files: readonly WaitingFile[]) =>
  files.map((w) => `${w.name} (id ${w.id}): ${w.rows}`).join(', ');

/**
 * Every row of the file accepted: none invalid, failed, unknown or pending, and none of its
 * repeats left to a file that is not being sent now (nothing sends those until it goes on).
 * What exit 0 means for send and resume.
 */
export function everyRowAccepted(c: FileCounts, waiting: readonly WaitingFile[] = []): boolean {
  return (
    c.invalid + c.failed + c.unknown + c.cancelled + c.pending === 0 &&
    !waiting.some((w) => !w.inProgress)
  );
}

/**
 * Repeats left to files that are not being sent now (nothing sends them until those files go on),
 * named with how they go on; undefined when there are none. Used by send, retry and resume.
 */
export function waitingNote(waiting: readonly WaitingFile[]): string | undefined {
  const idle = waiting.filter((w) => !w.inProgress);
  return idle.length > 0
    ? `Not sent yet, waiting in ${namedFiles(idle)}: they go when that file goes on (${goesOn(idle)})`
    : undefined;
}

/**
 * How the idle files holding a file's repeats go on: given again; one read to the end, also from
 * the journal.
 */
function goesOn(idle: readonly WaitingFile[]): string {
  const resumable = idle.every((w) => w.status === FILE_STATUS.sending);
  return resumable
    ? 'give it again, or, its bytes gone or changed, smsdrop resume ID'
    : 'give it again: the same bytes continue it';
}
