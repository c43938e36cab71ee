// The ReadStore of the PostgreSQL journal (ports/reads.ts): every verb of FileReads, StatusReads,
// MetricsReads and ExportReads (with the result files' ResultReads), each answering as the SQLite
// journal's does on the same content (test/pg/reads.test.ts holds them to each other).
import type pg from 'pg';
import type { ReadStore } from '../ports/reads.js';
import type { CheckTurnPasses } from './intakeTurn.js';
import { pgExportReads } from './exportReads.js';
import { pgFileReads } from './reportReads.js';
import { pgMetricsReads } from './metricsReads.js';
import { pgStatusReads } from './statusReads.js';
import { pgResultReads } from './resultRows.js';

export interface PgReadOptions {
  /** Rows per page of the row iterators and the result pages (default: 500, 1,000 result lines). */
  pageRows?: number;
  /** The check turn's hand-overs the handle's intake counts (intakeTurn.ts). */
  passes?: CheckTurnPasses;
}

/** The ReadStore of the PostgreSQL journal reached through `pool` (schema migrated). */
export function pgReadStore(pool: pg.Pool, options: PgReadOptions = {}): ReadStore {
  return {
    ...pgFileReads(pool, options.passes),
    ...pgStatusReads(pool),
    ...pgMetricsReads(pool),
    ...pgExportReads(pool, pgResultReads(pool, options.pageRows), options.pageRows),
  };
}
