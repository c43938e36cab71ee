// What a caller of processFile may ask of one run over a file (the CLI's send, the daemon).
import type { FileInspection } from '../intake/inspect.js';
import type { Awaitable } from '../ports/awaitable.js';
import type { SentBeforeLookup } from '../ports/index.js';

export interface ProcessOptions {
  /**
   * Send again a file whose bytes were already sent (a new generation), and every row whose
   * message another file already sent the same number (the repeat window is not asked).
   */
  resend?: boolean;
  /** Stop after planning: nothing is sent. Use with a throwaway journal. */
  dryRun?: boolean;
  /** A new record is held for approval (SMSDROP_APPROVAL): read and planned, nothing sent. */
  hold?: boolean;
  /** Name to record (default: the file's base name). */
  name?: string;
  /** The file's inspection, when the caller already made it (the daemon hashes every drop). */
  inspection?: FileInspection;
  /**
   * Other files' rows, for the repeat window (sentBefore.ts). Default: this journal's. A dry run
   * plans in a journal of its own and gives the real journal's.
   */
  sentBefore?: (fileId: number) => Awaitable<SentBeforeLookup | undefined>;
  /**
   * Called once this run has read the whole file into the journal, while its sending goes on: its
   * invalid rows are final from then on. Not called when the file was read by an earlier run.
   */
  onIntakeEnd?: (fileId: number) => void;
}
