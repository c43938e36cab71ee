// The SQLite connection under a journal a test opened by hand: for the SQL a test sets a journal
// up with or reads it by (the journal keeps its connection to itself).
import type Database from 'better-sqlite3';
import { connectionOf, type Journal } from '../../src/journal/connection.js';

export const sqliteOf = (journal: Journal): Database.Database => connectionOf(journal);
