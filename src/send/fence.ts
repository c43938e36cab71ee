// The last check before a request leaves, for a node of a cluster (PostgreSQL): its batch's lease
// must still hold by the node's own monotonic clock as the request is about to be written to its
// socket (the provider client asks `mayStart` then, once its connection is ready), so that a node
// that stopped or waited for a connection past its lease sends nothing another node may resend;
// and so must its slot of the account's concurrency, so that its request never joins another
// node's in the slot that node took after it.
// A request so stopped was never written: its attempt is put back, not counted, not a sign of the
// provider's health, and the batch goes to whichever node holds it next.
import type { SlotRelease } from '../ports/account.js';
import type { BatchRecord } from '../ports/records.js';
import type { SendStore } from '../ports/send.js';
import type { SendOptions, SendOutcome } from '../provider/types.js';

/** The client's last check for this batch's request, when the journal has one. */
export function leaseCheck(send: SendStore, batchId: number, slot: SlotRelease): SendOptions {
  const mayStillStart = send.mayStillStart?.bind(send);
  return mayStillStart ? { mayStart: () => mayStillStart(batchId) && slot.stillHeld() } : {};
}

/** The request was stopped by that check: nothing was written. */
export function fenced(outcome: SendOutcome): boolean {
  return outcome.kind === 'not-sent' && outcome.fenced === true;
}

/** Its attempt put back: planned, not counted, outcome `not-sent` (refused if no longer held). */
export function putBackFenced(
  send: SendStore,
  batch: Pick<BatchRecord, 'id'>,
  attemptId: number,
): Promise<void> {
  const reason = 'not sent: the lease of this node ran out before the request was written';
  return send.recordOutcomes([
    {
      batchId: batch.id,
      transition: {
        to: 'planned',
        nextAttemptAt: 0,
        doubt: 0,
        refundAttempt: true,
        statusCode: null,
        statusMsg:
          'not sent: the lease of this node ran out before the request left; sent again later',
      },
      attempt: { id: attemptId, result: { outcome: 'not-sent', statusCode: null, reason } },
    },
  ]);
}

/**
 * Gives up the claims of a pass's batches that got no outcome: the pass ended before their turn
 * (a failure, a stop, a pause) or their request did not start. Kept, another process could not
 * send them while this one lives, and this one may never come back to the file (helping other
 * nodes, it looks only at batches no live process holds). If the journal cannot be told, the
 * claims lapse: the store no longer renews them.
 */
export async function releaseUnsent(send: SendStore, unsent: ReadonlySet<number>): Promise<void> {
  if (unsent.size === 0 || !send.releaseClaims) return;
  await send.releaseClaims([...unsent]).catch(() => undefined);
}
