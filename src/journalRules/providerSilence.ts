// Whether the provider has been silent to a node while a batch kept failing: the question a
// batch about to run out of attempts asks (send/policy.ts, providerSilent), written once for both
// journals.
import { type Dialect, type Fragment, get, type Rule } from './rule.js';

/**
 * True when no request of `node` (attempts.node; null: of any process) got an answer from the
 * provider (accepted, or refused with a code) since the earliest of the batch's last `attempts`
 * attempts started: the provider has been silent to it all the while (an outage of the provider,
 * or of the way to it), rather than this batch's requests failing on their own. From the journal,
 * so a restart or a pause in between does not hide a long silence.
 *
 * Whose answers count is the journal's to say. SQLite's: any process's (one server, one way to
 * the provider). PostgreSQL's: this node's only: a node cut off from the provider alone would
 * otherwise use up the attempts of the batches it tried while the other nodes were answered, and
 * end them failed although any other node could send them; silent to it, a batch keeps its
 * attempts and goes back to the cluster while this node pauses (docs/postgres.md).
 */
export function* providerSilentFor(
  dialect: Dialect,
  batchId: number,
  attempts: number,
  node: string | null,
): Rule<boolean> {
  const ofNode: Fragment =
    node === null ? [''] : [` AND a.node = ${dialect.storedNode('?')}`, node];
  const row = yield* get<{ silent: number }>(
    `WITH since AS (
       SELECT started_at FROM attempts WHERE batch_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?
     )
     SELECT CASE WHEN EXISTS (
       SELECT 1 FROM attempts a${dialect.indexedBy('attempts_by_start')}
       WHERE a.started_at >= (SELECT started_at FROM since)${ofNode[0]}
         AND (a.outcome = 'accepted' OR a.outcome LIKE 'rejected:%')
     ) THEN 0 ELSE 1 END AS silent FROM since`,
    batchId,
    attempts - 1,
    ...ofNode.slice(1),
  );
  return row?.silent === 1;
}
