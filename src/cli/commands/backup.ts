// `smsdrop backup DIR`: a consistent copy of the journal and its intents file, taken while the
// daemon runs (journal/backup.ts), into DIR. It takes no lock and writes nothing in the data
// directory. How to restore: docs/operations.md#backups.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { EXIT } from '../../errors.js';
import { backupJournal, journalPath } from '../../journals/index.js';
import { refuseBackupOnPostgres } from '../../journals/index.js';
import { formatBytes } from '../../log/duration.js';
import { configFor, exitWith } from '../common.js';

export function registerBackupCommand(program: Command): void {
  program
    .command('backup')
    .description(
      'copy the journal and its intents file into DIR, consistently, also while the daemon sends',
    )
    .argument(
      '<dir>',
      'folder to write journal.sqlite and journal.intents.sqlite into (made if missing; must hold no journal copy yet)',
    )
    .action(async (dir: string, _opts: unknown, command: Command) => {
      const config = configFor(command);
      refuseBackupOnPostgres(config);
      const source = journalPath(config.dataDir);
      if (!existsSync(source))
        exitWith(
          EXIT.usage,
          `smsdrop: E_USAGE: backup: no journal in ${config.dataDir}: nothing to copy (check --data-dir)`,
        );
      const target = path.resolve(dir);
      const taken = existsSync(target)
        ? readdirSync(target).filter((n) => n.startsWith('journal.'))
        : [];
      if (taken.length > 0)
        exitWith(
          EXIT.usage,
          `smsdrop: E_USAGE: backup: ${target} already holds ${taken.join(', ')}: give an empty or new folder`,
        );
      mkdirSync(target, { recursive: true });
      const started = Date.now();
      const copy = await backupJournal(source, target);
      const files = [copy.journal, copy.intents].filter((f) => f !== undefined).join(' and ');
      process.stdout.write(
        `copied ${formatBytes(copy.bytes)} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${files} (integrity check ok)\n`,
      );
    });
}
