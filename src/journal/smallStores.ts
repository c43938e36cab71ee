// The small ports on the SQLite journal (outbox, suppression list, daemon state, retry,
// maintenance): thin delegates to the journal's functions.
import { backupJournal } from './backup.js';
import { setDaemonState, setDaemonWaiting } from './daemonState.js';
import { markDelivered, noteDeliveryFailed, recordEventNow, undeliveredEvents } from './outbox.js';
import { connectionOf, insideOf, type Journal } from './connection.js';
import { journalPath } from './paths.js';
import { openJournal } from './open.js';
import { pruneJournal } from './prune.js';
import { journalSize } from './storage.js';
import { listSuppressed, suppressNumbers, unsuppressNumbers } from './suppression.js';
import type { DaemonStateStore } from '../ports/daemonState.js';
import type { Maintenance } from '../ports/maintenance.js';
import type { OutboxStore } from '../ports/outbox.js';
import type { SuppressionList } from '../ports/suppression.js';
import type { ControlStore } from '../ports/control.js';
import { sqliteControl } from './control.js';

export function sqliteOutbox(db: Journal): OutboxStore {
  return {
    setTargets: (ids) => {
      insideOf(db).webhookTargets = [...ids];
    },
    hasTargets: () => insideOf(db).webhookTargets.length > 0,
    recordEventNow: (event, file, reason) => recordEventNow(db, event, file, reason),
    undelivered: (target, limit) => undeliveredEvents(db, target, limit),
    markDelivered: (ids) => {
      for (const id of ids) markDelivered(db, id);
    },
    noteDeliveryFailed: (id, error) => noteDeliveryFailed(db, id, error),
    canDeliver: () => db.open && !connectionOf(db).inTransaction,
    isOpen: () => db.open,
  };
}

export function sqliteSuppressionList(db: Journal): SuppressionList {
  return {
    add: (phones, reason, source) => suppressNumbers(db, phones, reason, source),
    remove: (phones) => unsuppressNumbers(db, phones),
    list: () => listSuppressed(db),
  };
}

/**
 * The suppression list of dataDir's journal alone, changed without the data directory's lock:
 * `smsdrop suppress` writes only that table, so it works while the daemon runs.
 */
export function openSuppressionList(
  dataDir: string,
  options: { synchronous: 'normal' | 'full' },
): SuppressionList & { close(): void } {
  const db = openJournal(journalPath(dataDir), options);
  return { ...sqliteSuppressionList(db), close: () => db.close() };
}

/**
 * An operator's control of dataDir's journal alone, without the data directory's lock: `smsdrop
 * pause` and the others write a file's control (and a cancel its planned batches), so they work
 * while the daemon runs. Waits longer than other writers for the daemon's intake transaction.
 */
export function openControl(
  dataDir: string,
  options: { synchronous: 'normal' | 'full'; webhookTargets: readonly string[] },
): ControlStore & { close(): void } {
  const db = openJournal(journalPath(dataDir), options);
  connectionOf(db).pragma(`busy_timeout = ${CONTROL_BUSY_MS}`);
  insideOf(db).webhookTargets = [...options.webhookTargets];
  return { ...sqliteControl(db), close: () => db.close() };
}

/** How long a command waits for the journal's writer (an intake commits every 50,000 rows). */
const CONTROL_BUSY_MS = 30_000;

export function sqliteDaemonState(db: Journal): DaemonStateStore {
  return {
    setPause: (update) => setDaemonState(db, update),
    setWaiting: (text, pid) => setDaemonWaiting(db, text, pid),
  };
}

/** `dryRun`: only says what a prune would delete, whatever it is asked (a read-only journal). */
export function sqliteMaintenance(db: Journal, dryRun = false): Maintenance {
  return {
    prune: (options, busy) =>
      pruneJournal(db, dryRun ? { ...options, dryRun: true } : options, busy),
    backup: (targetDir) => backupJournal(db.name, targetDir),
    size: () => journalSize(db),
  };
}
