// `smsdrop run` (also `npm start`): the daemon in the foreground, for a terminal or pm2.
import type { Command } from 'commander';
import { configFor, EXIT } from '../common.js';
import type { DaemonEnd } from '../../daemon/index.js';
import { rememberEarlyDrain } from '../../daemon/signals.js';

/** 128 + SIGINT's number: what a shell reports for a Ctrl-C; a second signal exits with it. */
const FORCED = 130;

const EXIT_STATUS: Record<DaemonEnd, number> = {
  stopped: EXIT.ok,
  incomplete: EXIT.incomplete,
  'setup-failed': EXIT.usage,
  forced: FORCED,
};

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description(
      'watch DATA_DIR/inbox/ and send every CSV dropped there; results in done/, refusals in failed/ (stop with SIGTERM or Ctrl-C)',
    )
    .action(async (_opts: unknown, command: Command) => {
      rememberEarlyDrain(); // before anything slow: until then a drain would kill the process
      const config = configFor(command);
      // Loaded here, so the other commands do not carry the watcher.
      const { runDaemon } = await import('../../daemon/index.js');
      process.exit(EXIT_STATUS[await runDaemon(config)]);
    });
}
