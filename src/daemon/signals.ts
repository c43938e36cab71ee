// SIGTERM and SIGINT for the daemon. The first asks for a drain (no new file or request starts);
// a second one during the drain asks to go at once, leaving what was in flight in doubt, to be
// settled from the journal at the next start. SIGUSR2 (`smsdrop drain`) asks for the same way
// out, as a drain before maintenance: the daemon then waits for every request in flight, with no
// grace period, and a node of a PostgreSQL journal hands its batches to the other nodes. Going is
// the command line's business: this only says that it was asked for.
import type { Logger } from '../log/logger.js';
import type { Runtime } from '../pipeline/runtime.js';

/** The signal `smsdrop drain` sends: stop taking work, finish what is in flight, go. */
export const DRAIN_SIGNAL: NodeJS.Signals = 'SIGUSR2';

/** A drain asked for before listenForStop listens (the daemon still starting, say). */
let drainAskedEarly = false;
let earlyListener: (() => void) | undefined;

/**
 * Listens for the drain signal from the process's start: Node's own answer to SIGUSR2 is to exit,
 * so a `smsdrop drain` while the daemon opens its journal (a minute, when its PostgreSQL is down)
 * would kill it. The request is remembered, and the daemon drains once it has started.
 */
export function rememberEarlyDrain(): void {
  if (earlyListener) return;
  earlyListener = () => (drainAskedEarly = true);
  process.on(DRAIN_SIGNAL, earlyListener);
}

export interface StopSignals {
  /** Resolves with what asked to stop: the first signal's name, or 'journal failure'. */
  readonly requested: Promise<string>;
  /** Resolves when a second signal asks to exit at once. */
  readonly forced: Promise<'forced'>;
  /** The stop is done (nothing in flight, journal closing): later signals change nothing. */
  done(): void;
}

export function listenForStop(runtime: Runtime, log: Logger): StopSignals {
  let stopped = false;
  let force = () => {};
  const forced = new Promise<'forced'>((resolve) => (force = () => resolve('forced')));
  const requested = new Promise<string>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      // The stop is done (nothing in flight, journal closed) and the process is on its way out: a
      // second signal then (a supervisor's, or one sent to a wrapper and passed on) changes
      // nothing.
      if (stopped) return;
      if (runtime.stop.signal.aborted) {
        // (Once the log has ended, on the way out after a grace period ran over, nothing can be
        // said.)
        if (!log.writableEnded)
          log.warn(
            `${signal} again: exiting now; requests in flight are in doubt and settled from the journal at the next start`,
          );
        force();
        return;
      }
      resolve(signal);
      runtime.stop.abort();
    };
    process.on('SIGTERM', onSignal).on('SIGINT', onSignal).on(DRAIN_SIGNAL, onSignal);
    if (earlyListener) process.off(DRAIN_SIGNAL, earlyListener);
    earlyListener = undefined;
    if (drainAskedEarly) {
      log.info(`${DRAIN_SIGNAL} came while the daemon was starting: it drains now`);
      onSignal(DRAIN_SIGNAL);
    }
    // Stopped from within (the journal lost requests' records: intents.ts): the same way out.
    runtime.stop.signal.addEventListener('abort', () => resolve('journal failure'), { once: true });
  });
  return { requested, forced, done: () => (stopped = true) };
}
