// The chaos suite's verdict. Deliveries are judged from the simulator's record alone: each line is
// a request the provider accepted (a request cut off after acceptance is in it too: the provider
// took it; a resend refused as a repeat, 160054, is not, since nothing was sent again). The files'
// end states come from the journal's v_files view, and are checked against what the generator
// says each file holds (its rows, its invalid rows), not against smsdrop's own idea of them.
import Database from '../src/journal/sqlite.js';
import { existsSync } from 'node:fs';
import type { AcceptedRecord } from '../src/simulator/types.js';
import { messageKey } from './files.js';
import { openPool } from '../src/pgjournal/schema.js';
import {
  type BatchRow,
  CANCELLED_BATCHES_SQL,
  type CancelledBatch,
  groupBatches,
} from './control.js';

export interface DeliveryCheck {
  /** (message, number) pairs in accepted requests of this app, repeats included. */
  deliveries: number;
  /** Accepted requests of this app. */
  acceptedRequests: number;
  expected: number;
  /** Messages delivered more than once, and how many extra deliveries they got. */
  duplicates: number;
  extraDeliveries: number;
  missing: number;
  unexpected: number;
  /** A few of each, for the report. */
  samples: { duplicates: string[]; missing: string[]; unexpected: string[] };
}

const SAMPLES = 5;

/**
 * Counts each expected message's deliveries in the record (only requests of `appId`). `required`:
 * the messages that must be delivered (default: all expected; a cancelled file's may not be).
 */
export function checkDeliveries(
  records: readonly AcceptedRecord[],
  appId: string,
  expected: ReadonlySet<string>,
  required: ReadonlySet<string> = expected,
): DeliveryCheck {
  const counts = new Map<string, number>();
  let deliveries = 0;
  let acceptedRequests = 0;
  for (const r of records) {
    if (r.appId !== appId) continue;
    acceptedRequests++;
    for (const to of r.to) {
      const key = messageKey(r.appId, r.templateId, r.datas, to);
      counts.set(key, (counts.get(key) ?? 0) + 1);
      deliveries++;
    }
  }
  const twice = [...counts].filter(([, n]) => n > 1);
  const missing = [...required].filter((key) => !counts.has(key));
  const unexpected = [...counts.keys()].filter((key) => !expected.has(key));
  return {
    deliveries,
    acceptedRequests,
    expected: expected.size,
    duplicates: twice.length,
    extraDeliveries: twice.reduce((sum, [, n]) => sum + n - 1, 0),
    missing: missing.length,
    unexpected: unexpected.length,
    samples: {
      duplicates: twice.slice(0, SAMPLES).map(([key, n]) => `${key} x${n}`),
      missing: missing.slice(0, SAMPLES),
      unexpected: unexpected.slice(0, SAMPLES),
    },
  };
}

/** One row of v_files. */
export interface JournalFile {
  id: number;
  name: string;
  status: string;
  rows: number;
  invalid: number;
  duplicates: number;
  accepted: number;
  failed: number;
  unknown: number;
  pending: number;
  /** Rows its cancel ended `cancelled`. */
  cancelled: number;
  /** An operator's hold: paused, cancelled (held) or null. */
  control: string | null;
}

const FILES_SQL =
  'SELECT id, name, status, rows, invalid, duplicates, accepted, failed, unknown, pending, cancelled, control FROM v_files ORDER BY id';

/** Every file of the journal (read-only; [] when there is no journal yet). */
export function journalFiles(dataDir: string): JournalFile[] {
  const file = `${dataDir}/journal.sqlite`;
  if (!existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(FILES_SQL).all() as JournalFile[];
  } finally {
    db.close();
  }
}

/** Every file of a PostgreSQL journal, as journalFiles reads SQLite's. */
export async function pgJournalFiles(url: string): Promise<JournalFile[]> {
  const pool = openPool(url, 1);
  try {
    const { rows } = await pool.query<JournalFile>(FILES_SQL);
    return rows.map((r) => ({ ...r, cancelled: Number(r.cancelled) }));
  } finally {
    await pool.end();
  }
}

/** The batches of the files cancelled in a SQLite journal, with their attempts' starts. */
export function cancelledBatches(dataDir: string): CancelledBatch[] {
  const file = `${dataDir}/journal.sqlite`;
  if (!existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return groupBatches(db.prepare(CANCELLED_BATCHES_SQL).all() as BatchRow[]);
  } finally {
    db.close();
  }
}

/** The same from a PostgreSQL journal. */
export async function pgCancelledBatches(url: string): Promise<CancelledBatch[]> {
  const pool = openPool(url, 1);
  try {
    return groupBatches((await pool.query<BatchRow>(CANCELLED_BATCHES_SQL)).rows);
  } finally {
    await pool.end();
  }
}

export interface FileExpectation {
  name: string;
  rows: number;
  invalid: number;
  /** Its cancel returned: rows may end cancelled, unknown (checkCancels says which) or failed. */
  cancelled?: boolean;
}

/**
 * What is wrong with the files' end states, one line each: a generated file missing from the
 * journal or in it twice, a status other than done, statuses not adding up to the rows, rows
 * left pending or unknown, or an invalid count other than the generator's.
 */
export function checkJournalFiles(
  files: readonly JournalFile[],
  wanted: readonly FileExpectation[],
): string[] {
  const problems: string[] = [];
  for (const want of wanted) {
    const found = files.filter((f) => f.name === want.name);
    if (found.length !== 1) {
      problems.push(`${want.name}: ${found.length} journal entries, expected 1`);
      continue;
    }
    const f = found[0]!;
    const sum =
      f.invalid + f.duplicates + f.accepted + f.failed + f.unknown + f.pending + f.cancelled;
    const what = `${f.name} (id ${f.id})`;
    if (f.status !== 'done') problems.push(`${what}: status ${f.status}, expected done`);
    if (f.rows !== want.rows)
      problems.push(`${what}: ${f.rows} rows in the journal, the file has ${want.rows}`);
    if (sum !== f.rows) problems.push(`${what}: statuses add up to ${sum}, not its ${f.rows} rows`);
    if (f.pending > 0) problems.push(`${what}: ${f.pending} rows still pending`);
    if (f.cancelled > 0 && !want.cancelled)
      problems.push(`${what}: ${f.cancelled} rows cancelled, though no cancel of it returned`);
    if (f.unknown > 0 && !want.cancelled) problems.push(`${what}: ${f.unknown} rows still unknown`);
    if (f.failed > 0 && !want.cancelled) problems.push(`${what}: ${f.failed} rows failed`);
    if (f.invalid !== want.invalid)
      problems.push(
        `${what}: ${f.invalid} invalid rows, the file has ${want.invalid} broken numbers`,
      );
  }
  return problems;
}
