// The conformance suite's journals: each test of test/conformance/ is written once and run on both
// journals, a SQLite file in a temporary folder and a database of a throwaway PostgreSQL cluster,
// each opened through src/journals/ as smsdrop opens it. Besides the ports, a test can run a
// journal rule (src/journalRules/) on each journal as that journal's stores run it, and seed or
// read rows with plain statements (as rules: `?` parameters, SQL both journals read).
//
// This file is the suite's one bridge to the journals' own folders (their openers of a raw
// connection and their rule runners), as src/journals/ is the code's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe } from 'node:test';
import type pg from 'pg';
import { parseDatabaseUrl } from '../../src/config/settings/database.js';
import { openWriter } from '../../src/journals/index.js';
import type { JournalHandle } from '../../src/ports/index.js';
import type { Journal } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';
import { journalPath } from '../../src/journal/paths.js';
import { runRule as runOnSqlite, SQLITE_RULES } from '../../src/journal/rules.js';
import { openPool } from '../../src/pgjournal/schema.js';
import { RELEASING, runRule as runOnPostgres } from '../../src/pgjournal/rules.js';
import type { RuleContext } from '../../src/journalRules/outcomes.js';
import { all, get, type Param, type Rule, run } from '../../src/journalRules/rule.js';
import { postgresMissing, type Postgres, startPostgres } from '../pg/cluster.js';

export type JournalKind = 'SQLite' | 'PostgreSQL';

/** One journal under test: fresh for each test that asks (`open`). */
export interface Subject {
  kind: JournalKind;
  handle: JournalHandle;
  /** What the journal gives the rules its retry and takeover run (no lease of a node's own). */
  rules: RuleContext;
  /** Runs a rule on the journal, as its stores do (outside their transactions). */
  rule<T>(rule: Rule<T>): Promise<T>;
  run(text: string, ...params: Param[]): Promise<number>;
  all<R = Record<string, unknown>>(text: string, ...params: Param[]): Promise<R[]>;
  get<R = Record<string, unknown>>(text: string, ...params: Param[]): Promise<R | undefined>;
}

/** How each subject's journal is opened: as `smsdrop send` opens it. */
const WRITER = {
  role: 'conformance test',
  synchronous: 'normal',
  reqIdOn: true,
  onLost: () => {
    throw new Error('the journal lost requests’ records');
  },
} as const;

/** The node id of a PostgreSQL subject's handle (its leases name it). */
export const NODE = 'conformance-node';

interface Opener {
  kind: JournalKind;
  skip: string | false;
  setUp(): Promise<void>;
  open(): Promise<Subject>;
  /** Settings that put smsdrop's processes on a fresh journal of this kind (SQLite: none). */
  environment(): Promise<Record<string, string>>;
  tearDown(): Promise<void>;
}

/** What a test of onEachJournal is given. */
export interface Journals {
  /** A fresh journal, opened in the test's process. */
  open: () => Promise<Subject>;
  /** The settings for the CLI or the daemon as child processes on a fresh journal of the kind. */
  environment: () => Promise<Record<string, string>>;
  kind: JournalKind;
}

function subject(
  kind: JournalKind,
  handle: JournalHandle,
  rules: RuleContext,
  runRule: <T>(rule: Rule<T>) => Promise<T>,
): Subject {
  return {
    kind,
    handle,
    rules,
    rule: runRule,
    run: (text, ...params) => runRule(run(text, ...params)),
    all: (text, ...params) => runRule(all(text, ...params)),
    get: (text, ...params) => runRule(get(text, ...params)),
  };
}

function sqliteOpener(): Opener {
  const opened: { dir: string; handle: JournalHandle; raw: Journal }[] = [];
  return {
    kind: 'SQLite',
    skip: false,
    setUp: () => Promise.resolve(),
    async open() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-'));
      const { handle } = await openWriter({ dataDir: dir }, WRITER);
      // a second connection, as another process of the data directory would have
      const raw = openJournal(journalPath(dir));
      opened.push({ dir, handle, raw });
      // async: a rule that throws at once still rejects, as PostgreSQL's do
      return subject(
        'SQLite',
        handle,
        SQLITE_RULES,
        (rule) => new Promise((resolve) => resolve(runOnSqlite(raw, rule))),
      );
    },
    environment: () => Promise.resolve({}),
    async tearDown() {
      for (const { dir, handle, raw } of opened.splice(0)) {
        await handle.close();
        raw.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function postgresOpener(): Opener {
  let cluster: Postgres | undefined;
  const opened: { dir: string; handle: JournalHandle; pool: pg.Pool }[] = [];
  return {
    kind: 'PostgreSQL',
    skip: postgresMissing(),
    async setUp() {
      cluster = await startPostgres();
    },
    async open() {
      const url = await cluster!.freshDatabase();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conformance-'));
      const databaseUrl = parseDatabaseUrl(url);
      if (typeof databaseUrl === 'string') throw new Error(databaseUrl);
      const { handle } = await openWriter({ dataDir: dir, databaseUrl, nodeId: NODE }, WRITER);
      const pool = openPool(url, 2);
      pool.on('error', () => undefined);
      opened.push({ dir, handle, pool });
      return subject('PostgreSQL', handle, RELEASING, (rule) => runOnPostgres(pool, rule));
    },
    async environment() {
      return { SMSDROP_DATABASE_URL: await cluster!.freshDatabase() };
    },
    async tearDown() {
      for (const { dir, handle, pool } of opened.splice(0)) {
        await handle.close();
        await pool.end();
        fs.rmSync(dir, { recursive: true, force: true });
      }
      await cluster?.stop();
    },
  };
}

/**
 * The tests `body` declares, run once on each journal: inside a describe named after it
 * ("… on SQLite", "… on PostgreSQL"). `open` gives a fresh, empty journal (closed after the file),
 * `environment` the settings that put child processes on one.
 */
export function onEachJournal(title: string, body: (journals: Journals) => void): void {
  for (const opener of [sqliteOpener(), postgresOpener()])
    describe(`${title} on ${opener.kind}`, { skip: opener.skip }, () => {
      before(() => opener.setUp());
      after(() => opener.tearDown());
      body({
        open: () => opener.open(),
        environment: () => opener.environment(),
        kind: opener.kind,
      });
    });
}
