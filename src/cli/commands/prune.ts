// `smsdrop prune [--older-than DURATION] [--dry-run] [--suppressed] [--json]`: prunes now what
// ended longer ago than SMSDROP_KEEP or --older-than (retention/prune.ts), and says what went.
import type { Command } from 'commander';
import { type Config, keepProblem } from '../../config/index.js';
import { type Keep, parseKeep } from '../../config/settings/durations.js';
import { errorCode, EXIT } from '../../errors.js';
import type { JournalHandle } from '../../ports/index.js';
import { openReader, openWriter } from '../../journals/index.js';
import { describePrune, prune, type PruneReport } from '../../retention/prune.js';
import { configFor, exitWith } from '../common.js';

export function registerPruneCommand(program: Command): void {
  program
    .command('prune')
    .description(
      'remove now the numbers, values and files of files that ended longer ago than SMSDROP_KEEP (the daemon does it at start and daily)',
    )
    .option(
      '--older-than <duration>',
      'files that ended longer ago than this (90d, 12h, 30m), instead of SMSDROP_KEEP',
    )
    .option('--dry-run', 'say what would go, remove nothing')
    .option(
      '--suppressed',
      'also forget suppressed numbers added before then (kept otherwise: they are a do-not-contact list)',
    )
    .option('--json', 'print one JSON object')
    .action(
      async (
        opts: { olderThan?: string; dryRun?: boolean; suppressed?: boolean; json?: boolean },
        command: Command,
      ) => {
        const config = configFor(command);
        const keep = keepFor(config, opts.olderThan);
        if (keep.ms === 0)
          exitWith(
            EXIT.ok,
            'SMSDROP_KEEP is off: nothing pruned (give --older-than DURATION to prune by hand)',
          );
        const report = opts.dryRun
          ? await dryRun(config, keep, opts.suppressed === true)
          : await pruneLocked(config, keep, opts.suppressed === true);
        process.stdout.write(
          opts.json ? `${JSON.stringify(report)}\n` : `${describePrune(report)}\n`,
        );
      },
    );
}

function keepFor(config: Config, olderThan: string | undefined): Keep {
  if (olderThan === undefined) return config.keep;
  const keep = parseKeep(olderThan);
  if (typeof keep === 'string')
    exitWith(EXIT.usage, `smsdrop: E_USAGE: prune: --older-than "${olderThan}": ${keep}`);
  const problem = keepProblem(config, keep, '--older-than');
  if (problem) exitWith(EXIT.usage, `smsdrop: E_CONFIG_KEEP: prune: ${problem}`);
  return keep;
}

/** Under the data directory's lock (or read-only), no file is being processed by this process. */
const NONE_BUSY: ReadonlySet<number> = new Set();

async function dryRun(config: Config, keep: Keep, suppressed: boolean): Promise<PruneReport> {
  const reader = await openReader(config);
  if (!reader) exitWith(EXIT.ok, `no journal in ${config.dataDir}: nothing to prune`);
  try {
    return await prune({ maintenance: reader, reads: reader }, config.dataDir, keep, {
      dryRun: true,
      suppressed,
      busy: NONE_BUSY,
    });
  } finally {
    reader.close();
  }
}

/** Pruning writes: the data directory's lock, as for any writer (the daemon prunes on its own). */
async function pruneLocked(config: Config, keep: Keep, suppressed: boolean): Promise<PruneReport> {
  let journal: JournalHandle;
  try {
    ({ handle: journal } = await openWriter(config, {
      role: 'smsdrop prune',
      synchronous: config.journalSync,
      reqIdOn: false,
      onLost: () => {}, // sends nothing, so keeps no intents: never called
    }));
  } catch (err) {
    if (errorCode(err) === 'E_DATA_DIR_LOCKED')
      exitWith(
        EXIT.usage,
        `smsdrop: E_DATA_DIR_LOCKED: prune: ${(err as Error).message} (the daemon prunes by itself at start and once a day, by SMSDROP_KEEP)`,
      );
    throw err;
  }
  try {
    return await prune(journal, config.dataDir, keep, { suppressed, busy: NONE_BUSY });
  } finally {
    await journal.close();
  }
}
