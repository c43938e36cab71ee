// Small reads and names of batches on SQLite: a batch's numbers and record, and the mark of a batch
// intake still fills (planStore.ts).
import type { Journal } from './connection.js';
import { sql } from './sql.js';
import { runRule, SQLITE_DIALECT } from './rules.js';
import { batchPhones as batchPhonesRule } from '../journalRules/outcomes.js';
import type { BatchRecord } from '../ports/records.js';

/** A batch's numbers, in row order (the rule's, journalRules/outcomes.ts). */
export function batchPhones(db: Journal, batchId: number): string[] {
  return runRule(db, batchPhonesRule(SQLITE_DIALECT, batchId));
}

/**
 * next_attempt_at of a batch intake is still filling: never due. Intake releases it (0) when it
 * is full or when the file has been read to the end.
 */
export const HELD = Number.MAX_SAFE_INTEGER;

export function getBatch(db: Journal, batchId: number): BatchRecord {
  return sql(db, 'SELECT * FROM batches WHERE id = ?').get(batchId) as BatchRecord;
}
