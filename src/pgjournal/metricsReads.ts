// MetricsReads on the PostgreSQL journal: the figures of /metrics, the dashboard and the progress
// line, the rules of src/journalRules/metricsReads.ts run on this journal's pool.
import type { MetricsReads } from '../ports/reads.js';
import * as rules from '../journalRules/metricsReads.js';
import type { Queryable } from './claims.js';
import { PG_DIALECT, runRule } from './rules.js';

/** MetricsReads of the PostgreSQL journal on `db`. */
export function pgMetricsReads(db: Queryable): MetricsReads {
  return {
    numbersToSend: (sha256s) => runRule(db, rules.numbersToSend(PG_DIALECT, sha256s)),
    filesWaiting: (now) => runRule(db, rules.filesWaiting(now)),
    filesByStatus: () => runRule(db, rules.filesByStatus(PG_DIALECT)),
    rowsByStatus: () => runRule(db, rules.rowsByStatus()),
    numbersByOutcome: () => runRule(db, rules.numbersByOutcome(PG_DIALECT)),
    requestsByOutcome: () => runRule(db, rules.requestsByOutcome(PG_DIALECT)),
    sendRateByMinute: (since) => runRule(db, rules.sendRateByMinute(PG_DIALECT, since)),
  };
}
