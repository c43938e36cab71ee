// FileStore on the PostgreSQL journal: a file's record found, made, moved through its statuses and
// counted, as the SQLite journal does (journal/files.ts, fileStore.ts: read there why), and
// the planner's store for its intake (planStore.ts). Each write is one transaction; a move that is
// a webhook event writes the event in it.
import { createFile as createRule, recountFile as recountRule } from '../journalRules/files.js';
import { PG_DIALECT, runRule } from './rules.js';
import { endRun, noteReadBytes, startRun } from '../journalRules/runs.js';
import type pg from 'pg';
import { SmsdropError } from '../errors.js';
import type { FileStore } from '../ports/files.js';
import type { TakeOver } from '../ports/send.js';
import type { FileCounts, FileRecord, KeptRows, NewFile, WaitingFile } from '../ports/index.js';
import { FILE_STATUS, type FileStatus } from '../ports/states.js';
import type { PlanStore } from '../ports/plan.js';
import {
  attemptsOf,
  countFile,
  fileById,
  lastProgressAt,
  latestFile,
  planSummary,
  recordFileEvent,
  unfinishedWithSends,
  waitingRepeats,
} from './fileReads.js';
import { DEFAULT_LEASE_MS } from './leases.js';
import { defaultNodeId } from './nodes.js';
import { type CheckTurnPasses, PgIntakeTurns, type TurnWish, yieldIfShared } from './intakeTurn.js';
import { PgPlanStore } from './planStore.js';
import { withTransaction } from './smallTransaction.js';
import { discardIntake, ZEROED } from './discardIntake.js';

export interface PgFileStoreOptions {
  /** This node's id and lease (SMSDROP_NODE_ID, SMSDROP_LEASE): its claims on files. */
  reader?: { node: string; leaseMs: number };
  /** Webhook targets: each gets the file's events (file.taken, file.finished, file.failed). */
  webhookTargets?: readonly string[];
  /** Batches intake asks to go first, once committed (PlanStore.sendFirst): the sender's list. */
  sendFirst?: (batchIds: number[]) => void;
  /** The check turn's hand-overs, shared with the handle's repeat-window look-ups. */
  passes?: CheckTurnPasses;
}

/** The PostgreSQL FileStore on a migrated journal's pool (schema.ts: openPool, migratePostgres). */
export function pgFileStore(pool: pg.Pool, options: PgFileStoreOptions = {}): FileStore {
  return new PgFileStore(pool, options);
}

/** Rows an interrupted intake kept: in batches with an attempt behind them, or split from one. */
const KEPT = `SELECT id FROM batches b WHERE b.file_id = $1 AND (b.parent_id IS NOT NULL
  OR EXISTS (SELECT 1 FROM attempts a WHERE a.batch_id = b.id))`;

class PgFileStore implements FileStore {
  readonly #pool: pg.Pool;
  readonly #targets: readonly string[];
  readonly #sendFirst: ((batchIds: number[]) => void) | undefined;
  readonly #reader: { node: string; leaseMs: number };
  readonly #turns: PgIntakeTurns;
  readonly #passes: CheckTurnPasses;
  /** Told when a claim takes the file over from a node whose claim passed. */
  #onTakenOver: (takeover: TakeOver) => void = () => {};
  /** What beginIntake found kept, for the plan store made next for the file. */
  readonly #keptNumbers = new Map<number, Array<[number, string]>>();

  constructor(pool: pg.Pool, options: PgFileStoreOptions) {
    this.#pool = pool;
    this.#turns = new PgIntakeTurns(pool);
    this.#targets = options.webhookTargets ?? [];
    this.#sendFirst = options.sendFirst;
    this.#passes = options.passes ?? { count: 0 };
    this.#reader = options.reader ?? { node: defaultNodeId(), leaseMs: DEFAULT_LEASE_MS };
  }

