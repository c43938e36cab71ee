// A consistent copy of the journal and its intents file, taken while the daemon writes them:
// SQLite's online backup (better-sqlite3's backup()), from read transactions of this process, so
// the writer is never held up (WAL: readers do not block it) and the copy is one moment's state.
//
// The two files must agree. A request leaves once its attempt is in the journal, or in the intents
// file while an intake's transaction is open (intents.ts); intents are deleted once the journal
// holds them. So the intents file is read first, then the journal: every attempt started before
// the first read is in one copy or the other. A request whose intent was written in the instant
// between the two reads may be in neither: its batch is in the copy (a batch is committed before it
// is sent), so a run from the copy sends it again under the same reqId, which the provider refuses
// (160054) on the same day. Each copy is then made a single file (journal_mode DELETE) and checked.
import Database from './sqlite.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SmsdropError } from '../errors.js';
import { intentsPath } from './paths.js';
import type { BackupResult } from '../ports/records.js';

/**
 * Copies `journalFile` (and its intents file) into `targetDir` as journal.sqlite (and
 * journal.intents.sqlite).
 */
export async function backupJournal(journalFile: string, targetDir: string): Promise<BackupResult> {
  const journalCopy = path.join(targetDir, path.basename(journalFile));
  const intentsCopy = intentsPath(journalCopy);
  const intentsFile = intentsPath(journalFile);
  const intents = existsSync(intentsFile)
    ? new Database(intentsFile, { readonly: true, fileMustExist: true })
    : undefined;
  const journal = new Database(journalFile, { readonly: true, fileMustExist: true });
  try {
    for (const db of [intents, journal]) db?.pragma('busy_timeout = 5000');
    // The intents' moment first, then the journal's (see the top of this file).
    if (intents) beginRead(intents);
    beginRead(journal);
    await copyWhole(journal, journalCopy);
    if (intents) await copyWhole(intents, intentsCopy);
  } finally {
    journal.close();
    intents?.close();
  }
  const bytes = settleCopy(journalCopy) + (intents ? settleCopy(intentsCopy) : 0);
  return { journal: journalCopy, intents: intents ? intentsCopy : undefined, bytes };
}

/** A read transaction: the connection sees this moment's state until it ends. */
function beginRead(db: Database.Database): void {
  db.exec('BEGIN');
  db.prepare('SELECT count(*) FROM sqlite_master').pluck().get();
}

/**
 * Every page in one step, within the connection's read transaction: a copy made in many steps
 * starts over whenever the source changes, and the daemon changes it all the time.
 */
async function copyWhole(db: Database.Database, target: string): Promise<void> {
  await db.backup(target, { progress: () => 0x7fffffff });
}

/** The copy as one file, checked: throws when SQLite finds it damaged. Returns its size. */
function settleCopy(file: string): number {
  const copy = new Database(file);
  try {
    copy.pragma('journal_mode = DELETE');
    const check = copy.pragma('integrity_check', { simple: true });
    if (check !== 'ok')
      throw new SmsdropError(
        'E_BACKUP_INTEGRITY',
        `the copy ${file} failed SQLite's integrity check: ${String(check)}; the journal itself may be damaged: run smsdrop backup again, and keep an earlier copy`,
      );
    return (
      (copy.pragma('page_count', { simple: true }) as number) *
      (copy.pragma('page_size', { simple: true }) as number)
    );
  } finally {
    copy.close();
  }
}
