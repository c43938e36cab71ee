// The PostgreSQL journal's door (SMSDROP_DATABASE_URL): opened as a writer by a node (its data
// directory's lock, the pool, the migrations under their advisory lock, the node registered), or
// as a reader. Which journal a command uses is chosen in journals/index.ts.
//
// TLS: verified to any host but loopback (settings/database.ts says why the URL has no say); a
// connection that fails is E_DATABASE_UNREACHABLE with what PostgreSQL or the network answered,
// never the password.
import type { CheckTurnPasses } from './intakeTurn.js';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { ControlStore } from '../ports/control.js';
import { pgControl } from './control.js';
import type { DatabaseUrl } from '../config/settings/database.js';
import { acquireLock } from '../datadir/lock.js';
import { errorCode, isDatabaseOutage, SmsdropError } from '../errors.js';
import type { AccountSlots } from '../ports/account.js';
import { type JournalHandle, type JournalReader, readerOf } from '../ports/handle.js';
import type { SuppressionList } from '../ports/suppression.js';
import { openAccountSlots } from './accountSlots.js';
import { pgFileStore } from './files.js';
import { registerNode } from './nodes.js';
import { pgHandle, type PgShared, type PgStores } from './handle.js';
import { pgMaintenance } from './prune.js';
import { pgReadStore } from './readStore.js';
import { pgRetryStore } from './retry.js';
import { pgSuppressionList } from './suppression.js';
import { pgSendStore } from './sendStore.js';
import { PG_MIGRATIONS } from './migrations.js';
import { migratePostgres, openPool } from './schema.js';

export interface PgSettings {
  databaseUrl: DatabaseUrl;
  /** SMSDROP_DATABASE_CA: a PEM file. */
  databaseCa?: string | undefined;
  /** SMSDROP_NODE_ID; default HOST:PID. */
  nodeId?: string | undefined;
  leaseMs: number;
  connectTimeoutMs: number;
  /** SMSDROP_CONCURRENCY: the account's requests in flight, across every node. */
  concurrency: number;
  /** SMSDROP_PROVIDER_HOLD_MS: how long the provider may count a request with no answer. */
  providerHoldMs: number;
}

/** This node's id: the setting, or host and pid. */
export function nodeIdOf(settings: Pick<PgSettings, 'nodeId'>): string {
  return settings.nodeId ?? `${os.hostname()}:${process.pid}`;
}

/** pg's TLS options: none to loopback (unless asked), verified otherwise. */
export function tlsOf(
  settings: Pick<PgSettings, 'databaseUrl' | 'databaseCa'>,
): pg.PoolConfig['ssl'] {
  const { databaseUrl, databaseCa } = settings;
  if (databaseUrl.local && !databaseUrl.tls && databaseCa === undefined) return false;
  if (databaseCa === undefined) return { rejectUnauthorized: true };
  try {
    return { rejectUnauthorized: true, ca: readFileSync(databaseCa, 'utf8') };
  } catch (err) {
    throw new SmsdropError(
      'E_CONFIG_DATABASE_CA',
      `invalid configuration: databaseCa (SMSDROP_DATABASE_CA) = ${JSON.stringify(databaseCa)}: cannot read the file: ${(err as Error).message}`,
    );
  }
}

/** A pool on the journal, its first connection made (E_DATABASE_UNREACHABLE if it cannot be). */
export async function connectPool(settings: PgSettings, max = 10): Promise<pg.Pool> {
  try {
    return await firstConnection(settings, max);
  } catch (err) {
    throw unreachable(settings.databaseUrl, err);
  }
}

