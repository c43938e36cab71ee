// The operator's hold on a file (ports/control.ts), as the sender reads it: before each page of
// batches, and between passes.
import { freeToGo, waitingFor } from '../ports/control.js';
import { FILE_CONTROL } from '../ports/states.js';
import type { ControlStore } from '../ports/control.js';

/** What the sender reads a file's hold with (SendContext's part). */
export interface ControlContext {
  control?: Pick<ControlStore, 'control' | 'cancelLeftovers'>;
  now?: () => number;
}

/** Sending stopped because an operator holds the file: nothing starts until that changes. */
export interface HeldResult {
  state: 'held';
  waitingFor: 'held' | 'paused' | 'scheduled';
  startAt: string | null;
}

/**
 * The operator's hold on the file, if any; a cancelled file's batches that went back to planned
 * since (an answer asking for a retry) are cancelled too, and it goes on to its end.
 */
export async function heldBy(ctx: ControlContext, fileId: number): Promise<HeldResult | undefined> {
  const state = await ctx.control?.control(fileId);
  if (!state) return undefined;
  const waiting = waitingFor(state, (ctx.now ?? Date.now)());
  if (waiting === undefined) return undefined;
  if (waiting === FILE_CONTROL.cancelled) {
    await ctx.control!.cancelLeftovers(fileId);
    return undefined;
  }
  return { state: 'held', waitingFor: waiting, startAt: state.startAt };
}

/** Whether the file may start requests now (no operator's hold). */
export async function freeNow(ctx: ControlContext, fileId: number): Promise<boolean> {
  const state = await ctx.control?.control(fileId);
  return !state || freeToGo(state, (ctx.now ?? Date.now)());
}
