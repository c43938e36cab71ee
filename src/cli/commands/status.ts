// `smsdrop status [--json]`: what the sending process is doing now (report/status.ts), read from
// the journal only (never the lock).
import type { Command } from 'commander';
import { openReader } from '../../journals/index.js';
import { readStatus, renderStatus } from '../../report/status.js';
import { configFor } from '../common.js';

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      'what is being sent now: files in progress with ETA, requests in flight, send rate, pause and why',
    )
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }, command: Command) => {
      const config = configFor(command, { forReading: true });
      const reader = await openReader(config);
      try {
        const status = await readStatus(reader, config.dataDir);
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(status, null, 2)}\n`
            : `${renderStatus(status, config.timezone)}\n`,
        );
      } finally {
        reader?.close();
      }
    });
}
