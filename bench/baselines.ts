// The yardsticks: what the parts smsdrop stands on do alone, on the same file and machine, in the
// same run. smsdrop cannot beat these; the ratios say how much of their speed it keeps.
//   parse   csv-parse streaming the file and counting records (defaults plus bom: the part's
//   limit). insert  better-sqlite3 inserting the parsed rows, 1000 per transaction, into a fresh
//   file with
//           the journal's pragmas (WAL, synchronous NORMAL) and one column per CSV field; only the
//           transactions are timed, parsing them again is not.
//   journal better-sqlite3 storing the same rows in smsdrop's own rows table (a fresh journal:
//           its schema, indexes and pragmas), in the intake's 50,000-row transactions, each row as
//           a valid number of its group (app, template, values) in a batch of 200, a number once
//           per group (repeats are left out before the timing, as intake's filter keeps them out
//           of batches). Not a yardstick of the issue: a floor. What any intake keeping this
//           journal pays for the rows alone.
//   request undici alone (one keep-alive Pool, `concurrency` connections and requests in flight)
//           sending pre-built, signed, valid requests to the simulator; building is not timed.
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import Database from '../src/journal/sqlite.js';
import { parse } from 'csv-parse';
import { ROWS_PER_COMMIT } from '../src/journal/bulk.js';
import { createRowInserter } from '../src/journal/rowInserter.js';
import { openJournal } from '../src/journal/open.js';
import { Pool } from 'undici';
import { acceptHeader, contentType, encodeBody } from '../src/provider/encode.js';
import { formatTimestamp, signRequest } from '../src/provider/sign.js';
import type { TemplateSmsRequest } from '../src/provider/types.js';
import { cpuSecondsOf } from './processes.js';
import {
  type CsvMix,
  createRandom,
  LARGE_GROUPS,
  MAX_PER_REQUEST,
  PERSONALISED_TEMPLATE,
  phoneAt,
} from './generate.js';
import { connectionOf as sqliteOf } from '../src/journal/connection.js';

const READ_SIZE = 256 * 1024;
const INSERT_BATCH = 1000;

export interface RateResult {
  count: number;
  seconds: number;
  perSec: number;
}

const rate = (count: number, seconds: number): RateResult => ({
  count,
  seconds,
  perSec: seconds > 0 ? count / seconds : 0,
});
const elapsed = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

function records(file: string): AsyncIterable<string[]> {
  return createReadStream(file, { highWaterMark: READ_SIZE }).pipe(
    parse({ bom: true }),
  ) as AsyncIterable<string[]>;
}

/** csv-parse alone: data rows per second (the header is read but not counted). */
export async function measureParse(file: string): Promise<RateResult> {
  const start = process.hrtime.bigint();
  let count = 0;
  for await (const _ of records(file)) count++;
  return rate(count - 1, elapsed(start));
}

interface ParsedRow {
  line: number;
  cells: string[];
}

/**
 * Hands the file's data rows to `write` in batches of `size`, each made by `toRow` first: rows per
 * second of `write`'s time (parsing and `toRow` are not timed).
 */
async function timedBatches<T>(
  file: string,
  size: number,
  toRow: (row: ParsedRow) => T,
  write: (batch: T[]) => void,
): Promise<RateResult> {
  let timed = 0n;
  let count = 0;
  let line = 0;
  let batch: T[] = [];
  const flush = () => {
    const start = process.hrtime.bigint();
    write(batch);
    timed += process.hrtime.bigint() - start;
    count += batch.length;
    batch = [];
  };
  for await (const cells of records(file)) {
    if (++line === 1) continue; // header
    batch.push(toRow({ line, cells }));
    if (batch.length === size) flush();
  }
  if (batch.length > 0) flush();
  return rate(count, Number(timed) / 1e9);
}

