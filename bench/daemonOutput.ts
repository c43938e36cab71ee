// The daemon bench's figures for one file: what the journal says of it (take, first request,
// last answer, requests, accepted), on either journal, and the table printed without --json.
import path from 'node:path';
import Table from 'cli-table3';
import pg from 'pg';
import Database from '../src/journal/sqlite.js';
import type { DaemonBenchResult } from './daemon.js';

export interface DaemonFigures {
  file: string;
  outcome: 'done' | 'failed';
  /** Resident memory just before the drop, MB. */
  rssBeforeMb: number;
  /** The most resident memory from the drop until the file was in done/, MB. */
  peakRssMb: number;
  rssAfterDoneMb: number;
  rssAfterIdleMb: number;
  dropToDoneS: number;
  /** From the rename into inbox/ to the first request's start (the journal's attempt). */
  dropToFirstRequestS: number | null;
  /** From the take (files.taken_at, else created_at) to the first request's start. */
  takeToFirstRequestS: number | null;
  requests: number;
  accepted: number;
  /** Requests over the first request's start to the last answer. */
  requestsPerSec: number | null;
}

export interface FileJournalFigures {
  takenAtMs: number | null;
  firstRequestAtMs: number | null;
  sendingSeconds: number;
  requests: number;
  accepted: number;
}

const FILE_SQL = (p: (n: number) => string) => `
  SELECT coalesce(f.taken_at, f.created_at) AS taken,
    (SELECT min(a.started_at) FROM attempts a JOIN batches b ON b.id = a.batch_id
      WHERE b.file_id = f.id) AS first,
    (SELECT max(a.finished_at) FROM attempts a JOIN batches b ON b.id = a.batch_id
      WHERE b.file_id = f.id) AS last,
    v.requests, v.accepted
  FROM files f JOIN v_files v ON v.id = f.id
  WHERE f.name = ${p(1)} ORDER BY f.id DESC LIMIT 1`;

type Row = Record<'taken' | 'first' | 'last' | 'requests' | 'accepted', unknown>;

/** A time as a journal gives it: ISO text or a Date, or milliseconds (SQLite's attempts). */
const time = (x: unknown) =>
  typeof x === 'number'
    ? x
    : typeof x === 'string' || x instanceof Date
      ? new Date(x).getTime()
      : null;

function figuresOf(row: Row | undefined): FileJournalFigures {
  if (!row)
    return { takenAtMs: null, firstRequestAtMs: null, sendingSeconds: 0, requests: 0, accepted: 0 };
  const first = time(row.first);
  const last = time(row.last);
  return {
    takenAtMs: time(row.taken),
    firstRequestAtMs: first,
    sendingSeconds: first !== null && last !== null ? (last - first) / 1000 : 0,
    requests: Number(row.requests),
    accepted: Number(row.accepted),
  };
}

export async function journalFigures(
  ctx: { dataDir: string; databaseUrl?: string },
  name: string,
): Promise<FileJournalFigures> {
  if (ctx.databaseUrl) {
    const client = new pg.Client({ connectionString: ctx.databaseUrl });
    await client.connect();
    try {
      const r = await client.query<Row>(
        FILE_SQL((n) => `$${n}`),
        [name],
      );
      return figuresOf(r.rows[0]);
    } finally {
      await client.end();
    }
  }
  const db = new Database(path.join(ctx.dataDir, 'journal.sqlite'), {
    readonly: true,
    fileMustExist: true,
  });
  try {
    return figuresOf(db.prepare(FILE_SQL(() => '?')).get(name) as Row | undefined);
  } finally {
    db.close();
  }
}

const plain = { style: { head: [], border: [] } };
const seconds = (x: number | null) => (x === null ? '-' : x.toFixed(2));

export function printDaemonTable(r: DaemonBenchResult): void {
  const t = new Table({
    head: [
      'file',
      'outcome',
      'RSS before',
      'peak RSS',
      'after done',
      'after idle',
      'drop→1st request s',
      'take→1st request s',
      'requests/s',
      'drop→done s',
    ],
    ...plain,
  });
  for (const f of r.files)
    t.push([
      f.file,
      f.outcome,
      f.rssBeforeMb,
      f.peakRssMb,
      f.rssAfterDoneMb,
      f.rssAfterIdleMb,
      seconds(f.dropToFirstRequestS),
      seconds(f.takeToFirstRequestS),
      f.requestsPerSec ?? '-',
      f.dropToDoneS.toFixed(2),
    ]);
  const lines = [
    `\`smsdrop run\` on ${r.journal}, started as ${r.startAs === 'bin' ? 'bin/smsdrop' : 'node dist/cli.js'} (node ${r.nodeArgs.join(' ') || '(no flags)'}; MALLOC_ARENA_MAX ${r.mallocArenaMax ?? 'unset'}): ${r.rows.toLocaleString('en-US')} rows a file, latency ${r.latencyMs} ms, concurrency ${r.concurrency}; memory in MB, idle at start ${r.idleRssMb}`,
    t.toString(),
    `machine: ${r.machine.cpus} CPUs, Node ${r.machine.node}, load ${r.machine.loadAvgStart.join(' ')} -> ${r.machine.loadAvgEnd.join(' ')}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
