// A request's slot of the account's concurrency when other nodes send on the account too
// (ports/account.ts): held from the attempt's write until the answer is in.
import type { AccountSlots, SlotRelease } from '../ports/account.js';
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
