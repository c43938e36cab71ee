// What `smsdrop report` says, as data: one line per file from v_files, or for one file its counts,
// its failures by status code with the code's class and what to do about it, the commonest
// reasons rows were invalid, and its timing. Read-only; every query is an index range.
import {
  CLASS_ADVICE,
  classifyStatusCode,
  CODE_MEANINGS,
  isKnownStatusCode,
} from '../provider/codes.js';
import type { FileLine, FileReads } from '../ports/index.js';

export type { FileLine } from '../ports/index.js';

/** Columns of v_files, in order: also the keys of the JSON report. */
export const FILE_COLUMNS = [
  'id',
  'name',
  'sha256',
  'status',
  'rows',
  'invalid',
  'duplicates',
  'accepted',
  'failed',
  'unknown',
  'pending',
  'requests',
  'started_at',
  'finished_at',
  'cancelled',
  'control',
  'start_at',
] as const;

export interface FailureLine {
  status: 'failed' | 'unknown';
  /** null: no status code (the provider was not reached, or gave no answer). */
  status_code: string | null;
  /** The code's class (provider/codes.ts), or "no answer" / "not sent" without a code. */
  class: string;
  count: number;
  what_to_do: string;
  sample_message: string | null;
}

export interface Timing {
  requests: number;
  first_send: string | null;
  last_send: string | null;
  /**
   * Requests over the time from first to last send; null with fewer than two moments to measure.
   */
  requests_per_second: number | null;
}

export interface FileReport extends FileLine {
  /**
   * Of the duplicates, the rows whose message another file sends their number (the repeat window).
   */
  repeats: number;
  failures: FailureLine[];
  invalid_reasons: Array<{ reason: string; count: number }>;
  timing: Timing;
}

export async function fileReport(reads: FileReads, fileId: number): Promise<FileReport> {
  const line = await reads.fileLine(fileId);
  return {
    ...line,
    repeats: await reads.repeatsOf(fileId),
    failures: await failuresOf(reads, fileId),
    invalid_reasons: await reads.invalidReasons(fileId),
    timing: await timingOf(reads, fileId),
  };
}

async function failuresOf(reads: FileReads, fileId: number): Promise<FailureLine[]> {
  return (await reads.failureCounts(fileId)).map((l) => ({
    ...l,
    ...adviceFor(l.status, l.status_code, fileId),
  }));
}

/**
 * The class of a failure and a plain-language "what to do": the code's meaning (codes.ts), then
 * how to resend. Unknown rows may already have arrived, so their advice is to check first.
 */
export function adviceFor(
  status: 'failed' | 'unknown',
  code: string | null,
  fileId: number,
): { class: string; what_to_do: string } {
  const cls = code === null ? undefined : classifyStatusCode(code);
  const meaning =
    code === null || cls === undefined ? undefined : (CODE_MEANINGS[code] ?? CLASS_ADVICE[cls]);
  if (status === 'unknown') {
    const what = meaning ? `${code}: ${meaning}` : 'no answer came';
    return {
      class: cls ?? 'no answer',
      what_to_do: `may have been sent (${what}); check with the provider before: smsdrop retry ${fileId} --unknown`,
    };
  }
  if (cls === undefined)
    return {
      class: 'not sent',
      what_to_do: `nothing was sent (the provider was not reached, or kept failing). Resend: smsdrop retry ${fileId} --failed`,
    };
  const fixRows = `fix them (smsdrop export ${fileId} --status failed, then drop the fixed file into the inbox)`;
  const followUp: Partial<Record<string, string>> = {
    'number-rejected': `Remove or ${fixRows}, or once the block is lifted: smsdrop retry ${fileId} --failed`,
    'batch-rejected': `Resending unchanged cannot help: ${fixRows}, or once fixed at the provider: smsdrop retry ${fileId} --failed`,
  };
  // Counted apart, so that a code the tables miss shows in the report instead of hiding in a class.
  const shownClass = code !== null && !isKnownStatusCode(code) ? 'unknown provider code' : cls;
  return {
    class: shownClass,
    what_to_do: `${meaning}. ${followUp[cls] ?? `Resend later: smsdrop retry ${fileId} --failed`}`,
  };
}

async function timingOf(reads: FileReads, fileId: number): Promise<Timing> {
  const t = await reads.requestTiming(fileId);
  const seconds =
    t.first_send && t.last_send ? (Date.parse(t.last_send) - Date.parse(t.first_send)) / 1000 : 0;
  return {
    ...t,
    requests_per_second: seconds > 0 ? Math.round((t.requests / seconds) * 100) / 100 : null,
  };
}
