// `smsdrop status [--json]`: what the sending process is doing now (report/status.ts), read from
// the journal only (never the lock).
import type { Command } from 'commander';
import { openReader } from '../../journals/index.js';
import { readStatus, renderStatus } from '../../report/status.js';
import { configFor } from '../common.js';
import { FILE_CONTROL } from '../../ports/states.js';
import { type FileProgress } from '../../report/status.js';
import { previewLines, previewOf } from '../../report/preview.js';

/** A held file, its preview, and how to send it or not. */
function heldLines(f: FileProgress): string[] {
  return [
    `${f.name} (id ${f.id}) is held for approval: smsdrop approve ${f.id} sends it (--at TIME schedules it), smsdrop cancel ${f.id} refuses it`,
    ...(f.preview ? previewLines(f.preview) : []),
  ];
}

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
        const held = status.files.filter((f) => f.status === FILE_CONTROL.held);
        if (reader) for (const f of held) f.preview = await previewOf(reader, f.id, config);
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(status, null, 2)}\n`
            : `${[renderStatus(status, config.timezone), ...held.flatMap(heldLines)].join('\n')}\n`,
        );
      } finally {
        reader?.close();
      }
    });
}
