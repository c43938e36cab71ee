// The numbers never to send to (smsdrop suppress, and numbers the provider refused for good).
import type { Awaitable } from './awaitable.js';
import type { SuppressedNumber } from './records.js';

export interface SuppressionList {
  /** Returns how many were added. */
  add(phones: readonly string[], reason: string, source: string): Awaitable<number>;
  /** Returns how many were removed. */
  remove(phones: readonly string[]): Awaitable<number>;
  list(): Awaitable<SuppressedNumber[]>;
}
