#!/usr/bin/env node
// smsdrop command line. Each command lives in cli/commands/ and registers itself here.
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import { Command } from 'commander';
import { addSettingFlags, EXIT, exitOnUserError } from './cli/common.js';
import { decorateCommands } from './cli/help.js';
import { capYoungGeneration } from './cli/youngGeneration.js';
import { logUnexpected } from './log/logger.js';
import { redactSecrets } from './log/redact.js';

// undici parses HTTP with llhttp compiled to WebAssembly on the first connection; V8's optimising
// tier then takes tens of MB for a moment, the peak of a whole run. The baseline tier alone parses
// a 150-byte answer just as well (docs/benchmark-history.md, "Earlier series").
v8.setFlagsFromString('--liftoff-only');
// V8 lets the old generation grow to up to 4x what survived its last full collection before it
// collects again, and picks the factor from how fast collection went, so on a busy machine some
// runs keep far more dead rows and request bodies than others. A fixed 1.3x keeps every run's peak
// alike, for full collections whose CPU is within the noise (docs/benchmark-history.md, "the old
// generation collected sooner").
v8.setFlagsFromString('--heap-growing-percent=30');
capYoungGeneration();

// package.json sits one folder above both src/cli.ts and dist/cli.js.
const { version } = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
) as { version: string };

const program = new Command();
program
  .name('smsdrop')
  .description('send template text messages from CSV files, exactly once (Cloopen Template SMS)')
  .version(version, '-V, --version', 'print the version')
  .helpOption('-h, --help', 'print this help')
  .helpCommand('help [command]', 'print the help of a command')
  // A usage error is one line with its code and a pointer, not the whole help: the line is what
  // went wrong.
  .showHelpAfterError('see smsdrop --help')
  .configureOutput({
    outputError: (text, write) =>
      write(
        text
          .replace(/^error: /, 'smsdrop: E_USAGE: ')
          .replace(/\n\(Did you mean (.*)\?\)/, ' (did you mean $1?)'),
      ),
  })
  .addHelpText(
    'after',
    `
Exit status: 0 done; 3 the work ended incomplete (rows not accepted); 2 bad arguments or settings,
or a file refused as a whole; 1 anything unexpected. Each command's --help says more.

Settings come from the environment (SMSDROP_*), config/local.json and the flags above; every
setting, its default and what it means: the README's Settings table.`,
  );
addSettingFlags(program);

// Usage errors exit 2, like configuration and file-level errors.
program.exitOverride((err) => {
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version')
    process.exit(EXIT.ok);
  process.exit(EXIT.usage);
});

type Register = (program: Command) => void;
/**
 * Each command's module, by the names it registers, in the order the help lists them. Loading
 * them all takes ~0.07 s of every start (`send`'s first request waits for it), so only the one
 * the arguments name is loaded: when exactly one of these names is among them. Otherwise (the
 * help, a mistyped command, a file or value that is also a command's name) all are.
 */
const COMMANDS: Array<[names: string[], load: () => Promise<Register>]> = [
  [['simulate'], async () => (await import('./cli/commands/simulate.js')).registerSimulateCommand],
  [['send'], async () => (await import('./cli/commands/send.js')).registerSendCommand],
  [['report'], async () => (await import('./cli/commands/report.js')).registerReportCommand],
  [['export'], async () => (await import('./cli/commands/export.js')).registerExportCommand],
  [['retry'], async () => (await import('./cli/commands/retry.js')).registerRetryCommand],
  [['resume'], async () => (await import('./cli/commands/resume.js')).registerResumeCommand],
  [
    ['approve', 'pause', 'cancel'],
    async () => (await import('./cli/commands/control.js')).registerControlCommands,
  ],
  [['status'], async () => (await import('./cli/commands/status.js')).registerStatusCommand],
  [['run'], async () => (await import('./cli/commands/run.js')).registerRunCommand],
  [['drain'], async () => (await import('./cli/commands/drain.js')).registerDrainCommand],
  [['suppress'], async () => (await import('./cli/commands/suppress.js')).registerSuppressCommand],
  [['backup'], async () => (await import('./cli/commands/backup.js')).registerBackupCommand],
  [['prune'], async () => (await import('./cli/commands/prune.js')).registerPruneCommand],
  [['migrate'], async () => (await import('./cli/commands/migrate.js')).registerMigrateCommand],
];

const args = process.argv.slice(2);
const named = COMMANDS.filter(([names]) => names.some((name) => args.includes(name)));
for (const [, load] of named.length === 1 ? named : COMMANDS) (await load())(program);
decorateCommands(program);

// Bare `smsdrop` (or `smsdrop suppress`) asks what there is: the help, on stdout, as a success.
const asked =
  args.length === 0
    ? program
    : args.length === 1
      ? program.commands.find((c) => c.name() === args[0] && c.commands.length > 0)
      : undefined;
if (asked) {
  asked.outputHelp();
  process.exit(EXIT.ok);
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // A setting, an argument, the machine (a full disk, a data directory it may not write): one
  // line with its code, exit 2, so that pm2 does not restart it for ever (ecosystem.config.js).
  exitOnUserError(err);
  // Anything unexpected: exit 1, never a secret, and the stack in the log file (or here, when there
  // is none).
  const logs = await logUnexpected(err).catch(() => []);
  const detail =
    logs.length > 0
      ? `${(err as Error)?.message ?? String(err)} (the stack is in the log, ${logs.join(', ')})`
      : ((err as Error)?.stack ?? String(err));
  process.stderr.write(`smsdrop: unexpected error: ${redactSecrets(detail)}\n`);
  process.exit(EXIT.unexpected);
}
