// The turn to read a file into the PostgreSQL journal, shared by every node. Each file's rows are
// checked against the files read before it (the repeat window, journal/sentBefore.ts); two read
// at once on two nodes would each miss the other's rows and send their common messages twice. A
// node's IntakeTurns orders its own intakes; this turn orders the nodes'. Two locks make it:
//
// - the file turn (INTAKE_TURN_LOCK): one file at a time holds it, from before the repeat window
//   is read until its rows are committed and it is `sending`, however long the file;
// - the check turn (CHECK_TURN_LOCK): held by whoever checks rows against the window and commits
//   them. The file turn's holder (the leader) holds it too, and hands it over between two of its
//   commits when a small file waits for it (planStore.ts). A small file (FOLLOWER_MAX_BYTES at
//   most) dropped while another file holds the file turn waits only for the check turn (it
//   follows): it reads, checks and commits under it, and keeps it until it is `sending`. Its
//   rows are then counted by the leader's later checks; the leader's committed rows it cannot
//   count (a file still read may yet be refused, and its rows not sent thrown away), so before
//   each commit it looks for a row of its own that another file still being read holds as well
//   (same message, same number): one found, it gives its turn up (E_INTAKE_TURN_YIELDED, nothing
//   of the commit kept) and is read again under the file turn (pipeline: intakeInTurn). So every
//   row is checked and committed under the check turn, against every row committed before it:
//   counted by the window, or, still in a file being read, making a follower give way.
//
// Both locks are session advisory locks held on one connection, and the intake's transactions run
// on that same connection (planStore.ts, bulk.ts). Should the connection die, the locks go with
// the transaction they would have committed: the next reader sees exactly what was committed
// under the turn. A node whose host vanishes keeps them until the server finds its connection
// dead; the session's TCP keepalives bound that to about half a minute (left to the kernel's
// defaults, two hours).
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { SmsdropError } from '../errors.js';

/** "smsdrop intake" as a number: the lock of the file turn. Chosen once, never changed. */
export const INTAKE_TURN_LOCK = 0x736d7364726f7001n;
/** The check turn's lock (two int4 keys: a space of its own, apart from the bigint keys). */
export const CHECK_TURN_LOCK = [0x736d7364, 0x63686b01] as const;
/** A file this small (bytes) may follow: read beside a file holding the file turn. */
export const FOLLOWER_MAX_BYTES = 256 * 1024;
/** How often a node waiting for the file turn asks again. */
const ASK_EVERY_MS = 200;
/** The server probes an idle connection after 10 s, then every 5 s; 3 unanswered end it. */
const KEEPALIVES =
  'SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3';
const CHECK_LOCK_ARGS = `${CHECK_TURN_LOCK[0]}, ${CHECK_TURN_LOCK[1]}`;

/** Whose turn a node holds: the file turn (and the check turn), or the check turn alone. */
export type TurnRole = 'leader' | 'follower';

export interface TurnWish {
  /** The file's size: a small one may follow (FOLLOWER_MAX_BYTES). */
  bytes?: number;
}

export class PgIntakeTurns {
  readonly #pool: pg.Pool;
  #held: { client: pg.PoolClient; role: TurnRole } | undefined;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** The connection holding the turn, on which the intake's transactions run; none outside one. */
  get connection(): pg.PoolClient | undefined {
    return this.#held?.client;
  }

  /** The role of the turn held; none outside one. */
  get role(): TurnRole | undefined {
    return this.#held?.role;
  }

  /** Waits for the turn (or `stop`: then an empty turn), and returns what ends it. */
  async take(stop?: AbortSignal, wish: TurnWish = {}): Promise<() => Promise<void>> {
    const client = await this.#pool.connect();
    client.on('error', ignore); // ended by the server while held: the next query says so
    let closed = false;
    // Closing the connection ends the turn: the session's locks go with it, and so would a
    // transaction an intake cut short by an error had left open (never back into the pool).
    const close = (): Promise<void> => {
      if (this.#held?.client === client) this.#held = undefined;
      if (closed) return Promise.resolve();
      closed = true;
      client.off('error', ignore);
      client.release(true);
      return Promise.resolve();
    };
    let role: TurnRole | undefined;
    try {
      await client.query(KEEPALIVES);
      role = await waitForTurn(client, stop, mayFollow(wish), close);
    } catch (error) {
      await close();
      throw error;
    }
    if (role === undefined) {
      await close();
      return () => Promise.resolve();
    }
    this.#held = { client, role };
    return close;
  }
}

const mayFollow = (wish: TurnWish) => wish.bytes !== undefined && wish.bytes <= FOLLOWER_MAX_BYTES;

/**
 * The file turn, then the check turn: 'leader'. A file that may follow and finds the file turn
 * taken waits for the check turn alone: 'follower'. Undefined once `stop` came first.
 */
async function waitForTurn(
  client: pg.PoolClient,
  stop: AbortSignal | undefined,
  follow: boolean,
  close: () => Promise<void>,
): Promise<TurnRole | undefined> {
  let role: TurnRole | undefined;
  while (!(role = await fileTurn(client, follow))) {
    if (stop?.aborted) return undefined;
    await sleep(ASK_EVERY_MS, undefined, stop ? { signal: stop } : {}).catch(() => {});
  }
  if (stop?.aborted) return undefined;
  await checkTurn(client, stop, close);
  return stop?.aborted ? undefined : role;
}

async function fileTurn(client: pg.PoolClient, follow: boolean): Promise<TurnRole | undefined> {
  const { rows } = await client.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_lock($1) AS locked',
    [INTAKE_TURN_LOCK.toString()],
  );
  return rows[0]!.locked ? 'leader' : follow ? 'follower' : undefined;
}

