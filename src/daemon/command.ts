// `smsdrop run` (also `npm start`): the daemon in the foreground, for a terminal or pm2.
import type { Command } from 'commander';
import { configFor } from '../cli/common.js';

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description(
      'watch DATA_DIR/inbox/ and send every CSV dropped there; results in done/, refusals in failed/ (stop with SIGTERM or Ctrl-C)',
    )
    .action(async (_opts: unknown, command: Command) => {
      const config = configFor(command);
      // Loaded here, so the other commands do not carry the watcher.
      const { runDaemon } = await import('./index.js');
      process.exit(await runDaemon(config));
    });
}
