// The journal's checkpoints, on a thread of their own (checkpoints.ts says why): this thread's
// connection copies the WAL's committed pages into the database every few hundred milliseconds.
// It never writes a row and never waits for a lock: a checkpoint that finds the WAL in use copies
// what it can, and the next one the rest.
import { workerData } from 'node:worker_threads';
import Database, { setSynchronous } from './sqlite.js';

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

const timer = setInterval(() => {
  try {
    connection.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // An I/O error, a full disk: the journal's own connection meets it too, and checkpoints
    // within its bound (checkpoints.ts); this thread ends.
    clearInterval(timer);
    connection.close();
  }
}, job.everyMs);
