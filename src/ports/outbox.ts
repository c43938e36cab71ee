// The webhook outbox: events written with the journal changes they report, delivered later.
import type { Awaitable } from './awaitable.js';
import type { FileAside, OutboxRow, WebhookEvent } from './events.js';

export interface OutboxStore {
  /** The receivers (ids of their URLs) events are written for; none: no events are written. */
  setTargets(ids: readonly string[]): void;
  hasTargets(): boolean;
  /** Writes `event` now, in a transaction of its own. */
  recordEventNow(
    event: WebhookEvent,
    file: number | FileAside | null,
    reason?: string,
  ): Awaitable<void>;
  undelivered(target: string, limit: number): Awaitable<OutboxRow[]>;
  markDelivered(ids: readonly number[]): Awaitable<void>;
  noteDeliveryFailed(id: number, error: string): Awaitable<void>;
  /** False while the journal is closed or inside a transaction (delivery waits). */
  canDeliver(): boolean;
  /** False once the journal is closed: an answer that comes after is not recorded. */
  isOpen(): boolean;
}
