// How the daemon's work ends once a stop is asked for: a stop waits for the files in progress
// up to the grace period; a drain before maintenance waits for every request in flight.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/logger.js';
import type { FilePool } from './pool.js';
import { DRAIN_SIGNAL } from './signals.js';

async function drain(
  pool: FilePool,
  graceMs: number,
  signal: string,
  log: Logger,
): Promise<boolean> {
  log.info(
    `${signal}: stopping; no new files or requests, waiting up to ${graceMs} ms for ${pool.running} file(s) in progress (${signal} again exits at once)`,
  );
  const timeout = new AbortController();
  const idle = pool.onIdle().then(() => true);
  const expired = sleep(graceMs, false, { signal: timeout.signal }).catch(() => false);
  const drained = await Promise.race([idle, expired]);
  timeout.abort();
  return drained;
}

/** The files in progress ended: as a drain for maintenance, or within the grace period. */
export function endWork(
  config: Config,
  pool: FilePool,
  signal: string,
  log: Logger,
): Promise<boolean> {
  return signal === DRAIN_SIGNAL
    ? drainForMaintenance(pool, config, log)
    : drain(pool, config.graceMs, signal, log);
}

/**
 * `smsdrop drain`: as a stop, but every request in flight is waited for (they end by their own
 * timeouts), so that nothing is left in doubt. On PostgreSQL the node's claims are given up as
 * it closes (PgLeases.stop, and each file's claim as its run ends): the other nodes send its
 * files' remaining batches at once, not after SMSDROP_LEASE.
 */
async function drainForMaintenance(pool: FilePool, config: Config, log: Logger): Promise<true> {
  const rest = config.databaseUrl
    ? "the other nodes send its files' remaining batches"
    : 'the files left in processing/ go on at the next start';
  log.info(
    `draining: no new files or requests; waiting for ${pool.running} file(s) in progress to finish their requests in flight, then ${rest} (SIGTERM exits at once)`,
    { event: 'daemon-draining', running: pool.running },
  );
  await pool.onIdle();
  log.info(`drained: nothing in flight; ${rest}`, { event: 'daemon-drained' });
  return true;
}
