// The account's pause in PostgreSQL (ports/account.ts): one row (migration 11) that the node which
// paused sets until its cooldown is over, and that every node reads when told of it (NOTIFY), with
// each slot it takes, at each slot renewal, and every second while it is paused, so that a pause
// by one node holds the others' requests too, and its end lets them all go on.
//
// A node lifts only the pause it is in (its generation): a newer pause (the first one's trial
// failed) keeps it paused, and a pause this node could not write lifts only at its own cooldown's
// end. A pause lapses at the time in `until` (by the database's clock), so that a node that died
// paused does not hold the others past its cooldown.
import type pg from 'pg';
import type { PauseState, PauseWatcher, SharedPause } from '../ports/account.js';
import { SLOT_CHANNEL } from './slotNotices.js';

/** SQL: the pause row's columns that observe() reads (a select list over account_pause). */
export const PAUSE_COLUMNS = `generation AS pause_generation,
  (paused AND until > clock_timestamp()) AS pause_active,
  reason AS pause_reason, code AS pause_code, status_code AS pause_status_code,
  node AS pause_node`;

/** SQL: the account is paused now. */
export const PAUSED_NOW =
  'EXISTS (SELECT 1 FROM account_pause WHERE id = 1 AND paused AND until > clock_timestamp())';

/** The pause row as PAUSE_COLUMNS reads it. */
export interface PauseRow {
  pause_generation: number;
  pause_active: boolean;
  pause_reason: string | null;
  pause_code: string | null;
  pause_status_code: string | null;
  pause_node: string | null;
}

const ACTIVE = 'p.paused AND p.until > clock_timestamp()';
/** Pauses the account, and tells the other nodes at once (NOTIFY, slotNotices.ts). */
const PAUSE = `
  WITH paused AS (
  UPDATE account_pause p SET
    generation = p.generation + CASE WHEN ${ACTIVE} THEN 0 ELSE 1 END,
    reason = CASE WHEN ${ACTIVE} THEN p.reason ELSE $1 END,
    code = CASE WHEN ${ACTIVE} THEN p.code ELSE $2 END,
    status_code = CASE WHEN ${ACTIVE} THEN p.status_code ELSE $3 END,
    node = CASE WHEN ${ACTIVE} THEN p.node ELSE $4 END,
    until = CASE WHEN ${ACTIVE} THEN GREATEST(p.until, clock_timestamp() + $5 * interval '1 millisecond')
                 ELSE clock_timestamp() + $5 * interval '1 millisecond' END,
    paused = true
  WHERE id = 1
  RETURNING generation)
  SELECT generation, pg_notify('${SLOT_CHANNEL}', 'pause ' || $4::text) FROM paused`;
const RESUME = `UPDATE account_pause SET paused = false, until = NULL
  WHERE id = 1 AND generation = $1 AND paused`;

/** How often a paused node looks whether the pause lifted. */
const LOOK_MS = 1_000;

export class PgSharedPause implements SharedPause {
  readonly #pool: pg.Pool;
  readonly #node: string;
  #watcher: PauseWatcher | undefined;
  /** This node is paused (its own pause, or another's it was told of). */
  #inPause = false;
  /** The generation of the pause this node is in; undefined while not known (not written). */
  #generation: number | undefined;
  /** The newest generation this node has been in. */
  #seen = -1;
  #looking: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(pool: pg.Pool, node: string) {
    this.#pool = pool;
    this.#node = node;
  }

  /** This node knows the account is paused: a slot's take stops waiting. */
  get inPause(): boolean {
    return this.#inPause;
  }

  watch(watcher: PauseWatcher): void {
    this.#watcher = watcher;
  }

  pause(state: PauseState, holdMs: number): void {
    this.#inPause = true;
    this.#generation = undefined;
    this.#pool
      .query<{ generation: number }>(PAUSE, [
        state.reason,
        state.code,
        state.statusCode ?? null,
        this.#node,
        holdMs,
      ])
      .then(({ rows }) => {
        const generation = rows[0]?.generation;
        if (generation === undefined || !this.#inPause) return;
        this.#generation = generation;
        this.#seen = Math.max(this.#seen, generation);
        this.#lookWhilePaused();
      })
      .catch(() => undefined); // the others are not told: this node's own cooldown still holds
  }

  resume(): void {
    const generation = this.#generation;
    this.#leave();
    // A write lost here: the pause lapses at its until.
    if (generation !== undefined) this.#pool.query(RESUME, [generation]).catch(() => undefined);
  }

  /** What a statement read of the pause row: a pause to join, or the end of this one. */
  observe(row: PauseRow | undefined): void {
    if (!row || this.#closed) return;
    const generation = row.pause_generation;
    if (row.pause_active && generation > this.#seen) {
      this.#seen = generation;
      this.#generation = generation;
      this.#lookWhilePaused();
      if (this.#inPause) return; // a newer pause of the account: still paused
      this.#inPause = true;
      this.#watcher?.paused({
        reason: row.pause_reason ?? 'the account is paused',
        code: row.pause_code ?? 'E_PROVIDER_ACCOUNT',
        statusCode: row.pause_status_code ?? undefined,
        node: row.pause_node ?? 'another node',
      });
      return;
    }
    const mine = this.#generation;
    if (this.#inPause && mine !== undefined && !row.pause_active && generation >= mine) {
      this.#leave();
      this.#watcher?.lifted();
    }
  }

  close(): void {
    this.#closed = true;
    this.#leave();
  }

  #leave(): void {
    this.#inPause = false;
    this.#generation = undefined;
    clearInterval(this.#looking);
    this.#looking = undefined;
  }

  #lookWhilePaused(): void {
    if (this.#looking || this.#closed) return;
    this.#looking = setInterval(() => {
      this.#pool
        .query<PauseRow>(`SELECT ${PAUSE_COLUMNS} FROM account_pause WHERE id = 1`)
        .then(({ rows }) => this.observe(rows[0]))
        .catch(() => undefined);
    }, LOOK_MS);
    this.#looking.unref();
  }
}
