// A small file dropped on one node while another node reads a large one: how long the small file
// waits before its first request. Two `smsdrop run` daemons on one PostgreSQL journal and one
// simulator; node 0 is given a file of `largeRows` rows; once its intake has committed rows,
// node 1 is given a file of `smallRows` rows (numbers of their own: nothing to hold back as a
// repeat). Timed from that drop to the first request of the small file (its first attempt's
// started_at, written on this machine's clock), with whether the large file was still being read
// then. The nodes are stopped once the small file has started (or the wait timed out): the large
// file's sending is not the point.
import { copyFileSync, mkdirSync, renameSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { generateCsv, SIMULATOR_TEMPLATES } from './generate.js';
import {
  dataDirOf,
  type Daemon,
  type NodesSettings,
  startNode,
  stopNodes,
  waitUntilWatching,
} from './nodes.js';
import { startSimulatorProcess } from './processes.js';

export interface SmallFileWait {
  largeRows: number;
  smallRows: number;
  /** The small file's drop to its first request; null when it had not started in time. */
  secondsToFirstRequest: number | null;
  /** Whether the large file was still being read when the small one's first request started. */
  largeStillReading: boolean | null;
  /** Rows of the large file in the journal when the small one was dropped. */
  largeRowsAtDrop: number;
  load: [number, number];
}

const POLL_MS = 20;

/** Rows of the file named `name` in the journal, and its status; none: not recorded yet. */
async function fileState(
  db: pg.Client,
  name: string,
): Promise<{ rows: number; status: string; firstRequest: string | null } | undefined> {
  const { rows } = await db.query<{ rows: string; status: string; first: string | null }>(
    `SELECT (SELECT count(*) FROM rows r WHERE r.file_id = f.id) AS rows, f.status,
       (SELECT min(a.started_at) FROM attempts a JOIN batches b ON b.id = a.batch_id
         WHERE b.file_id = f.id) AS first
     FROM files f WHERE f.name = $1 ORDER BY f.id DESC LIMIT 1`,
    [name],
  );
  const row = rows[0];
  return row && { rows: Number(row.rows), status: row.status, firstRequest: row.first };
}

function drop(s: NodesSettings, node: number, source: string): void {
  const inbox = path.join(dataDirOf(s, node), 'inbox');
  const name = path.basename(source);
  copyFileSync(source, path.join(inbox, `${name}.part`));
  renameSync(path.join(inbox, `${name}.part`), path.join(inbox, name));
}

/** Polls until `ready` answers true, or `timeoutMs` passes (false). */
async function until(ready: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) return false;
    await sleep(POLL_MS);
  }
  return true;
}

/** The measure, on the journal at `s.databaseUrl` (a fresh database: two nodes start on it). */
export async function measureSmallFileWait(
  s: Omit<NodesSettings, 'nodes' | 'rows' | 'databaseUrl'> & { databaseUrl: string },
  largeRows: number,
  smallRows: number,
): Promise<SmallFileWait> {
  const settings: NodesSettings = { ...s, nodes: 2, rows: largeRows };
  mkdirSync(s.workDir, { recursive: true });
  const large = path.join(s.workDir, 'large.csv');
  const small = path.join(s.workDir, 'small.csv');
  await generateCsv(large, largeRows, s.seed, s.personalised);
  await generateCsv(small, smallRows, s.seed + 1, s.personalised, largeRows);
  const sim = await startSimulatorProcess(s.cli, s.env, s.latencyMs, SIMULATOR_TEMPLATES);
  const daemons: Daemon[] = [];
  const db = new pg.Client({ connectionString: s.databaseUrl });
  try {
    const env = { ...s.env, SMSDROP_BASE_URL: sim.url };
    for (let node = 0; node < 2; node++) daemons.push(startNode({ ...settings, env }, node));
    await Promise.all(daemons.map((d, node) => waitUntilWatching(d, node)));
    await db.connect();
    drop(settings, 0, large);
    // The large file's intake under way: some of its rows committed.
    let largeRowsAtDrop = 0;
    await until(async () => {
      largeRowsAtDrop = (await fileState(db, 'large.csv'))?.rows ?? 0;
      return largeRowsAtDrop > 0;
    }, s.timeoutMs);
    const loadAtDrop = os.loadavg()[0]!;
    const dropped = Date.now();
    drop(settings, 1, small);
    let started: string | null = null;
    await until(async () => {
      started = (await fileState(db, 'small.csv'))?.firstRequest ?? null;
      return started !== null;
    }, s.timeoutMs);
    const largeNow = await fileState(db, 'large.csv');
    const startedAt: string | null = started;
    return {
      largeRows,
      smallRows,
      secondsToFirstRequest:
        startedAt === null ? null : round((Date.parse(startedAt) - dropped) / 1000),
      largeStillReading: startedAt === null ? null : largeNow?.status === 'intake',
      largeRowsAtDrop,
      load: [round(loadAtDrop, 2), round(os.loadavg()[0]!, 2)],
    };
  } finally {
    await db.end().catch(() => undefined);
    await stopNodes(daemons);
    await sim.stop();
  }
}

const round = (x: number, digits = 3) => Number(x.toFixed(digits));
