// The turn to read a file into the PostgreSQL journal, shared by every node: one intake at a time
// across all of them. Each file's rows are checked against the files read before it (the repeat
// window, journal/sentBefore.ts); two read at once on two nodes would each miss the other's rows
// and send their common messages twice. A node's IntakeTurns orders its own intakes; this turn
// orders the nodes'.
//
// The turn is a session advisory lock held on one connection, and the intake's transactions run
// on that same connection (planStore.ts, bulk.ts). Should the connection die, the lock
// goes with the transaction it would have committed: the next reader sees exactly what was
// committed under the turn. A node whose host vanishes keeps the lock until the server finds its
// connection dead; the session's TCP keepalives bound that to about half a minute (left to the
// kernel's defaults, two hours).
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';

/** "smsdrop intake" as a number: the lock of the turn. Chosen once, never changed. */
export const INTAKE_TURN_LOCK = 0x736d7364726f7001n;
/** How often a node waiting for the turn asks again. */
const ASK_EVERY_MS = 200;
/** The server probes an idle connection after 10 s, then every 5 s; 3 unanswered end it. */
const KEEPALIVES =
  'SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3';

export class PgIntakeTurns {
  readonly #pool: pg.Pool;
  #held: pg.PoolClient | undefined;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** The connection holding the turn, on which the intake's transactions run; none outside one. */
  get connection(): pg.PoolClient | undefined {
    return this.#held;
  }

  /** Waits for the turn (or `stop`: then an empty turn), and returns what ends it. */
  async take(stop?: AbortSignal): Promise<() => Promise<void>> {
    const client = await this.#pool.connect();
    client.on('error', ignore); // ended by the server while held: the next query says so
    try {
      await client.query(KEEPALIVES);
      while (!(await locked(client))) {
        if (stop?.aborted) break;
        await sleep(ASK_EVERY_MS, undefined, stop ? { signal: stop } : {}).catch(() => {});
      }
    } catch (error) {
      client.off('error', ignore);
      client.release(true);
      throw error;
    }
    if (stop?.aborted) {
      await this.#end(client);
      return () => Promise.resolve();
    }
    this.#held = client;
    let ended: Promise<void> | undefined;
    return () => (ended ??= this.#end(client));
  }

  /**
   * Ends the turn by closing its connection: the session's lock goes with it, and so would a
   * transaction an intake cut short by an error had left open (never back into the pool).
   */
  #end(client: pg.PoolClient): Promise<void> {
    if (this.#held === client) this.#held = undefined;
    client.off('error', ignore);
    client.release(true);
    return Promise.resolve();
  }
}

async function locked(client: pg.PoolClient): Promise<boolean> {
  const { rows } = await client.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_lock($1) AS locked',
    [INTAKE_TURN_LOCK.toString()],
  );
  return rows[0]!.locked;
}

function ignore(): void {}
