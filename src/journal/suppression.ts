// Suppressed numbers: never sent to again, by any file. A number gets here when the provider
// answers it, alone in its batch, as blacklisted or unsubscribed (SUPPRESSING_CODES), or when
// someone lists it (`smsdrop suppress add`). Intake rejects the rows of suppressed numbers before
// grouping, with the reason, so they show in the rejected file and the reports like any other
// rejected row.
import { connectionOf, insideOf, type Journal } from './connection.js';
import { nowIso, sql } from './sql.js';
import type { SuppressedNumber } from '../ports/records.js';

/**
 * Adds numbers (normalised); a number already suppressed keeps its first reason. Returns how many
 * were new.
 */
export function suppressNumbers(
  db: Journal,
  phones: readonly string[],
  reason: string,
  source: string,
): number {
  const insert = sql(
    db,
    'INSERT INTO suppressed (phone, reason, source, added_at) VALUES (?, ?, ?, ?) ON CONFLICT (phone) DO NOTHING',
  );
  const now = nowIso();
  let added = 0;
  insideOf(db).transaction(() => {
    for (const phone of phones) added += insert.run(phone, reason, source, now).changes;
  })();
  return added;
}

/** Removes numbers from the list; returns how many were on it. */
export function unsuppressNumbers(db: Journal, phones: readonly string[]): number {
  const remove = sql(db, 'DELETE FROM suppressed WHERE phone = ?');
  let removed = 0;
  insideOf(db).transaction(() => {
    for (const phone of phones) removed += remove.run(phone).changes;
  })();
  return removed;
}

export function listSuppressed(db: Journal): SuppressedNumber[] {
  return sql(
    db,
    'SELECT phone, reason, source, added_at AS addedAt FROM suppressed ORDER BY added_at, phone',
  ).all() as SuppressedNumber[];
}

/**
 * Why a number is suppressed ("suppressed (provider, 2026-11-22): 160034: number on a
 * blacklist…"), for intake; undefined when the list is empty, so that intake then pays nothing.
 */
export function suppressionCheck(db: Journal): ((phone: string) => string | undefined) | undefined {
  if (!anySuppressed(db)) return undefined;
  const find = sql(db, 'SELECT reason, source, added_at FROM suppressed WHERE phone = ?');
  return (phone) => {
    const found = find.get(phone) as
      { reason: string; source: string; added_at: string } | undefined;
    return found
      ? `suppressed (${found.source}, ${found.added_at.slice(0, 10)}): ${found.reason}`
      : undefined;
  };
}

function anySuppressed(db: Journal): boolean {
  return sql(db, 'SELECT 1 FROM suppressed LIMIT 1').get() !== undefined;
}

/**
 * Copies the list into another journal (a dry run's throwaway one, so that its plan leaves them out
 * too).
 */
export function copySuppressed(from: Journal, to: Journal): void {
  const insert = sql(
    to,
    'INSERT OR IGNORE INTO suppressed (phone, reason, source, added_at) VALUES (?, ?, ?, ?)',
  );
  insideOf(to).transaction(() => {
    for (const row of connectionOf(from)
      .prepare('SELECT phone, reason, source, added_at FROM suppressed')
      .raw()
      .iterate())
      insert.run(...(row as unknown[]));
  })();
}
