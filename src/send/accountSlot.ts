// A request's slot of the account's concurrency when other nodes send on the account too
// (ports/account.ts): held from the attempt's write until the answer is in.
import type { AccountSlots, SlotRelease } from '../ports/account.js';
import type { SendOutcome } from '../provider/types.js';
import type { StartTicket } from './rate.js';

/** Holds nothing: one process alone sends on the account. */
const NO_SLOT: SlotRelease = Object.assign(() => {}, { stillHeld: () => true });

/**
 * One of the account's request slots, held from the attempt's write until the answer is in;
 * undefined (the ticket given back) when sending stops first.
 */
export async function accountSlot(
  account: AccountSlots | undefined,
  stopSignal: AbortSignal | undefined,
  ticket: StartTicket,
): Promise<SlotRelease | undefined> {
  if (!account) return NO_SLOT;
  const slot = await account.take(stopSignal);
  if (!slot) ticket.giveBack();
  return slot;
}

/**
 * How a written request ended, for its slot: answered when the provider is done with it (an HTTP
 * error and a malformed body are answers too); unanswered when no answer came (a timeout, a broken
 * connection, the send threw), which the provider may still be counting: its slot waits.
 */
export function howEnded(outcome: SendOutcome | undefined): 'answered' | 'unanswered' {
  if (outcome === undefined) return 'unanswered';
  return outcome.kind !== 'in-doubt' || outcome.httpStatus !== undefined
    ? 'answered'
    : 'unanswered';
}