/**
 * Waits in the server's queue for the check turn, so that a leader handing it over (unlock, then
 * lock again, in one statement) lets the one waiting go first. A stop closes the connection, which
 * ends the wait.
 */
async function checkTurn(
  client: pg.PoolClient,
  stop: AbortSignal | undefined,
  close: () => Promise<void>,
): Promise<void> {
  const onStop = () => void close();
  stop?.addEventListener('abort', onStop, { once: true });
  try {
    await client.query(`SELECT pg_advisory_lock(${CHECK_LOCK_ARGS})`);
  } catch (error) {
    if (!stop?.aborted) throw error;
  } finally {
    stop?.removeEventListener('abort', onStop);
  }
}

/**
 * How many times this journal handle's leader handed the check turn over: owned by the handle's
 * stores (index.ts), counted by its plan stores and read by its repeat window's look-ups.
 */
export interface CheckTurnPasses {
  count: number;
}

/**
 * The leader's hand-over, on its turn's connection between two transactions: the check turn given
 * to whoever waits for it (the server grants it in queue order) and asked for again. Counted in
 * `passes`: a look-up of the window made before it has not seen what the follower committed.
 */
export async function passCheckTurn(turn: pg.ClientBase, passes: CheckTurnPasses): Promise<void> {
  await turn.query(
    `SELECT pg_advisory_unlock(${CHECK_LOCK_ARGS}), pg_advisory_lock(${CHECK_LOCK_ARGS})`,
  );
  passes.count += 1;
}

/** True when another connection waits for the check turn (a follower). */
export async function checkTurnWanted(db: pg.ClientBase): Promise<boolean> {
  const { rows } = await db.query<{ wanted: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
       AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 2) AS wanted`,
    [CHECK_TURN_LOCK[0], CHECK_TURN_LOCK[1]],
  );
  return rows[0]!.wanted;
}

/**
 * Whether a row of file $1, planned to be sent, has its message and number in a row of another
 * file still being read (yieldIfShared).
 *
 * From each of its rows to the other files' groups of its message, then one seek of its number in
 * each (rows_by_group_phone). The two subqueries are fenced (OFFSET 0): the statistics say a group
 * has a few rows, so left to itself the planner seeks the other rows by group alone and compares
 * the numbers after, reading a shared message's every number for each row of the file; and with
 * the files' check joined first, it reads every group (test/pg/sharedCheckPlan.test.ts).
 */
export const SHARED_WITH_AN_INTAKE = `SELECT EXISTS (SELECT 1 FROM rows mine JOIN groups mg ON mg.id = mine.group_id
       JOIN groups og ON og.key_hash = mg.key_hash AND og.file_id <> mine.file_id
         AND og.app_id = mg.app_id AND og.template_id = mg.template_id AND og.datas = mg.datas
       WHERE mine.file_id = $1 AND mine.batch_id IS NOT NULL
         AND EXISTS (SELECT 1 FROM files f WHERE f.id = og.file_id AND f.status = 'intake' OFFSET 0)
         AND EXISTS (SELECT 1 FROM rows other WHERE other.group_id = og.id
           AND other.phone = mine.phone AND other.batch_id IS NOT NULL OFFSET 0)) AS shared`;

/**
 * A follower's check before each commit, in its transaction: a row of its file, planned to be
 * sent, whose message and number a row of another file still being read holds too. That row may
 * go or not (the file may yet be refused), so the follower cannot count it: it gives way.
 */
export async function yieldIfShared(db: pg.ClientBase, fileId: number): Promise<void> {
  const { rows } = await db.query<{ shared: boolean }>(SHARED_WITH_AN_INTAKE, [fileId]);
  if (rows[0]!.shared)
    throw new SmsdropError(
      'E_INTAKE_TURN_YIELDED',
      `file ${fileId} shares a message and number with a file another node is reading: it is read again once that one is read`,
    );
}

function ignore(): void {}
