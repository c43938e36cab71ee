// Which journal a command uses: SQLite's in the data directory, or PostgreSQL's when
// SMSDROP_DATABASE_URL is set. Both give the same ports (JournalHandle, JournalReader);
// the callers open them here and never ask which one they got.
//
// Not in journal/index.ts: pgjournal/ reads journal/ (its migrations mirror SQLite's), so
// journal/ importing pgjournal/ would make a circle of folders (test/imports.test.ts).
import type { Config } from '../config/index.js';
import { SmsdropError } from '../errors.js';
import {
  type JournalHandle,
  type JournalReader,
  openReader as openSqliteReader,
  openSuppressionList as openSqliteSuppressionList,
  type SuppressionList,
  openWriter as openSqliteWriter,
  type WriterOptions,
} from '../journal/index.js';
import type { PgSettings } from '../pgjournal/index.js';

/** PostgreSQL's journal and its driver, loaded only when a URL asks for them (memory, start-up). */
const pgJournal = () => import('../pgjournal/index.js');

/** The settings that choose and open a journal (the data directory alone: SQLite's). */
export type JournalSettings = Pick<Config, 'dataDir'> &
  Partial<
    Pick<
      Config,
      'databaseUrl' | 'databaseCa' | 'lease' | 'nodeId' | 'connectTimeoutMs' | 'concurrency'
    >
  >;

export interface OpenedJournal {
  handle: JournalHandle;
  /** Requests a crash cut off from their journal commit, put back (SQLite's intents). */
  replayed: number;
  /** Of those, the ones naming batches the journal does not have. */
  missing: number;
}

/** The settings' defaults (config/schema.ts), for callers that give the data directory alone. */
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_CONCURRENCY = 8;

function pgSettings(config: JournalSettings): PgSettings | undefined {
  if (!config.databaseUrl) return undefined;
  return {
    databaseUrl: config.databaseUrl,
    databaseCa: config.databaseCa,
    nodeId: config.nodeId,
    leaseMs: config.lease?.ms ?? DEFAULT_LEASE_MS,
    connectTimeoutMs: config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    concurrency: config.concurrency ?? DEFAULT_CONCURRENCY,
  };
}

/** The journal of the one process that writes it (per data directory): its ports. */
export async function openWriter(
  config: JournalSettings,
  options: WriterOptions & {
    /** A database journal's server down at the start (restarting): how long to wait for it. */
    waitForDatabaseMs?: number;
  },
): Promise<OpenedJournal> {
  const pg = pgSettings(config);
  if (pg) {
    const opened = await (await pgJournal()).openPgWriter(config.dataDir, options, pg);
    return { ...opened, replayed: 0, missing: 0 };
  }
  const opened = openSqliteWriter(config.dataDir, options);
  return opened;
}

/** The journal read-only (reports, status); undefined when nothing was ever journalled. */
export async function openReader(config: JournalSettings): Promise<JournalReader | undefined> {
  const pg = pgSettings(config);
  if (!pg) return openSqliteReader(config.dataDir);
  return (await pgJournal()).openPgReader(pg);
}

/** The suppression list alone, without the lock (smsdrop suppress add|remove). */
export async function openSuppressionList(
  config: JournalSettings,
  options: { synchronous: 'normal' | 'full' },
): Promise<SuppressionList & { close(): void | Promise<void> }> {
  const pg = pgSettings(config);
  if (pg) return (await pgJournal()).openPgSuppressionList(pg);
  return openSqliteSuppressionList(config.dataDir, options);
}

/** `smsdrop backup` copies SQLite's files: PostgreSQL has its own tools. */
export function refuseBackupOnPostgres(config: Pick<Config, 'databaseUrl'>): void {
  if (config.databaseUrl)
    throw new SmsdropError(
      'E_BACKUP_POSTGRES',
      "smsdrop backup copies the SQLite journal; this one is in PostgreSQL (SMSDROP_DATABASE_URL): back it up with pg_dump, or the server's point-in-time recovery",
    );
}
