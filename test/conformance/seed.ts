// Rows written into a conformance subject with plain statements, ids as the journal gives them: a
// file, its group, and batches in any state with their numbers and rows.
import assert from 'node:assert/strict';
import type { BatchRecord, BatchToSend } from '../../src/ports/records.js';
import type { BatchState } from '../../src/ports/states.js';
import type { Subject } from './journals.js';

export const AT = '2026-12-01T08:00:00.000Z';

export interface Seeded {
  fileId: number;
  groupId: number;
}

let files = 0;
let batches = 0;

/** A file (status `status`) with one group of app 'app', template '1', values ["x"]. */
export async function seedFile(j: Subject, status = 'sending', datas = '["x"]'): Promise<Seeded> {
  const file = await j.get<{ id: number }>(
    `INSERT INTO files (sha256, name, size, encoding, status, created_at)
     VALUES (?, ?, 100, 'utf-8', ?, ?) RETURNING id`,
    `sha-${process.pid}-${++files}`,
    `f${files}.csv`,
    status,
    AT,
  );
  return { fileId: file!.id, groupId: await seedGroup(j, file!.id, datas) };
}

/** A group of the file (one the FileStore made has none until intake): app 'app', template '1'. */
export async function seedGroup(j: Subject, fileId: number, datas = '["x"]'): Promise<number> {
  const group = await j.get<{ id: number }>(
    `INSERT INTO groups (file_id, key_hash, app_id, template_id, datas)
     VALUES (?, 11, 'app', '1', ?) RETURNING id`,
    fileId,
    datas,
  );
  return group!.id;
}

/** A batch in `state` holding `phones`, each with a valid row (lines from `firstLine`). */
export async function seedBatch(
  j: Subject,
  at: Seeded,
  state: BatchState,
  phones: readonly string[],
  firstLine = 2,
): Promise<number> {
  const batch = await j.get<{ id: number }>(
    `INSERT INTO batches (file_id, group_id, req_id, numbers, state, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ${j.rules.dialect.storedTime('?')}, ${j.rules.dialect.storedTime('?')}) RETURNING id`,
    at.fileId,
    at.groupId,
    `req-${process.pid}-${++batches}`,
    phones.length,
    state,
    AT,
    AT,
  );
  const id = batch!.id;
  await j.run('INSERT INTO batch_numbers (batch_id, phones) VALUES (?, ?)', id, phones.join(','));
  for (const [i, phone] of phones.entries())
    await j.run(
      `INSERT INTO rows (file_id, line, phone_raw, phone, group_id, intake, batch_id)
       VALUES (?, ?, ?, ?, ?, 'valid', ?)`,
      at.fileId,
      firstLine + i,
      phone,
      phone,
      at.groupId,
      id,
    );
  return id;
}

/** The batch as the journal holds it (the columns both journals have). */
export async function batchOf(j: Subject, id: number): Promise<BatchRecord> {
  const found = await j.get<BatchRecord>(
    `SELECT id, file_id, group_id, parent_id, req_id, numbers, state, attempts, deferrals,
       maybe_sent, first_doubt_at, next_attempt_at, status_code, status_msg
     FROM batches WHERE id = ?`,
    id,
  );
  if (!found) throw new Error(`batch ${id} is not in the ${j.kind} journal`);
  return found;
}

/** An attempt of the batch, started at `startedAt`, still open (no outcome). */
export async function seedOpenAttempt(
  j: Subject,
  batchId: number,
  reqId: string | null,
  startedAt = AT,
): Promise<number> {
  const attempt = await j.get<{ id: number }>(
    `INSERT INTO attempts (batch_id, req_id, started_at) VALUES (?, ?, ${j.rules.dialect.storedTime('?')}) RETURNING id`,
    batchId,
    reqId,
    startedAt,
  );
  return attempt!.id;
}

/** A row intake set aside (`invalid`, with its reason; or `duplicate` of row `duplicateOf`). */
export async function seedRow(
  j: Subject,
  at: Seeded,
  line: number,
  row: { intake: 'invalid'; error: string } | { intake: 'duplicate'; duplicateOf: number },
): Promise<number> {
  const inserted = await j.get<{ id: number }>(
    `INSERT INTO rows (file_id, line, phone_raw, phone, group_id, intake, error, duplicate_of)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    at.fileId,
    line,
    `raw-${line}`,
    row.intake === 'invalid' ? null : `1390000${String(line).padStart(4, '0')}`,
    row.intake === 'invalid' ? null : at.groupId,
    row.intake,
    row.intake === 'invalid' ? row.error : null,
    row.intake === 'invalid' ? null : row.duplicateOf,
  );
  return inserted!.id;
}

/** An attempt of the batch that was answered: `outcome`, between `startedAt` and `finishedAt`. */
export async function seedAnsweredAttempt(
  j: Subject,
  batchId: number,
  outcome: string,
  startedAt = AT,
  finishedAt = AT,
  statusCode: string | null = null,
): Promise<number> {
  const attempt = await j.get<{ id: number }>(
    `INSERT INTO attempts (batch_id, req_id, started_at, finished_at, outcome, status_code)
     VALUES (?, 'r', ${j.rules.dialect.storedTime('?')}, ${j.rules.dialect.storedTime('?')}, ?, ?) RETURNING id`,
    batchId,
    startedAt,
    finishedAt,
    outcome,
    statusCode,
  );
  return attempt!.id;
}

/** The file's due batches, as the sender claims them. */
export async function claimDue(j: Subject, fileId: number): Promise<BatchToSend[]> {
  const { first, due } = await j.handle.send.claimDueBatches({
    fileId,
    now: Date.now(),
    afterId: 0,
    limit: 100,
    skip: new Set(),
  });
  return [...first, ...due];
}

/** The batch claimed, as the sender does, and its attempt started: its id, or undefined. */
export async function startClaimed(
  j: Subject,
  at: Seeded,
  batchId: number,
): Promise<number | undefined> {
  const batch = (await claimDue(j, at.fileId)).find((b) => b.batch.id === batchId);
  assert.ok(batch, `batch ${batchId} is due`);
  const [attemptId] = await j.handle.send.startAttempts([
    { batch: batch.batch, reqId: batch.batch.req_id },
  ]);
  return attemptId;
}
