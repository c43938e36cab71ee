// What the journal's connections keep between files. SQLite holds up to cache_size of pages per
// connection (open.ts: 8 MB for the journal's own) for as long as the connection is open, and a
// daemon's connection is open all day: after a file its cache holds that file's pages, which the
// next file does not read. An idle daemon gives them back (daemon/releaseMemory.ts); the next file
// reads what it needs from the OS's cache of the file.
import { connectionOf, insideOf, type Journal } from './connection.js';

/**
 * Frees the page caches of the journal's connection and of its intents' side file, except while a
 * transaction is open (its pages are not yet written). Nothing is lost: the pages are in the file.
 */
export function releaseCaches(db: Journal): void {
  if (!db.open) return;
  const connection = connectionOf(db);
  if (!connection.inTransaction) connection.pragma('shrink_memory');
  const side = insideOf(db).intents?.side;
  if (side?.open && !side.inTransaction) side.pragma('shrink_memory');
}
