// Which journal a data directory's processes use, written into the data directory itself
// (journal.json) when a process opens a PostgreSQL journal on it: `smsdrop status` or `report` run
// there without SMSDROP_DATABASE_URL then says where its journal is instead of "none yet". Host,
// port, database and user only: never the password, so the record may be read by anyone who may
// read the data directory.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface JournalRecord {
  kind: 'postgresql';
  host: string;
  port: string | null;
  database: string;
  user: string | null;
}

const RECORD = 'journal.json';

/** What of a PostgreSQL URL the record keeps; undefined for a URL WHATWG's parser does not take. */
export function journalRecordOf(url: string): JournalRecord | undefined {
  try {
    const parsed = new URL(url);
    return {
      kind: 'postgresql',
      host: parsed.hostname || parsed.searchParams.get('host') || 'the local socket',
      port: parsed.port || null,
      database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || '(the user’s)',
      user: parsed.username ? decodeURIComponent(parsed.username) : null,
    };
  } catch {
    return undefined;
  }
}

/** Writes the record (whole or not at all); a failure to write it never stops the process. */
export function recordJournal(dataDir: string, record: JournalRecord): void {
  const file = path.join(dataDir, RECORD);
  try {
    writeFileSync(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  } catch {
    // a read-only or full volume: status then says "none yet", as without a record
  }
}

/** The data directory's record, if it has a readable one. */
export function readJournalRecord(dataDir: string): JournalRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(path.join(dataDir, RECORD), 'utf8')) as JournalRecord;
    return record.kind === 'postgresql' && typeof record.host === 'string' ? record : undefined;
  } catch {
    return undefined;
  }
}

/** "HOST:PORT/DATABASE (user USER)". */
export function describeRecord(record: JournalRecord): string {
  const port = record.port ? `:${record.port}` : '';
  return `${record.host}${port}/${record.database}${record.user ? ` (user ${record.user})` : ''}`;
}
