// One open PostgreSQL journal as its ports (as journal/handle.ts for SQLite): every store
// works through the same pool, and the handle's close ends them all, then the pool, then what the
// opener holds (the data directory's lock).
import type pg from 'pg';
import type { JournalHandle } from '../ports/handle.js';
import type { AccountSlots } from '../ports/account.js';
import type { FileStore } from '../ports/files.js';
import type { ReadStore } from '../ports/reads.js';
import type { PgSendStore } from './sendStore.js';
import { pgDaemonState } from './daemonState.js';
import { pgMaintenance } from './prune.js';
import { pgOutbox, type WebhookTargets } from './outbox.js';
import { pgRetryStore } from './retry.js';
import { pgControl } from './control.js';
import { pgSuppressionList } from './suppression.js';

/** What every store of one handle shares. */
export interface PgShared {
  pool: pg.Pool;
  /** The webhook receivers events are written for (set through the outbox's setTargets). */
  targets: WebhookTargets;
  /** This node's id and how long its claims last (SMSDROP_NODE_ID, SMSDROP_LEASE). */
  node: string;
  leaseMs: number;
}

/** The stores the handle is composed of, each opened on its own (sending, intake, reads). */
export interface PgStores {
  /** With its lease keeper: closed (leases given up) before the pool ends. */
  send: PgSendStore;
  files: FileStore;
  reads: ReadStore;
}

/** The ports of the journal behind `shared.pool`; `release` runs after the pool has ended. */
export function pgHandle(
  shared: PgShared,
  stores: PgStores,
  account: AccountSlots | undefined,
  release: () => void = () => {},
): JournalHandle {
  let open = true;
  let closing: Promise<void> | undefined;
  const { pool } = shared;
  return {
    ...stores,
    outbox: pgOutbox(pool, shared.targets, () => open),
    suppression: pgSuppressionList(pool),
    daemon: pgDaemonState(pool, shared.targets, shared.node),
    retry: pgRetryStore(pool),
    maintenance: pgMaintenance(pool),
    control: pgControl(pool, shared.targets),
    ...(account ? { account } : {}),
    close: () =>
      (closing ??= (async () => {
        open = false;
        try {
          await stores.send.close();
          await account?.close();
        } finally {
          await pool.end().finally(release);
        }
      })()),
  };
}
