// Which journal a command uses: SQLite's in the data directory, or PostgreSQL's when
// SMSDROP_DATABASE_URL is set. Both give the same ports (JournalHandle, JournalReader); the callers
// open them here and never ask which one they got. This is the one door to both journals: nothing
// else imports src/journal/ or src/pgjournal/ (eslint.config.js), and what only one journal has
// (SQLite's backup and scratch journal, the copy into PostgreSQL) is reached here too.
//
// Not in journal/index.ts: neither journal imports the other, so the one that opens both stands
// beside them.
import os from 'node:os';
import type { Config } from '../config/index.js';
import { SmsdropError } from '../errors.js';
import {
  openControl as openSqliteControl,
  openReader as openSqliteReader,
  openSuppressionList as openSqliteSuppressionList,
  openWriter as openSqliteWriter,
  type WriterOptions,
} from '../journal/index.js';
import type { PgSettings } from '../pgjournal/index.js';
import {
  describeRecord,
  journalRecordOf,
  readJournalRecord,
  recordJournal,
} from '../datadir/journalRecord.js';
import type {
  ControlStore,
  CopyCounts,
  JournalHandle,
  JournalReader,
  SuppressionList,
  TableDump,
} from '../ports/index.js';

import { journalPath } from '../journal/index.js';

export {
  backupJournal,
  JournalLostError,
  journalPath,
  openScratch,
  openTableDump,
} from '../journal/index.js';

/** PostgreSQL's journal and its driver, loaded only when a URL asks for them (memory, start-up). */
const pgJournal = () => import('../pgjournal/index.js');

/** The settings that choose and open a journal (the data directory alone: SQLite's). */
export type JournalSettings = Pick<Config, 'dataDir'> &
  Partial<
    Pick<
      Config,
      | 'databaseUrl'
      | 'databaseCa'
      | 'lease'
      | 'nodeId'
      | 'connectTimeoutMs'
      | 'concurrency'
      | 'responseTimeoutMs'
      | 'providerHoldMs'
    >
  >;

export interface OpenedJournal {
  handle: JournalHandle;
  /** Requests a crash cut off from their journal commit, put back (SQLite's intents). */
  replayed: number;
  /** Of those, the ones naming batches the journal does not have. */
  missing: number;
  /** This node's id where several share the journal (PostgreSQL). */
  node?: string;
}

/**
 * Which journal the settings name, for the start-up line: PostgreSQL's host, database and this
 * node's id (never the URL's user or password), or SQLite's file.
 */
export function describeJournal(config: JournalSettings): string {
  if (!config.databaseUrl) return `journal SQLite ${journalPath(config.dataDir)}`;
  let where = 'its server';
  try {
    const url = new URL(config.databaseUrl.url);
    const host = url.hostname || url.searchParams.get('host') || 'the local socket';
    const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(the user’s)';
    where = `host ${host}${url.port ? `:${url.port}` : ''}, database ${database}`;
  } catch {
    // a URL settings/database.ts took but WHATWG's URL does not (a libpq key=value string)
  }
  const node = config.nodeId ?? `${os.hostname()}:${process.pid}`;
  return `journal PostgreSQL ${where}; node ${node}`;
}

/** The settings' defaults (config/schema.ts), for callers that give the data directory alone. */
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_CONCURRENCY = 8;
const DEFAULT_RESPONSE_TIMEOUT_MS = 30_000;

function pgSettings(config: JournalSettings): PgSettings | undefined {
  if (!config.databaseUrl) return undefined;
  return {
    databaseUrl: config.databaseUrl,
    databaseCa: config.databaseCa,
    nodeId: config.nodeId,
    leaseMs: config.lease?.ms ?? DEFAULT_LEASE_MS,
    connectTimeoutMs: config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    concurrency: config.concurrency ?? DEFAULT_CONCURRENCY,
    providerHoldMs:
      config.providerHoldMs ?? config.responseTimeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS,
  };
}

/** The journal of the one process that writes it (per data directory): its ports. */
export async function openWriter(
  config: JournalSettings,
  options: WriterOptions & {
    /** A daemon (smsdrop run): a database journal lists it as a node; a one-shot command not. */
    daemon?: boolean;
    /** A database journal's server down at the start (restarting): how long to wait for it. */
    waitForDatabaseMs?: number;
    /** Told once, when the database's server does not answer and the opening waits for it. */
    onDatabaseWait?: (why: string) => void;
  },
): Promise<OpenedJournal> {
  const pg = pgSettings(config);
  if (pg) {
    const opened = await (await pgJournal()).openPgWriter(config.dataDir, options, pg);
    const record = journalRecordOf(pg.databaseUrl.url);
    if (record) recordJournal(config.dataDir, record);
    return { ...opened, replayed: 0, missing: 0 };
  }
  const opened = openSqliteWriter(config.dataDir, options);
  return opened;
}

/** The journal read-only (reports, status); undefined when nothing was ever journalled. */
export async function openReader(config: JournalSettings): Promise<JournalReader | undefined> {
  const pg = pgSettings(config);
  if (pg) return (await pgJournal()).openPgReader(pg);
  const reader = openSqliteReader(config.dataDir);
  if (reader) return reader;
  // No SQLite journal here: the data directory's nodes may use a PostgreSQL one.
  const record = readJournalRecord(config.dataDir);
  if (record)
    throw new SmsdropError(
      'E_JOURNAL_POSTGRES',
      `this data directory's journal is PostgreSQL at ${describeRecord(record)}: set SMSDROP_DATABASE_URL`,
    );
  return undefined;
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

/** An operator's control of the journal alone, without the lock (smsdrop pause and the others). */
export async function openControl(
  config: JournalSettings,
  options: { synchronous: 'normal' | 'full'; webhookTargets: readonly string[] },
): Promise<ControlStore & { close(): void | Promise<void> }> {
  const pg = pgSettings(config);
  if (pg) return (await pgJournal()).openPgControl(pg, options.webhookTargets);
  return openSqliteControl(config.dataDir, options);
}

/** `smsdrop backup` copies SQLite's files: PostgreSQL has its own tools. */
export function refuseBackupOnPostgres(config: Pick<Config, 'databaseUrl'>): void {
  if (config.databaseUrl)
    throw new SmsdropError(
      'E_BACKUP_POSTGRES',
      "smsdrop backup copies the SQLite journal; this one is in PostgreSQL (SMSDROP_DATABASE_URL): back it up with pg_dump, or the server's point-in-time recovery",
    );
}

/**
 * `smsdrop migrate --to`: the SQLite journal's tables copied into the empty PostgreSQL journal at
 * `url` (`shown`: the URL as it may be shown, its password masked).
 */
export async function copyIntoPostgres(
  dump: TableDump,
  url: string,
  shown: string,
): Promise<CopyCounts> {
  // Loaded here, not with the command's definition: every other command starts without the driver.
  const { migrateInto } = await import('../pgjournal/copy.js');
  return migrateInto(dump, url, shown);
}
