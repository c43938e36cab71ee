// A command that sends in the foreground (send, retry, resume): its runtime, with the data
// directory's lock, and Ctrl-C / SIGTERM handled as a person at a terminal expects.
import { EXIT, errorCode, type SmsdropError, withCode } from '../errors.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/logger.js';
import { openRuntime, type Runtime } from '../pipeline/runtime.js';
import { exitWith } from './common.js';

/**
 * The runtime of a command that sends in the foreground (send, retry, resume): another process on
 * the data directory exits 2 with `whenLocked` (what to say after the lock's own message), and the
 * provider is named and Ctrl-C stops it gracefully once it is open.
 */
export async function openForegroundRuntime(
  config: Config,
  role: string,
  log: Logger,
  whenLocked: (message: string) => string,
  /** The exit status when another process holds the data directory. */
  lockedStatus: number = EXIT.usage,
): Promise<Runtime> {
  let runtime: Runtime;
  try {
    runtime = await openRuntime(config, { role, log });
  } catch (err) {
    if (errorCode(err) === 'E_DATA_DIR_LOCKED')
      exitWith(lockedStatus, whenLocked(withCode(err as SmsdropError)));
    throw err;
  }
  log.info(`sending to ${runtime.provider.describe}`);
  stopOnSignals(runtime, log);
  return runtime;
}

/**
 * Ctrl-C / SIGTERM for a command in the foreground (send, retry, resume): the first stops new
 * requests and lets those in flight finish and be recorded; the second exits at once (what was in
 * flight is then in doubt, and settled from the journal at the next run).
 */
export function stopOnSignals(runtime: Runtime, log: Logger): void {
  const onSignal = (signal: string) => {
    if (runtime.stop.signal.aborted) {
      log.warn(
        `${signal} again: exiting now; requests in flight are in doubt and resolved at the next run`,
      );
      process.exit(130);
    }
    log.warn(
      `${signal}: no new requests; waiting for those in flight (send ${signal} again to exit at once)`,
    );
    runtime.stop.abort();
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
}
