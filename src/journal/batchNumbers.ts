// The small reads and names every writer of batches shares (sendMoves.ts, suppression.ts,
// planStore.ts, retry.ts).
import { randomUUID } from 'node:crypto';
import type { Journal } from './connection.js';
import { sql, sqlPluck } from './sql.js';
import type { BatchRecord } from '../ports/records.js';

/** A batch's numbers, in row order. */
export function batchPhones(db: Journal, batchId: number): string[] {
  const phones = sqlPluck(db, 'SELECT phones FROM batch_numbers WHERE batch_id = ?').get(
    batchId,
  ) as string | undefined;
  return phones ? phones.split(',') : [];
}

/**
 * next_attempt_at of a batch intake is still filling: never due. Intake releases it (0) when it
 * is full or when the file has been read to the end.
 */
export const HELD = Number.MAX_SAFE_INTEGER;

/** A fresh request id: 32 characters, random, so that no two journals or runs share one. */
export function newReqId(): string {
  return randomUUID().replaceAll('-', '');
}

export function getBatch(db: Journal, batchId: number): BatchRecord {
  return sql(db, 'SELECT * FROM batches WHERE id = ?').get(batchId) as BatchRecord;
}
