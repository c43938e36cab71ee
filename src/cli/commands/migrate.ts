// `smsdrop migrate --to postgres://…`: the data directory's SQLite journal copied into an empty
// PostgreSQL journal (pgjournal/copy.ts), with the daemon stopped. The URL's password is a secret:
// it never reaches the output, an error or the log. docs/postgres.md says more.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { acquireLock, type Lock } from '../../datadir/lock.js';
import { errorCode, EXIT, SmsdropError } from '../../errors.js';
import { copyIntoPostgres, journalPath, openTableDump } from '../../journals/index.js';
import { registerSecret } from '../../log/redact.js';
import type { CopyCounts } from '../../ports/index.js';
import { configFor, exitWith, exitWithError } from '../common.js';

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description(
      "copy the data directory's journal into an empty PostgreSQL journal (stop the daemon first)",
    )
    .requiredOption(
      '--to <url>',
      'postgres://USER:PASSWORD@HOST:PORT/DATABASE of an empty database (its schema is made)',
    )
    .action(async (opts: { to: string }, command: Command) => {
      const target = targetOf(opts.to);
      const config = configFor(command, { forReading: true });
      const noJournal = `smsdrop: E_USAGE: migrate: no journal in ${config.dataDir}: nothing to copy (check --data-dir)`;
      if (!existsSync(journalPath(config.dataDir))) exitWith(EXIT.usage, noJournal);
      const lock = lockFor(config.dataDir);
      try {
        const dump = openTableDump(config.dataDir);
        if (!dump) exitWith(EXIT.usage, noJournal);
        try {
          const started = Date.now();
          const counts = await copyIntoPostgres(dump, target.url, target.shown);
          process.stdout.write(describeCopy(counts, target.shown, Date.now() - started));
        } finally {
          dump.close();
        }
      } catch (err) {
        if (err instanceof SmsdropError) exitWithError(target.masked(err));
        throw target.masked(err);
      } finally {
        lock.release();
      }
    });
}

interface Target {
  url: string;
  /** The URL as it may be shown: its password masked. */
  shown: string;
  /** The error with the password masked in its message and stack. */
  masked<E>(err: E): E;
}

/** The URL given, checked; its password registered as a secret before anything can show it. */
function targetOf(url: string): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    exitWith(
      EXIT.usage,
      'smsdrop: E_USAGE: migrate: --to is not a URL: give postgres://USER:PASSWORD@HOST:PORT/DATABASE',
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    exitWith(
      EXIT.usage,
      `smsdrop: E_USAGE: migrate: --to must be a postgres:// URL, not ${parsed.protocol}//…`,
    );
  const secrets = [parsed.password, safeDecode(parsed.password)].filter((s) => s.length > 0);
  for (const secret of secrets) registerSecret(secret);
  const mask = (text: string) => secrets.reduce((out, s) => out.split(s).join('***'), text);
  if (parsed.password) parsed.password = '***';
  return {
    url,
    shown: parsed.toString(),
    masked(err) {
      if (err instanceof Error) {
        err.message = mask(err.message);
        if (err.stack) err.stack = mask(err.stack);
      }
      return err;
    },
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The data directory's lock: the daemon (or a `send`) must not write while it is copied. */
function lockFor(dataDir: string): Lock {
  try {
    return acquireLock(dataDir, 'smsdrop migrate');
  } catch (err) {
    if (errorCode(err) === 'E_DATA_DIR_LOCKED')
      exitWith(
        EXIT.usage,
        `smsdrop: E_DATA_DIR_LOCKED: migrate: ${(err as Error).message} (stop the daemon, then migrate)`,
      );
    throw err;
  }
}

function describeCopy(counts: CopyCounts, shown: string, ms: number): string {
  const width = Math.max(...counts.map((c) => c.table.length));
  const lines = counts.map((c) => `  ${c.table.padEnd(width)}  ${c.rows}`);
  const total = counts.reduce((sum, c) => sum + c.rows, 0);
  return `copied ${total} rows into ${shown} in ${(ms / 1000).toFixed(1)} s:\n${lines.join('\n')}\n`;
}
