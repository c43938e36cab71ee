#!/usr/bin/env node
// smsdrop command line. Each command lives with its stage and registers itself here.
import v8 from 'node:v8';
import { Command } from 'commander';
import { addSettingFlags, EXIT } from './cli/common.js';
import { registerSendCommand } from './pipeline/command.js';
import { redactSecrets } from './log/redact.js';

// undici parses HTTP with llhttp compiled to WebAssembly on the first connection; V8's optimising
// tier then takes ~30 MB for a moment, the peak of a whole run. The baseline tier alone parses a
// 150-byte answer just as well (1M-row bench: peak RSS 171 -> 139 MB).
v8.setFlagsFromString('--liftoff-only');
// V8 lets the old generation grow to up to 4x what survived its last full collection before it
// collects again, and picks the factor from how fast collection went, so on a busy machine some
// runs kept ~20 MB more dead rows and request bodies than others (1M-row send: ~1 run in 4 peaked
// at 155-166 MB, the rest at ~140). A fixed 1.3x keeps every run near 140 MB; the extra full
// collections cost no measurable CPU (6 alternating pairs: 12.2-13.3 s against 12.3-13.4 s).
v8.setFlagsFromString('--heap-growing-percent=30');

const program = new Command();
program
  .name('smsdrop')
  .description('Send template text messages from CSV files, exactly once (Cloopen Template SMS).')
  .showHelpAfterError();
addSettingFlags(program);

// Usage errors exit 2, like configuration and file-level errors.
program.exitOverride((err) => {
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') process.exit(0);
  process.exit(2);
});

(await import('./simulator/command.js')).registerSimulateCommand(program);
registerSendCommand(program);
(await import('./report/report.js')).registerReportCommand(program);
(await import('./report/export.js')).registerExportCommand(program);
(await import('./report/retry.js')).registerRetryCommand(program);
(await import('./report/resume.js')).registerResumeCommand(program);
(await import('./report/status.js')).registerStatusCommand(program);
(await import('./daemon/command.js')).registerRunCommand(program);
(await import('./suppress/command.js')).registerSuppressCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // Anything unexpected: a clear line, never a secret, exit 1.
  process.stderr.write(`smsdrop: unexpected error: ${redactSecrets((err as Error)?.stack ?? String(err))}\n`);
  process.exit(EXIT.unexpected);
}
