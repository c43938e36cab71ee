// GET /healthz: 200 while the daemon can do its job (journal writable, inbox watched, sending not
// paused, webhooks delivered), 503 with the reasons otherwise: a supervisor or a load balancer
// reads the status, a person the reasons.
import type { Journal } from '../journal/open.js';
import { journalLost } from '../journal/intents.js';

export interface HealthSource {
  db: Journal;
  /** The inbox watcher is running. */
  watching(): boolean;
  /**
   * Why sending is paused for the account (an account problem, a provider outage), or undefined.
   */
  paused(): string | undefined;
  /** Webhook receivers that have failed for long, with why. */
  webhooksFailing(): string[];
}

export interface Health {
  ok: boolean;
  checks: { journal: string; inbox: string; sending: string; webhooks: string };
  reasons: string[];
}

export function checkHealth(source: HealthSource): Health {
  const reasons: string[] = [];
  const journal = !source.db.open
    ? 'closed'
    : journalLost(source.db)
      ? 'failed: it lost requests’ records (see the log)'
      : 'writable';
  if (journal !== 'writable') reasons.push(`journal ${journal}`);
  const inbox = source.watching() ? 'watched' : 'not watched';
  if (inbox !== 'watched') reasons.push(`inbox ${inbox}`);
  const paused = source.paused();
  if (paused) reasons.push(`sending paused: ${paused}`);
  const failing = source.webhooksFailing();
  reasons.push(...failing);
  return {
    ok: reasons.length === 0,
    checks: {
      journal,
      inbox,
      sending: paused ? `paused: ${paused}` : 'on',
      webhooks: failing.length > 0 ? failing.join('; ') : 'ok',
    },
    reasons,
  };
}
