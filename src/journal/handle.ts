// One open journal as its ports: every store works on the same connection, so the sender's
// writes, intake's bulk transaction and the reads all see one journal.
import type { JournalHandle } from '../ports/handle.js';
import { commitBulk } from './bulk.js';
import { stopCheckpoints } from './checkpoints.js';
import { closeIntents } from './intents.js';
import type { Journal } from './connection.js';
import { SqliteFileStore } from './fileStore.js';
import { sqliteReadStore } from './readStore.js';
import { SqliteSendStore } from './sendStore.js';
import {
  sqliteDaemonState,
  sqliteMaintenance,
  sqliteOutbox,
  sqliteSuppressionList,
} from './smallStores.js';
import { sqliteRetryStore } from './retry.js';
import { sqliteControl } from './control.js';

/** The ports of `db`; `release` runs after it is closed (openWriter: the lock). */
export function handleOf(db: Journal, release: () => void = () => {}): JournalHandle {
  let closing: Promise<void> | undefined;
  return {
    send: new SqliteSendStore(db),
    files: new SqliteFileStore(db),
    reads: sqliteReadStore(db),
    outbox: sqliteOutbox(db),
    suppression: sqliteSuppressionList(db),
    daemon: sqliteDaemonState(db),
    retry: sqliteRetryStore(db),
    maintenance: sqliteMaintenance(db),
    control: sqliteControl(db),
    close: () => (closing ??= closeThenRelease(db, release)),
  };
}

/** Closes at once, as the caller asks; settles once the checkpoint thread has ended too. */
async function closeThenRelease(db: Journal, release: () => void): Promise<void> {
  const threadEnded = stopCheckpoints(db);
  try {
    closeJournal(db);
  } finally {
    release();
  }
  await threadEnded;
}

/**
 * What requests recorded on intents alone goes into the journal now, not at the next start; a
 * full disk leaves the intents, and the next start puts their attempts back.
 */
function closeJournal(db: Journal): void {
  if (!db.open) return;
  try {
    commitBulk(db);
  } catch {
    // see above: the intents stay
  }
  closeIntents(db);
  db.close();
}
