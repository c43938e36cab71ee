// Where the send process spent its wall time, read afterwards from the timestamps the journal
// keeps anyway (no timing code in the product). Each phase is given as [start, end] seconds after
// the process was spawned, so phases that overlap (sending while still reading) show as such.
//   startup   spawn -> files.created_at: Node start, settings, journal open, hashing the file.
//   intake    files.created_at -> end of intake (below).
//   planning  end of intake -> the last batch planned (batches.created_at, not split children).
//   sending   first attempt started -> last attempt finished.
//   finish    last attempt -> exit: file marked done, result CSVs written, counts, close.
// The end of intake depends on the journal's schema, which is being reworked:
//   - rows with updated_at (planning after intake): the last invalid or duplicate row written,
//     rows that no outcome ever updates (the file has one every few hundred rows);
//   - rows written once, batches planned during intake: the last batch opened, and planning has
//     no phase of its own (it is inside intake).
// Ends are accurate to one chunk of rows (1000) or of batches (200).
import Database from '../src/journal/sqlite.js';
import { SQLITE_DIALECT } from '../src/journal/rules.js';

export interface Phase {
  startS: number;
  endS: number;
  seconds: number;
}

export type PhaseName = 'startup' | 'intake' | 'planning' | 'sending' | 'finish';
export type Phases = Partial<Record<PhaseName, Phase>>;

export interface PhaseReport {
  phases: Phases;
  /** How intake's end was found, or why a phase is missing. */
  note: string;
  /**
   * Requests started while intake ran and after it: how many, and their mean time from the
   * attempt's start to its recorded answer (ms). The gap between the two is what intake's chunks
   * cost the requests that share its thread.
   */
  requests: { duringIntake: RequestTimes; afterIntake: RequestTimes };
}

export interface RequestTimes {
  count: number;
  meanMs: number | null;
}

interface JournalTimes {
  /** Planning runs after intake, and rows keep an updated_at (the first schema). */
  separatePlanning: boolean;
  fileCreated: string | null;
  intakeEnd: string | null;
  firstBatch: string | null;
  lastBatch: string | null;
  firstAttempt: string | null;
  lastAttempt: string | null;
}

function readTimes(db: Database.Database): JournalTimes {
  const one = (text: string) => (db.prepare(text).pluck().get() as string | null) ?? null;
  const rowColumns = db
    .prepare('SELECT name FROM pragma_table_info(?)')
    .pluck()
    .all('rows') as string[];
  const separatePlanning = rowColumns.includes('updated_at') && rowColumns.includes('status');
  return {
    separatePlanning,
    fileCreated: one('SELECT min(created_at) FROM files'),
    intakeEnd: separatePlanning
      ? one("SELECT max(updated_at) FROM rows WHERE status IN ('invalid', 'duplicate')")
      : null,
    firstBatch: one(`SELECT ${SQLITE_DIALECT.timeText('min(created_at)')} FROM batches`),
    lastBatch: one(
      `SELECT ${SQLITE_DIALECT.timeText('max(created_at)')} FROM batches WHERE parent_id IS NULL`,
    ),
    firstAttempt: one(`SELECT ${SQLITE_DIALECT.timeText('min(started_at)')} FROM attempts`),
    lastAttempt: one(`SELECT ${SQLITE_DIALECT.timeText('max(finished_at)')} FROM attempts`),
  };
}

/** Attempts started before / from `intakeEnd` (ISO time), with their mean duration. */
function requestTimes(db: Database.Database, intakeEnd: string | null): PhaseReport['requests'] {
  const started = SQLITE_DIALECT.timeText('started_at');
  const finished = SQLITE_DIALECT.timeText('finished_at');
  const times = db.prepare(
    `SELECT count(*) AS count, avg((julianday(${finished}) - julianday(${started})) * 86400000.0) AS meanMs
     FROM attempts WHERE finished_at IS NOT NULL AND (${started} < ?) = ?`,
  );
  const of = (during: boolean): RequestTimes => {
    const r = times.get(intakeEnd ?? '', during ? 1 : 0) as {
      count: number;
      meanMs: number | null;
    };
    return { count: r.count, meanMs: r.meanMs === null ? null : Math.round(r.meanMs * 10) / 10 };
  };
  return { duringIntake: of(true), afterIntake: of(false) };
}

/** Phases of one send run; a phase whose marks are missing (nothing journalled) is left out. */
export function readPhases(
  journalFile: string,
  startedAtMs: number,
  endedAtMs: number,
): PhaseReport {
  const db = new Database(journalFile, { readonly: true, fileMustExist: true });
  try {
    const t = readTimes(db);
    const at = (iso: string | null) =>
      iso === null ? undefined : (Date.parse(iso) - startedAtMs) / 1000;
    const end = (endedAtMs - startedAtMs) / 1000;
    const phases: Phases = {};
    const put = (name: PhaseName, startS: number | undefined, endS: number | undefined) => {
      if (startS === undefined || endS === undefined) return;
      phases[name] = { startS, endS, seconds: Math.max(0, endS - startS) };
    };
    const fileCreated = at(t.fileCreated);
    const intakeEnd = t.separatePlanning ? (t.intakeEnd ?? t.firstBatch) : t.lastBatch;
    put('startup', 0, fileCreated);
    put('intake', fileCreated, at(intakeEnd));
    if (t.separatePlanning) put('planning', at(intakeEnd), at(t.lastBatch));
    put('sending', at(t.firstAttempt), at(t.lastAttempt));
    put('finish', at(t.lastAttempt), end);
    const note = t.separatePlanning
      ? 'intake ends at the last invalid/duplicate row written; planning follows it'
      : 'batches are planned during intake: intake ends at the last batch opened, planning is inside it';
    return { phases, note, requests: requestTimes(db, intakeEnd) };
  } finally {
    db.close();
  }
}
