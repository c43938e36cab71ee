// What the daemon's file handling shares: the folders, the pipeline, the files running now, and
// the webhook events of moves in the file system.
import type { Logger } from '../log/logger.js';
import { describeError, redactSecrets } from '../log/redact.js';
import type { PipelineContext } from '../pipeline/index.js';
import type { Awaitable, FileAside, FileStore, OutboxStore, WebhookEvent } from '../ports/index.js';
import type { Folders } from './folders.js';

export interface FileLife {
  folders: Folders;
  ctx: PipelineContext;
  /** The journal's file records: identity, takings, lateness. */
  files: FileStore;
  /** The journal's webhook events. */
  outbox: OutboxStore;
  log: Logger;
  /** Files being processed: name in processing/ -> sha256 of its bytes. */
  active: Map<string, string>;
  /**
   * sha256 -> settles when the file running those bytes returns. Same bytes never run twice at
   * once.
   */
  busy: Map<string, Promise<void>>;
  /** Settles when the account pause's cooldown is over (one cooldown shared by every file). */
  cooldown(): Promise<void>;
  /**
   * Files taken from inbox/ by this process that have not run yet: their run is asked for now
   * (noteTaken). Any other run of a file in processing/ resumes one that stopped part-way (a
   * restart, an account pause), and is held when the file has not moved lately (lateResume).
   */
  fresh: Set<string>;
}

/**
 * A webhook event whose news is a move in the file system (to failed/), not a journal write:
 * written right after, in a transaction of its own (with a plain value, before this returns).
 * Never rejects: the file is filed already.
 */
export async function noteEvent(
  life: FileLife,
  event: WebhookEvent,
  file: number | FileAside | (() => Awaitable<number | FileAside>),
  reason?: string,
): Promise<void> {
  try {
    if (!life.outbox.hasTargets()) return;
    await life.outbox.recordEventNow(
      event,
      typeof file === 'function' ? await file() : file,
      reason === undefined ? undefined : redactSecrets(reason),
    );
  } catch (err) {
    life.log.warn(`cannot record the ${event} webhook event in the journal: ${describeError(err)}`);
  }
}

/** NAME.error.txt: what was not sent, why, and what to do. */
export function errorNote(name: string, reason: string, advice: string): string {
  return [
    `${name}: not sent`,
    '',
    `reason: ${reason}`,
    `when:   ${new Date().toISOString()}`,
    '',
    advice,
    '',
  ].join('\n');
}
