// An operator's control of a file (ports/control.ts) on the PostgreSQL journal: the rules of
// src/journalRules/control.ts, each command in a transaction of its own, the file's row locked
// (so two commands, and a command and an attempt start, take turns). A cancelled batch gives its
// lease up (RELEASING).
import type pg from 'pg';
import { applyControl, cancelPlanned, controlOf } from '../journalRules/control.js';
import type { ControlStore } from '../ports/control.js';
import type { WebhookTargets } from './outbox.js';
import { RELEASING, runRule } from './rules.js';
import { withTransaction } from './smallTransaction.js';

export function pgControl(pool: pg.Pool, targets: WebhookTargets): ControlStore {
  const now = () => new Date().toISOString();
  return {
    command: (fileId, command) =>
      withTransaction(pool, (client) =>
        runRule(client, applyControl(RELEASING, targets.ids, fileId, command, now())),
      ),
    control: (fileId) => runRule(pool, controlOf(fileId)),
    cancelLeftovers: (fileId) =>
      withTransaction(pool, (client) => runRule(client, cancelPlanned(RELEASING, fileId, now()))),
  };
}
