// A webhook event's body and its rows in the outbox, on either journal: written by the journal
// write it reports, in the same transaction, so that a crash loses neither or both; one row per
// receiver, in the order the receivers are set. The daemon (webhooks/deliver.ts) posts them.
import { randomUUID } from 'node:crypto';
import type { FileCounts } from '../ports/records.js';
import type { EventBody, FileAside, WebhookEvent } from '../ports/events.js';
import { get, type Rule, run } from './rule.js';

/** A file's name, status and counts as the event reports them (read in its transaction). */
const FILE_NOW = `SELECT f.name, f.status, v.rows, v.invalid, v.duplicates, f.repeats, v.accepted,
    v.failed, v.unknown, v.cancelled, v.pending, v.requests
  FROM files f JOIN v_files v ON v.id = f.id WHERE f.id = ?`;

/**
 * Adds `event` to the outbox once per receiver (`targets`: none, nothing is written). `file`: the
 * file's journal id, or what is known of a file without a record.
 */
export function* recordEvent(
  targets: readonly string[],
  event: WebhookEvent,
  file: number | FileAside | null,
  reason: string | undefined,
  at: string,
): Rule<void> {
  if (targets.length === 0) return;
  const body: EventBody = {
    id: randomUUID(),
    event,
    at,
    file: yield* fileOf(file),
    ...(reason !== undefined ? { reason } : {}),
  };
  const text = JSON.stringify(body);
  for (const target of targets)
    yield* run(
      'INSERT INTO webhook_outbox (event, target, body, created_at) VALUES (?, ?, ?, ?)',
      event,
      target,
      text,
      at,
    );
}

function* fileOf(file: number | FileAside | null): Rule<EventBody['file']> {
  if (file === null) return null;
  if (typeof file !== 'number')
    return { id: null, name: file.name, status: file.status, counts: null };
  const row = yield* get<FileCounts & { name: string; status: string }>(FILE_NOW, file);
  if (!row) return { id: file, name: '?', status: '?', counts: null };
  const { name, status, ...counts } = row;
  return { id: file, name, status, counts };
}
