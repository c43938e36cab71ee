// Statements on the journal, each prepared once per connection and text (Journal.statement), and
// the one clock the journal's rows are stamped with.
import type Database from 'better-sqlite3';
import { insideOf, type Journal } from './connection.js';

/** A prepared statement in one mode for good (see Journal.statement). */
export type Query = Pick<
  Database.Statement,
  'run' | 'get' | 'all' | 'iterate' | 'bind' | 'columns' | 'source' | 'reader'
>;
/** The statement for `text` on this journal, reading rows as objects. */
export const sql = (journal: Journal, text: string): Query =>
  insideOf(journal).statement('object', text);
/** The statement for `text`, reading rows as arrays of their columns. */
export const sqlRaw = (journal: Journal, text: string): Query =>
  insideOf(journal).statement('raw', text);
/** The statement for `text`, reading each row's first column alone. */
export const sqlPluck = (journal: Journal, text: string): Query =>
  insideOf(journal).statement('pluck', text);

export function nowIso(): string {
  return new Date().toISOString();
}
