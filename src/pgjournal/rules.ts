// The journal rules (src/journalRules/) run on PostgreSQL: each statement awaited on one client
// (or the pool), its `?` numbered as PostgreSQL's `$n`, inside whatever transaction the caller
// holds.
import type pg from 'pg';
import type { Dialect, Param, Rule } from '../journalRules/rule.js';
import { runAwaited } from '../journalRules/rule.js';
import type { MoveGuard } from '../journalRules/moves.js';
import type { RuleContext } from '../journalRules/outcomes.js';
import { LEASE_RELEASED, leaseHeld, type Queryable } from './claims.js';

/** PostgreSQL's spelling: lists travel as arrays. */
export const PG_DIALECT: Dialect = {
  greatest: (a, b) => `greatest(${a}, ${b})`,
  isIn: (column) => `${column} = ANY(CAST(? AS text[]))`,
  isInIds: (column) => `${column} = ANY(CAST(? AS bigint[]))`,
  // The pairs as rows: told each column = ANY its list, the planner seeks an index on the two by
  // the ids alone and compares the texts after, reading every row of an id its statistics say has
  // a row or two (a message many rows share: test/pg/repeatNumbersPlan.test.ts).
  isInPairs: (ids, texts) =>
    `(${ids}, ${texts}) IN (SELECT i, t FROM unnest(CAST(? AS bigint[]), CAST(? AS text[])) AS p(i, t))`,
  list: (values) => values,
  pairs: (a, b) => `unnest(CAST(? AS text[]), CAST(? AS bigint[])) AS t(${a}, ${b})`,
  forUpdate: ' FOR UPDATE',
  forShare: ' FOR SHARE',
  skipLocked: ' FOR UPDATE SKIP LOCKED',
  byBytes: ' COLLATE "C"',
  // times stay the ISO 8601 text they are written as
  storedTime: (value) => value,
  timeText: (column) => column,
  // the provider's texts as they are
  storedSid: (sid) => sid,
  sidText: (column) => column,
  storedStamp: (stamp) => stamp,
  stampText: (column) => column,
  appOf: (group) => `${group}.app_id`,
  storedNode: (node) => node,
  batchPhones: (b) => `(SELECT phones FROM batch_numbers WHERE batch_id = ${b}.id)`,
  indexedBy: () => '',
  writesInWith: true,
};

/** `?` numbered in turn: `$1`, `$2`… (no rule's SQL holds a `?` of its own). */
function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

/** Runs a rule to its end on `db`. */
export function runRule<T>(db: Queryable, rule: Rule<T>): Promise<T> {
  const query = (text: string, params: Param[]): Promise<pg.QueryResult<Record<string, unknown>>> =>
    db.query(numbered(text), params as unknown[]);
  return runAwaited(rule, {
    run: async (text, params) => (await query(text, params)).rowCount ?? 0,
    all: async (text, params) => (await query(text, params)).rows,
    get: async (text, params) => (await query(text, params)).rows[0],
    // every rule runs inside a transaction that commits before its batches can be claimed
    durable: () => Promise.resolve(),
  });
}

/** Rules with no lease of their own to keep (retry, takeover): each move gives the lease up. */
export const RELEASING: RuleContext = { dialect: PG_DIALECT, guard: { set: [LEASE_RELEASED] } };

/**
 * Rules of one node's requests: a batch moves only while this node holds it, and gives its lease up
 * with the move. A lease that passed unnoticed by anyone is still the node's: nobody else has moved
 * the batch. One another node took over is not. With `attemptId` (an outcome of that attempt), the
 * attempt is the claim's epoch: the move is refused too once a newer attempt of the batch was
 * started (by another node that took it over, even if this node's name is on its lease again).
 */
export function heldBy(node: string, attemptId?: number): RuleContext {
  return { dialect: PG_DIALECT, guard: nodeGuard(node, attemptId) };
}

/** The batch's newest attempt, as SQL on `batches`. */
const LAST_ATTEMPT = '(SELECT max(n.id) FROM attempts n WHERE n.batch_id = batches.id)';

function nodeGuard(node: string, attemptId: number | undefined): MoveGuard {
  const epoch = attemptId !== undefined;
  return {
    where: epoch
      ? [`lease_node = ? AND ${LAST_ATTEMPT} = ?`, node, attemptId]
      : ['lease_node = ?', node],
    set: [LEASE_RELEASED],
    columns: `lease_node, ${LAST_ATTEMPT} AS last_attempt`,
    refused: (batchId, to, current) => {
      const newer = epoch && current.last_attempt !== attemptId;
      if (current.lease_node === node && !newer) return undefined;
      const lease =
        current.lease_node === null ? 'no lease' : `leased to ${current.lease_node as string}`;
      const why = newer ? `, attempt ${current.last_attempt as number} started since` : '';
      return `batch ${batchId} cannot go to ${to}: node ${node} no longer holds it (${current.state}, ${lease}${why}); its lease passed and it was taken over`;
    },
  };
}

/** The claim of an attempt: only under a lease this node holds and that has not passed. */
export function claimContext(node: string): RuleContext {
  return { dialect: PG_DIALECT, guard: { where: [leaseHeld('?'), node] } };
}
