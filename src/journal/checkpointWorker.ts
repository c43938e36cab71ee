// The journal's thread (checkpoints.ts says why): this thread's connection copies the WAL's
// committed pages into the database every few hundred milliseconds, and, when asked, reads for the
// doubts' look-up (placedRows.ts), the one read that goes over every row of a file. It never
// writes a row and never waits for a lock: a checkpoint that finds the WAL in use copies what it
// can, and the next one the rest.
import { parentPort, workerData } from 'node:worker_threads';
import { SmsdropError } from '../errors.js';
import Database, { setSynchronous } from './sqlite.js';
import {
  keysTable,
  type PlacedRow,
  type PlacedRowsAnswer,
  type PlacedRowsRequest,
} from './placedRowsSql.js';

export interface CheckpointJob {
  file: string;
  synchronous: 'normal' | 'full';
  everyMs: number;
}

const job = workerData as CheckpointJob;
const connection = new Database(job.file, { fileMustExist: true });
connection.pragma('busy_timeout = 0');
// A checkpoint syncs the WAL, then the database, as the journal's own connection would.
setSynchronous(connection, job.synchronous);
// Pages go from the WAL to the database file without passing through this connection's cache.
connection.pragma('cache_size = -64');
// The look-up's table of doubts, as on the journal's connection (open.ts).
connection.pragma('temp_store = MEMORY');

const timer = setInterval(() => {
  try {
    connection.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // An I/O error, a full disk: the journal's own connection meets it too, and checkpoints
    // within its bound (checkpoints.ts); this thread ends, and a look-up asked of it is read by the
    // asker itself.
    stop();
  }
}, job.everyMs);

/** Answers the look-up's requests in turn; a failed one says why, and the asker reads itself. */
function serveLookups(): void {
  const tables = new Map<string, ReturnType<typeof keysTable>>();
  const run = (request: PlacedRowsRequest): PlacedRow[] => {
    if (request.op === 'keys') {
      let table = tables.get(request.table);
      if (!table) tables.set(request.table, (table = keysTable(connection, request.table)));
      table.add(request.keys);
      return [];
    }
    const table = tables.get(request.table);
    if (!table) throw new SmsdropError('E_INTERNAL', `no look-up ${request.table}`);
    if (request.op === 'between') return table.between(request.fileId, request.first, request.last);
    tables.delete(request.table);
    table.drop();
    return [];
  };
  parentPort?.on('message', (message: { id: number; request: PlacedRowsRequest } | 'stop') => {
    if (message === 'stop') return stop();
    const { id, request } = message;
    let answer: PlacedRowsAnswer;
    try {
      answer = { id, rows: run(request) };
    } catch (err) {
      answer = { id, error: err instanceof Error ? err.message : String(err) };
    }
    parentPort!.postMessage(answer);
  });
}

/**
 * Asked to stop (stopCheckpoints), or a checkpoint failed: the connection closed, the thread ends
 * by itself. Not terminated from outside: a thread terminated while it loaded SQLite's addon took
 * the whole process down (Node 26, "FATAL ERROR: Error::New napi_get_last_error_info"), and a
 * message is read only once this module has run.
 */
function stop(): void {
  clearInterval(timer);
  connection.close();
  parentPort?.close();
}

serveLookups();
