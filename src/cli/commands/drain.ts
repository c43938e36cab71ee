// `smsdrop drain`: asks the daemon holding the data directory to drain before maintenance (the
// signal of daemon/signals.ts: no new file or request, every request in flight finished, then it
// exits 0; on PostgreSQL its files' remaining batches go to the other nodes at once), and waits
// until it has gone. The daemon is found by the data directory's lock, as `status` finds it.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { DRAIN_SIGNAL } from '../../daemon/signals.js';
import { lockHolder } from '../../datadir/lock.js';
import { EXIT } from '../../errors.js';
import { configFor, exitWith } from '../common.js';

/** How often the command looks whether the daemon has gone. */
const LOOK_MS = 200;

export function registerDrainCommand(program: Command): void {
  program
    .command('drain')
    .description(
      "stop the daemon of DATA_DIR taking files and requests, let what is in flight finish, and wait for it to exit (on PostgreSQL the other nodes send its files' remaining batches)",
    )
    .action(async (_opts: unknown, command: Command) => {
      const config = configFor(command);
      const holder = lockHolder(config.dataDir);
      if (!holder || !holder.what.startsWith('smsdrop run'))
        exitWith(
          EXIT.usage,
          `smsdrop: E_USAGE: drain: no daemon runs on ${config.dataDir}${holder ? ` (pid ${holder.pid} is ${holder.what})` : ''}: nothing to drain`,
        );
      process.kill(holder.pid, DRAIN_SIGNAL);
      process.stdout.write(`draining the daemon (pid ${holder.pid}) of ${config.dataDir}…\n`);
      while (lockHolder(config.dataDir)?.pid === holder.pid) await sleep(LOOK_MS);
      process.stdout.write(`drained: the daemon (pid ${holder.pid}) has exited\n`);
    });
}
