// The two-thread floor's group count (twoThreads.ts) in a fixed table: each group's rows are
// counted in the slot its values hash to, as smsdrop's count thread does (intake/groupCounts.ts).
// Groups that share a slot are counted together, which only makes them wait longer. The table is
// a buffer, handed to the intake thread without a copy, and no key string is kept.

export const SLOT_BITS = 20;
const MASK = (1 << SLOT_BITS) - 1;

/** FNV-1a of text[from, to): the same slot for the same characters, wherever they are held. */
export function slotOf(text: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0) & MASK;
}
