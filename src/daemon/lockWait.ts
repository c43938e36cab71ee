// A daemon started while a one-shot command holds the data directory (`smsdrop send`, a foreground
// `smsdrop resume`, `smsdrop prune`…) waits for it to finish instead of exiting: exit 2 is a
// set-up error, which pm2 does not restart, so a command an operator ran at the moment the daemon
// (re)started would otherwise keep the daemon down. Another daemon holding it is a set-up error.
import { setTimeout as sleep } from 'node:timers/promises';
import { LockedError } from '../datadir/lock.js';
import type { Logger } from '../log/logger.js';

/** What the daemon's lock says it is (acquireLock's `what`). */
export const DAEMON_ROLE = 'smsdrop run (daemon)';

/** How often a daemon waiting for a command's lock tries again. */
const LOCK_RETRY_MS = 500;

/**
 * `open` (which takes the data directory's lock), tried again while a command holds the lock,
 * saying so once; any other error, or another daemon's lock, as it is.
 */
export async function openWhenCommandsEnd<T>(open: () => Promise<T>, log: Logger): Promise<T> {
  let told = false;
  for (;;) {
    try {
      return await open();
    } catch (err) {
      if (!(err instanceof LockedError) || err.holder === DAEMON_ROLE) throw err;
      if (!told)
        log.warn(
          `smsdrop run: the data directory is in use by pid ${err.holderPid} (${err.holder}); waiting for it to finish`,
          { event: 'data-dir-wait', pid: err.holderPid, holder: err.holder },
        );
      told = true;
      await sleep(LOCK_RETRY_MS);
    }
  }
}
