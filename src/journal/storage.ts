// The journal's file on disk: how big it is, and how it gives space (and deleted numbers) back.
// Pruning (prune.ts) deletes rows; without more, SQLite only marks their pages free, the file
// never shrinks, and the deleted bytes stay readable in the file and its WAL. So the journal runs
// with auto_vacuum = INCREMENTAL (free pages can be cut off the end of the file, a step at a time),
// and pruning turns secure_delete on (deleted content is overwritten with zeros) and ends with a
// TRUNCATE checkpoint (the WAL, which holds copies of the pages, is emptied to 0 bytes).
import { statSync } from 'node:fs';
import { intentsPath } from './paths.js';
import { connectionOf, type Journal } from './connection.js';
import type { JournalSize } from '../ports/records.js';

const INCREMENTAL = 2;

/** auto_vacuum = INCREMENTAL on a connection to a new, empty file: its setting from the start. */
export function presetIncrementalVacuum(db: Journal): void {
  connectionOf(db).pragma('auto_vacuum = INCREMENTAL');
}

/**
 * Sets auto_vacuum = INCREMENTAL. On a journal with no table yet that is a setting; an existing
 * journal made before it must be rewritten once by VACUUM: time and disk in proportion to its size
 * (docs/retention.md has the measures), and every other writer waits meanwhile. Returns whether
 * that VACUUM ran.
 */
export function ensureIncrementalVacuum(db: Journal): boolean {
  if (connectionOf(db).pragma('auto_vacuum', { simple: true }) === INCREMENTAL) return false;
  const empty =
    connectionOf(db)
      .prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'")
      .pluck()
      .get() === 0;
  connectionOf(db).pragma('auto_vacuum = INCREMENTAL');
  if (empty) return false;
  connectionOf(db).exec('VACUUM');
  // VACUUM in WAL mode writes the whole database into the WAL: give that space back now.
  checkpointTruncate(db);
  return true;
}

/**
 * Moves every page of the WAL into the database and cuts the WAL to 0 bytes (when no reader holds
 * it back).
 */
export function checkpointTruncate(db: Journal): { busy: boolean } {
  const [result] = connectionOf(db).pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
  return { busy: (result?.busy ?? 0) !== 0 };
}

/** Cuts up to `pages` free pages off the end of the file (all of them when omitted). */
export function incrementalVacuum(db: Journal, pages?: number): void {
  connectionOf(db).pragma(
    pages === undefined
      ? 'incremental_vacuum'
      : `incremental_vacuum(${Math.max(1, Math.floor(pages))})`,
  );
}

/** Free pages in the file (space a vacuum can give back). */
export function freePages(db: Journal): number {
  return connectionOf(db).pragma('freelist_count', { simple: true }) as number;
}

/** Whether deleted content is overwritten with zeros on this connection (pruning turns it on). */
export function setSecureDelete(db: Journal, on: boolean): void {
  connectionOf(db).pragma(`secure_delete = ${on ? 'ON' : 'OFF'}`);
}

export function journalSize(db: Journal): JournalSize {
  const pageSize = connectionOf(db).pragma('page_size', { simple: true }) as number;
  const database = sizeOf(db.name);
  const wal = sizeOf(`${db.name}-wal`);
  const side = intentsPath(db.name);
  const intents = sizeOf(side) + sizeOf(`${side}-wal`);
  return {
    bytes: database + wal + intents,
    database,
    wal,
    intents,
    free: freePages(db) * pageSize,
  };
}

function sizeOf(file: string): number {
  return statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}
