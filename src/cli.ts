#!/usr/bin/env node
// smsdrop command line. Each command lives with its stage and registers itself here.
import { Command } from 'commander';

const program = new Command();
program
  .name('smsdrop')
  .description('Send template text messages from CSV files, exactly once (Cloopen Template SMS).')
  .showHelpAfterError();

// Usage errors exit 2, like configuration and file-level errors.
program.exitOverride((err) => {
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') process.exit(0);
  process.exit(2);
});

await program.parseAsync(process.argv);
