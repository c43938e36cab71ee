// Webhook events and the outbox's rows (outbox.ts): what an event is named and carries.
import type { FileCounts } from './records.js';

export const WEBHOOK_EVENTS = [
  'file.taken',
  'file.finished',
  'file.failed',
  'file.late',
  'file.held',
  'file.approved',
  'file.paused',
  'file.resumed',
  'file.cancelled',
  'file.taken_over',
  'sending.paused',
  'sending.resumed',
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The JSON body of an event, as posted and signed. */
export interface EventBody {
  /**
   * A random UUID given when the event is written: the same for every receiver and every repeat,
   * and never the same for two events, on any host or after a backup is restored, so that a
   * receiver can drop a repeat by it.
   */
  id: string;
  event: WebhookEvent;
  at: string;
  file: { id: number | null; name: string; status: string; counts: FileCounts | null } | null;
  reason?: string;
}

/**
 * About a file the journal does not know (not a .csv, unreadable): its name and what became of it.
 */
export interface FileAside {
  name: string;
  status: string;
}

export interface OutboxRow {
  id: number;
  event: WebhookEvent;
  body: string;
  created_at: string;
  attempts: number;
}
