// The daemon's pruning: once at start, then once a day, while it sends. Each run goes step by step
// through the journal's write queue (journal/prune.ts), so sending waits at most one step; a stop
// ends it between two steps, and the daemon waits for that before it closes the journal.
import type { Config } from '../config/index.js';
import type { Logger } from '../log/logger.js';
import type { Runtime } from '../pipeline/runtime.js';
import { describeError } from '../log/redact.js';
import { describePrune, prune } from './prune.js';

export const PRUNE_EVERY_MS = 24 * 3_600_000;

export interface PruneSchedule {
  /** Stops the schedule; resolves once a run under way has stopped. */
  stop(): Promise<void>;
}

export function schedulePruning(config: Config, runtime: Runtime, log: Logger): PruneSchedule {
  if (config.keep.ms === 0) return { stop: async () => {} };
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const runOnce = (): void => {
    running = (async () => {
      if (runtime.stop.signal.aborted) return;
      try {
        const report = await prune(runtime.journal, config.dataDir, config.keep, {
          signal: runtime.stop.signal,
          busy: runtime.context.inProgress,
        });
        if (report.files.length > 0 || report.removed.files.length > 0)
          log.info(describePrune(report), {
            event: 'pruned',
            files: report.files.length,
            rows: report.records.rows,
            bytesAfter: report.bytesAfter,
          });
      } catch (err) {
        log.error(
          `pruning (SMSDROP_KEEP ${config.keep.text}) failed: ${describeError(err)}; tried again in a day, or run smsdrop prune once the daemon is stopped`,
          { event: 'prune-failed' },
        );
      }
      if (!runtime.stop.signal.aborted) timer = setTimeout(runOnce, PRUNE_EVERY_MS).unref();
    })();
  };
  runOnce();
  return {
    async stop() {
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