  /**
   * Claimed when nobody reads it, this node did, or the reader's claim passed (it is gone: the
   * listener of whenTakenOver is told).
   */
  async claim(id: number): Promise<string | undefined> {
    const { node, leaseMs } = this.#reader;
    for (;;) {
      const claimed = await this.#pool.query<{ taken_from: string | null }>(
        `WITH before AS (SELECT node FROM file_readers WHERE file_id = $1)
         INSERT INTO file_readers (file_id, node, until)
         VALUES ($1, $2, clock_timestamp() + $3::integer * interval '1 millisecond')
         ON CONFLICT (file_id) DO UPDATE SET node = EXCLUDED.node, until = EXCLUDED.until
         WHERE file_readers.node = EXCLUDED.node OR file_readers.until <= clock_timestamp()
         RETURNING (SELECT node FROM before WHERE node <> $2) AS taken_from`,
        [id, node, leaseMs],
      );
      const from = claimed.rows[0]?.taken_from;
      if (from) this.#onTakenOver({ fileId: id, from, what: 'reading' });
      if (claimed.rowCount) return undefined;
      const { rows } = await this.#pool.query<{ node: string }>(
        'SELECT node FROM file_readers WHERE file_id = $1',
        [id],
      );
      if (rows[0]) return rows[0].node; // else let go in between: claimed again
    }
  }

  /**
   * In an intake's transaction, just before it commits: the file must still be this node's to
   * read, its claim not passed by the database's clock. The row stays locked until the COMMIT, so
   * a node taking the file over waits for it and then sees all this transaction wrote (its
   * beginIntake starts from there); once the claim passed or was taken, no commit of this node's
   * intake goes through. The claim is renewed with it (the node is plainly alive).
   */
  async #stillReading(db: pg.ClientBase, id: number): Promise<void> {
    const { node, leaseMs } = this.#reader;
    const { rowCount } = await db.query(
      `UPDATE file_readers SET until = greatest(until, clock_timestamp() + $3::integer * interval '1 millisecond')
       WHERE file_id = $1 AND node = $2 AND until > clock_timestamp()`,
      [id, node, leaseMs],
    );
    if (rowCount) return;
    const { rows } = await db.query<{ node: string }>(
      'SELECT node FROM file_readers WHERE file_id = $1',
      [id],
    );
    const now = rows[0]?.node;
    throw claimLost(
      node,
      id,
      `${now === undefined || now === node ? 'its claim on it passed' : `node ${now} took it over`}; what it read since its last commit is not recorded`,
    );
  }

  /**
   * In a transaction that moves the file: refused when another node reads it now (its claim
   * stands), so that a node cut off past its claim does not mark the file sending or done, or
   * refuse it (deleting its rows), under the node reading it. Locked until the commit, as above.
   * With no claim at all (retry, resume), the move is made.
   */
  async #notAnothers(db: pg.ClientBase, id: number): Promise<void> {
    const { rows } = await db.query<{ node: string }>(
      'SELECT node FROM file_readers WHERE file_id = $1 FOR SHARE',
      [id],
    );
    const reader = rows[0]?.node;
    if (reader !== undefined && reader !== this.#reader.node)
      throw claimLost(this.#reader.node, id, `node ${reader} took it over`);
  }

  whenTakenOver(listener: (takeover: TakeOver) => void): void {
    this.#onTakenOver = listener;
  }

  async unclaim(id: number): Promise<void> {
    await this.#pool.query('DELETE FROM file_readers WHERE file_id = $1 AND node = $2', [
      id,
      this.#reader.node,
    ]);
  }

  identify(sha256: string): Promise<FileRecord | undefined> {
    return latestFile(this.#pool, sha256);
  }
  file(id: number): Promise<FileRecord | undefined> {
    return fileById(this.#pool, id);
  }
  grownCandidates(size: number): Promise<FileRecord[]> {
    return unfinishedWithSends(this.#pool, size);
  }

  /** Generation one more than any earlier record of the bytes; a node racing for it tries again. */
  async create(file: NewFile): Promise<FileRecord> {
    for (let tries = 1; ; tries++) {
      try {
        return (await this.#created(file))!;
      } catch (error) {
        if (!isUniqueViolation(error) || tries >= 3) throw error;
      }
    }
  }

  /**
   * Two nodes given the same bytes at once both insert generation `seen` + 1: the second waits
   * for the first's commit on the unique (sha256, generation), fails, and asks again, when the
   * latest generation is no longer `seen`: nothing is made.
   */
  async createUnlessRecorded(file: NewFile, seen: number): Promise<FileRecord | undefined> {
    for (let tries = 1; ; tries++) {
      try {
        return await this.#created(file, seen);
      } catch (error) {
        if (!isUniqueViolation(error) || tries >= 3) throw error;
      }
    }
  }

  #created(file: NewFile, seen?: number): Promise<FileRecord | undefined> {
    return this.#transaction(async (db) => {
      const now = new Date().toISOString();
      const id = await runRule(db, createRule(this.#targets, file, now, seen));
      return id === undefined ? undefined : fileById(db, id);
    });
  }

  adopt(id: number, file: NewFile): Promise<FileRecord> {
    return this.#transaction(async (db) => {
      await db.query(
        'UPDATE files SET sha256 = $2, name = $3, path = $4, size = $5, status = $6, error = NULL, finished_at = NULL WHERE id = $1',
        [id, file.sha256, file.name, file.path, file.size, FILE_STATUS.intake],
      );
      await recordFileEvent(db, this.#targets, 'file.taken', id);
      return (await fileById(db, id))!;
    });
  }

  async noteTaken(sha256: string): Promise<void> {
    await this.#transaction(async (db) => {
      const { rows } = await db.query<{ id: number }>(
        "SELECT id FROM files WHERE sha256 = $1 AND status IN ('intake', 'sending') ORDER BY generation DESC LIMIT 1",
        [sha256],
      );
      const id = rows[0]?.id;
      if (id === undefined) return; // a new file: create records it (and its event)
      await db.query('UPDATE files SET taken_at = $2 WHERE id = $1', [
        id,
        new Date().toISOString(),
      ]);
      await recordFileEvent(db, this.#targets, 'file.taken', id);
    });
  }

  async setProvider(id: number, provider: string): Promise<void> {
    await this.#pool.query('UPDATE files SET provider = $2 WHERE id = $1', [id, provider]);
  }
  async setEncoding(id: number, encoding: string): Promise<void> {
    await this.#pool.query('UPDATE files SET encoding = $2 WHERE id = $1', [id, encoding]);
  }
  async runStarted(id: number): Promise<void> {
    await this.#transaction((db) =>
      runRule(db, startRun(PG_DIALECT, id, new Date().toISOString())),
    );
  }
  async runEnded(id: number): Promise<void> {
    await runRule(this.#pool, endRun(id, new Date().toISOString()));
  }
  async noteReadBytes(id: number, bytes: number): Promise<void> {
    await runRule(this.#pool, noteReadBytes(id, bytes));
  }

  /**
   * As SQLite's restartIntake: what an interrupted intake wrote goes, but for the batches a request
   * may have carried and their rows; the file's groups stay. Returns the rows kept, by line.
   */
  async beginIntake(id: number): Promise<KeptRows> {
    const kept = await this.#transaction(async (db) => {
      await this.#notAnothers(db, id);
      // Other nodes may be sending the file's batches: locked first, none can start an attempt
      // until this commits, and each statement below (a snapshot of its own) sees every attempt
      // committed before. Without it, a batch whose attempt committed between two of them kept
      // its attempt but lost its rows, which were then read and sent again.
      await db.query('SELECT id FROM batches WHERE file_id = $1 ORDER BY id FOR UPDATE', [id]);
      await db.query(
        `DELETE FROM rows WHERE file_id = $1 AND (batch_id IS NULL OR batch_id NOT IN (${KEPT}))`,
        [id],
      );
      await db.query('DELETE FROM invalid_cells WHERE file_id = $1', [id]);
      await db.query(
        `DELETE FROM attempts WHERE batch_id IN (SELECT id FROM batches WHERE file_id = $1 AND id NOT IN (${KEPT}))`,
        [id],
      );
      await db.query(
        `DELETE FROM batch_numbers WHERE batch_id IN (SELECT id FROM batches WHERE file_id = $1 AND id NOT IN (${KEPT}))`,
        [id],
      );
      await db.query(`DELETE FROM batches WHERE file_id = $1 AND id NOT IN (${KEPT})`, [id]);
      await db.query(ZEROED, [id]);
      await db.query(
        'UPDATE files SET status = $2, error = NULL, finished_at = NULL WHERE id = $1',
        [id, FILE_STATUS.intake],
      );
      const { rows } = await db.query<{
        line: number;
        id: number;
        group_id: number | null;
        phone: string | null;
        intake: string;
      }>('SELECT line, id, group_id, phone, intake FROM rows WHERE file_id = $1 ORDER BY line', [
        id,
      ]);
      return rows;
    });
    this.#keptNumbers.set(
      id,
      kept.filter((r) => r.intake === 'valid').map((r) => [r.group_id!, r.phone!]),
    );
    return {
      lines: Int32Array.from(kept, (r) => r.line),
      ids: Float64Array.from(kept, (r) => r.id),
    };
  }

  /** One large intake at a time across the nodes, small ones beside it (intakeTurn.ts). */
  intakeTurn(stop?: AbortSignal, wish?: TurnWish): Promise<() => Promise<void>> {
    return this.#turns.take(stop, wish);
  }

  planStore(id: number): PlanStore {
    const kept = this.#keptNumbers.get(id);
    this.#keptNumbers.delete(id);
    const turn = this.#turns.connection;
    const role = this.#turns.role;
    return new PgPlanStore(this.#pool, id, {
      ...(kept ? { kept } : {}),
      ...(turn ? { turn } : {}),
      ...(role ? { role } : {}),
      passes: this.#passes,
      ...(this.#sendFirst ? { sendFirst: this.#sendFirst } : {}),
      beforeCommit: async (db) => {
        await this.#stillReading(db, id);
        if (role === 'follower') await yieldIfShared(db, id);
      },
    });
  }

  async status(id: number, to: FileStatus, error?: string): Promise<void> {
    await this.#transaction(async (db) => {
      await this.#notAnothers(db, id);
      await this.#setStatus(db, id, to, error);
    });
  }

  async #setStatus(db: pg.ClientBase, id: number, to: FileStatus, error?: string): Promise<void> {
    const final = to === FILE_STATUS.done || to === FILE_STATUS.refused;
    await db.query('UPDATE files SET status = $2, error = $3, finished_at = $4 WHERE id = $1', [
      id,
      to,
      error ?? null,
      final ? new Date().toISOString() : null,
    ]);
    if (final)
      await recordFileEvent(
        db,
        this.#targets,
        to === FILE_STATUS.done ? 'file.finished' : 'file.failed',
        id,
        error,
      );
  }

  /** As SQLite's: nothing sent, the rows go; something sent, they stay and are recounted. */
  refuse(
    id: number,
    explain: (requestsSent: number) => string,
  ): Promise<{ requestsSent: number; reason: string }> {
    return this.#transaction(async (db) => {
      await this.#notAnothers(db, id);
      const requestsSent = await attemptsOf(db, id);
      const reason = explain(requestsSent);
      if (requestsSent === 0) await discardIntake(db, id);
      else await recountFile(db, id);
      await this.#setStatus(db, id, FILE_STATUS.refused, reason);
      return { requestsSent, reason };
    });
  }

  counts(id: number): Promise<FileCounts> {
    return countFile(this.#pool, id);
  }
  waitingRepeats(id: number): Promise<WaitingFile[]> {
    return waitingRepeats(this.#pool, id);
  }
  requestsMade(id: number): Promise<number> {
    return attemptsOf(this.#pool, id);
  }
  async lateness(id: number): Promise<{ lastProgressAt: string; requestsMade: number }> {
    const file = await fileById(this.#pool, id);
    if (!file) throw new SmsdropError('E_INTERNAL', `file ${id} is not in the journal`);
    return {
      lastProgressAt: await lastProgressAt(this.#pool, file),
      requestsMade: await attemptsOf(this.#pool, id),
    };
  }
  planSummary(id: number): Promise<{ groups: number; requests: number; numbers: number }> {
    return planSummary(this.#pool, id);
  }

  #transaction<T>(work: (db: pg.ClientBase) => Promise<T>): Promise<T> {
    return withTransaction(this.#pool, work);
  }
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505';
}

function claimLost(node: string, fileId: number, why: string): SmsdropError {
  return new SmsdropError(
    'E_FILE_CLAIM_LOST',
    `node ${node} no longer reads file ${fileId}: ${why} (was it cut off from the journal for longer than SMSDROP_LEASE?)`,
  );
}

function recountFile(db: pg.ClientBase, fileId: number): Promise<void> {
  return runRule(db, recountRule(fileId));
}