/** A pool on the journal, its first connection made; the driver's own error if it cannot be. */
async function firstConnection(settings: PgSettings, max = 10): Promise<pg.Pool> {
  const pool = openPool(settings.databaseUrl.url, max, {
    ssl: tlsOf(settings),
    connectionTimeoutMillis: settings.connectTimeoutMs,
  });
  try {
    (await pool.connect()).release();
    return pool;
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}

/** PostgreSQL's SQLSTATEs of a login it refused: a wrong password, a role it does not know. */
const LOGIN_REFUSED = new Set(['28P01', '28000']);

/**
 * E_DATABASE_AUTH when the server refused the login (nothing to wait for: the URL's user or
 * password, or pg_hba.conf, is to fix), E_DATABASE_UNREACHABLE otherwise.
 */
function unreachable(url: DatabaseUrl, err: unknown): SmsdropError {
  const password = safePassword(url.url);
  let said = (err as Error).message || String(err);
  if (password) said = said.split(password).join('(hidden)');
  const refused = LOGIN_REFUSED.has(errorCode(err) ?? '');
  return new SmsdropError(
    refused ? 'E_DATABASE_AUTH' : 'E_DATABASE_UNREACHABLE',
    `cannot use the PostgreSQL journal at ${url.shown} (SMSDROP_DATABASE_URL): ${refused ? 'the server refused the login: ' : ''}${said}`,
  );
}

function safePassword(text: string): string {
  try {
    return decodeURIComponent(new URL(text).password);
  } catch {
    return '';
  }
}

/**
 * The SendStore (leases started), the FileStore (its events to the handle's receivers; the
 * batches intake sends first are marked in the journal, for every node's claims) and the
 * ReadStore.
 */
async function stores(shared: PgShared, reqIdOn: boolean): Promise<PgStores> {
  const { pool, node, leaseMs } = shared;
  const send = await pgSendStore(pool, { node, leaseMs, reqIdOn });
  const passes: CheckTurnPasses = { count: 0 };
  const files = pgFileStore(pool, {
    reader: { node, leaseMs },
    webhookTargets: shared.targets.ids,
    passes,
  });
  return { send, files, reads: pgReadStore(pool, { passes }) };
}

export interface OpenedPgWriter {
  handle: JournalHandle;
  node: string;
}

/**
 * The PostgreSQL journal for a node that writes it: its data directory's lock (its inbox,
 * processing/, done/, failed/ are its own), the pool, the migrations, the node registered.
 * handle.close() ends the pool, then releases the lock. While the server is down (refusing,
 * starting up, shutting down, or gone in the middle of the opening) the whole opening is tried
 * again every half second for `waitForDatabaseMs`; anything else (a wrong password, an unknown
 * host) fails at once, as E_DATABASE_UNREACHABLE with the server's words.
 */
export async function openPgWriter(
  dataDir: string,
  options: {
    role: string;
    reqIdOn: boolean;
    /** A daemon (smsdrop run), listed as a node; a one-shot command (send, retry...) is not. */
    daemon?: boolean;
    waitForDatabaseMs?: number;
    /** Told once, when the server does not answer and the opening waits for it. */
    onDatabaseWait?: (why: string) => void;
  },
  settings: PgSettings,
): Promise<OpenedPgWriter> {
  const lock = acquireLock(dataDir, options.role);
  const deadline = Date.now() + (options.waitForDatabaseMs ?? 0);
  let told = false;
  try {
    for (;;) {
      try {
        return await openNode(settings, options, () => lock.release());
      } catch (err) {
        const outage = isDatabaseOutage(err);
        // E_JOURNAL_NEWER, say, or a bug: as they are
        if (!outage && (err instanceof SmsdropError || errorCode(err) === undefined)) throw err;
        if (!outage || Date.now() >= deadline) throw unreachable(settings.databaseUrl, err);
        if (!told) options.onDatabaseWait?.(unreachable(settings.databaseUrl, err).message);
        told = true;
        await sleep(500);
      }
    }
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** One try at opening the node's journal; what it opened is closed again if it fails. */
async function openNode(
  settings: PgSettings,
  { reqIdOn, daemon }: { reqIdOn: boolean; daemon?: boolean },
  release: () => void,
): Promise<OpenedPgWriter> {
  const pool = await firstConnection(settings);
  let account: AccountSlots | undefined;
  try {
    await migratePostgres(pool);
    const node = nodeIdOf(settings);
    await registerNode(pool, node, daemon ? 'daemon' : 'command');
    const shared: PgShared = { pool, targets: { ids: [] }, node, leaseMs: settings.leaseMs };
    account = await openAccountSlots(pool, {
      node,
      leaseMs: settings.leaseMs,
      concurrency: settings.concurrency,
      holdMs: settings.providerHoldMs,
    });
    const parts = await stores(shared, reqIdOn);
    return { handle: pgHandle(shared, parts, account, release), node };
  } catch (err) {
    await account?.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw err;
  }
}

/**
 * Whether the journal's schema is this smsdrop's: 'none' (nothing was ever journalled there),
 * 'current', or an error (a reader never migrates a journal the nodes use).
 */
export async function schemaState(pool: pg.Pool): Promise<'none' | 'current'> {
  const table = await pool.query<{ found: string | null }>(
    "SELECT to_regclass('schema_migrations')::text AS found",
  );
  if (!table.rows[0]?.found) return 'none';
  const { rows } = await pool.query<{ version: number }>('SELECT version FROM schema_migrations');
  const versions = rows.map((r) => r.version);
  const missing = PG_MIGRATIONS.filter((m) => !versions.includes(m.version));
  if (missing.length === 0) {
    const newest = Math.max(...PG_MIGRATIONS.map((m) => m.version));
    if (versions.every((v) => v <= newest)) return 'current';
    throw new SmsdropError(
      'E_JOURNAL_NEWER',
      `the PostgreSQL journal has schema version ${Math.max(...versions)}, newer than this smsdrop's ${newest}: upgrade smsdrop`,
    );
  }
  throw new SmsdropError(
    'E_JOURNAL_NEEDS_UPGRADE',
    'the PostgreSQL journal was written by an older smsdrop: a reader does not upgrade it while nodes may use it; start a daemon (or a send) of this version, which upgrades it, then read it',
  );
}

/** The journal for reading (reports, status); undefined when nothing was ever journalled. */
export async function openPgReader(settings: PgSettings): Promise<JournalReader | undefined> {
  const pool = await openPgReaderPool(settings);
  if (!pool) return undefined;
  return readerOf(pgReadStore(pool), pgRetryStore(pool), pgMaintenance(pool, true), () => {
    void pool.end().catch(() => undefined);
  });
}

/** The suppression list alone (smsdrop suppress add|remove: no lock, as with SQLite). */
export async function openPgSuppressionList(
  settings: PgSettings,
): Promise<SuppressionList & { close(): Promise<void> }> {
  const pool = await connectPool(settings, 2);
  try {
    await migratePostgres(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return { ...pgSuppressionList(pool), close: () => pool.end() };
}

/** An operator's control of the journal alone (smsdrop pause, approve, resume, cancel). */
export async function openPgControl(
  settings: PgSettings,
  webhookTargets: readonly string[],
): Promise<ControlStore & { close(): Promise<void> }> {
  const pool = await connectPool(settings, 2);
  try {
    await migratePostgres(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return { ...pgControl(pool, { ids: [...webhookTargets] }), close: () => pool.end() };
}

async function openPgReaderPool(settings: PgSettings): Promise<pg.Pool | undefined> {
  const pool = await connectPool(settings, 4);
  try {
    if ((await schemaState(pool)) === 'none') {
      await pool.end();
      return undefined;
    }
    return pool;
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}