/** better-sqlite3 alone: rows stored per second of transaction time. */
export async function measureInsert(file: string, dbFile: string): Promise<RateResult> {
  const db = new Database(dbFile);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE rows (
      id INTEGER PRIMARY KEY, line INTEGER NOT NULL, phone TEXT NOT NULL,
      template_id TEXT, data1 TEXT, data2 TEXT, status TEXT NOT NULL)`);
    const insert = db.prepare(
      'INSERT INTO rows (line, phone, template_id, data1, data2, status) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const writeBatch = db.transaction((batch: ParsedRow[]) => {
      for (const { line, cells } of batch)
        insert.run(
          line,
          cells[0] ?? '',
          cells[1] ?? null,
          cells[2] ?? null,
          cells[3] ?? null,
          'pending',
        );
    });
    return await timedBatches(file, INSERT_BATCH, (row) => row, writeBatch);
  } finally {
    db.close();
  }
}

interface JournalRow {
  line: number;
  raw: string;
  phone: string;
  group: number;
  batch: number;
  /** Its number is in its group already: not stored (intake keeps it out of batches). */
  repeat: boolean;
  /** The group's template and values (JSON), with the first row of a group. */
  newGroup: [templateId: string, datas: string] | undefined;
}

/**
 * better-sqlite3 storing the rows in smsdrop's rows table: rows stored per second of transaction
 * time. Only what every intake must write is written: the row, its number (spaces taken out), its
 * group (made when first seen) and its batch (a number; the batches table is not written). No
 * checks.
 */
export async function measureJournalInsert(file: string, dbFile: string): Promise<RateResult> {
  const db = openJournal(dbFile);
  try {
    const now = new Date().toISOString();
    const fileId = Number(
      sqliteOf(db)
        .prepare(
          "INSERT INTO files (sha256, name, size, encoding, status, created_at) VALUES ('bench', 'bench.csv', 0, 'utf-8', 'intake', ?)",
        )
        .run(now).lastInsertRowid,
    );
    const insertGroup = sqliteOf(db).prepare(
      'INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas) VALUES (?, ?, 0, ?, ?, ?)',
    );
    // As intake writes them: many rows to a statement (rowInserter.ts).
    const rowsOut = createRowInserter(db, fileId);
    // Numbers, groups, repeats and batches are worked out before the timing (a group's row is
    // written, timed, with the first row that names it): the floor is SQLite's work, not this
    // script's.
    const groups = new Map<string, { id: number; batch: number; inBatch: number }>();
    const placed = new Set<string>();
    let batches = 0;
    const toRow = ({ line, cells }: ParsedRow): JournalRow => {
      const raw = cells[0] ?? '';
      const phone = raw.replaceAll(' ', '');
      const key = `${cells[1]}\u0000${cells[2]}\u0000${cells[3]}`;
      const known = groups.get(key);
      const group = known ?? { id: groups.size + 1, batch: ++batches, inBatch: 0 };
      if (!known) groups.set(key, group);
      const newGroup: JournalRow['newGroup'] = known
        ? undefined
        : [cells[1] ?? '', JSON.stringify(cells.slice(2))];
      const numberKey = `${group.id}\u0000${phone}`;
      if (placed.has(numberKey))
        return { line, raw, phone, group: group.id, batch: 0, newGroup, repeat: true };
      placed.add(numberKey);
      if (group.inBatch === MAX_PER_REQUEST) Object.assign(group, { batch: ++batches, inBatch: 0 });
      group.inBatch++;
      return { line, raw, phone, group: group.id, batch: group.batch, newGroup, repeat: false };
    };
    const writeBatch = sqliteOf(db).transaction((batch: JournalRow[]) => {
      for (const row of batch) {
        if (row.newGroup) insertGroup.run(row.group, fileId, 'bench', ...row.newGroup);
        if (!row.repeat)
          rowsOut.add([
            row.line,
            row.raw,
            row.phone,
            row.group,
            'valid',
            null,
            null,
            row.batch,
            null,
          ]);
      }
      rowsOut.flush();
    });
    return await timedBatches(file, ROWS_PER_COMMIT, toRow, writeBatch);
  } finally {
    db.close();
  }
}

export interface Credentials {
  accountSid: string;
  authToken: string;
  appId: string;
}

export interface PrebuiltRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Requests shaped like smsdrop's plan of the file (full 200-number requests of the large groups
 * and one-number personalised ones, in the same proportion), shuffled, at most `cap` of them.
 */
export function buildRequests(mix: CsvMix, creds: Credentials, cap: number): PrebuiltRequest[] {
  const large = mix.largeGroupRows.map((n) => Math.ceil(n / 200));
  const wanted = large.reduce((s, n) => s + n, 0) + mix.personalisedRows;
  const scale = wanted > cap ? cap / wanted : 1;
  const shapes: TemplateSmsRequest[] = [];
  let phone = 0;
  const numbers = (n: number) => Array.from({ length: n }, () => phoneAt(phone++));
  large.forEach((count, g) => {
    const group = LARGE_GROUPS[g]!;
    for (let i = 0; i < Math.round(count * scale); i++) {
      shapes.push({
        to: numbers(200),
        appId: creds.appId,
        templateId: group.templateId,
        datas: group.datas,
      });
    }
  });
  for (let k = 0; k < Math.round(mix.personalisedRows * scale); k++) {
    shapes.push({
      to: numbers(1),
      appId: creds.appId,
      templateId: PERSONALISED_TEMPLATE,
      datas: [`订单${200_000_000 + k}`, '9.90元'],
    });
  }
  shuffle(shapes, createRandom(mix.seed + 1));
  return shapes.map((req) => prebuild({ ...req, reqId: randomUUID().replaceAll('-', '') }, creds));
}

function shuffle<T>(items: T[], random: () => number): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}

/** Signed and encoded as smsdrop's client would (JSON), so the bytes on the wire match. */
function prebuild(req: TemplateSmsRequest, creds: Credentials): PrebuiltRequest {
  const { sig, authorization } = signRequest(
    creds.accountSid,
    creds.authToken,
    formatTimestamp(new Date()),
  );
  const body = Buffer.from(encodeBody(req, 'json'), 'utf8');
  return {
    path: `/2013-12-26/Accounts/${encodeURIComponent(creds.accountSid)}/SMS/TemplateSMS?sig=${sig}`,
    headers: {
      accept: acceptHeader('json'),
      'content-type': contentType('json'),
      'content-length': String(body.length),
      authorization,
    },
    body,
  };
}

export interface RequestResult extends RateResult {
  /** Answers other than HTTP 200 with statusCode 000000 (should be 0). */
  failures: number;
  /** CPU seconds spent by this process (the client) and by the simulator while the requests ran. */
  clientCpuSeconds: number;
  simulatorCpuSeconds: number;
}

/**
 * undici alone: `concurrency` workers over one Pool, each sending the next request when its last
 * answers.
 */
export async function measureRequests(
  baseUrl: string,
  requests: PrebuiltRequest[],
  concurrency: number,
  simulatorPid: number,
): Promise<RequestResult> {
  const pool = new Pool(baseUrl, { connections: concurrency });
  let next = 0;
  let failures = 0;
  const worker = async () => {
    while (next < requests.length) {
      const r = requests[next++]!;
      const res = await pool.request({
        method: 'POST',
        path: r.path,
        headers: r.headers,
        body: r.body,
      });
      const text = await res.body.text();
      if (
        res.statusCode !== 200 ||
        (JSON.parse(text) as { statusCode?: string }).statusCode !== '000000'
      )
        failures++;
    }
  };
  try {
    const start = process.hrtime.bigint();
    const clientStart = process.cpuUsage();
    const simulatorStart = cpuSecondsOf(simulatorPid) ?? 0;
    await Promise.all(Array.from({ length: concurrency }, worker));
    const client = process.cpuUsage(clientStart);
    const simulatorCpuSeconds = (cpuSecondsOf(simulatorPid) ?? simulatorStart) - simulatorStart;
    return {
      ...rate(requests.length, elapsed(start)),
      failures,
      clientCpuSeconds: (client.user + client.system) / 1e6,
      simulatorCpuSeconds,
    };
  } finally {
    await pool.close();
  }
}
