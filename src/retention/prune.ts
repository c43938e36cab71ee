// `smsdrop prune [--older-than DURATION] [--dry-run]`, and the daemon's daily prune: the journal's
// rows of files that ended longer ago than SMSDROP_KEEP (journal/prune.ts), then their files in
// done/ and failed/ (files.ts). Says what went: files, records, bytes.
import type { Command } from 'commander';
import { configFor, EXIT, exitWith } from '../cli/common.js';
import { type Config, keepProblem } from '../config/index.js';
import { acquireLock } from '../journal/lock.js';
import { errorCode } from '../errors.js';
import { journalPath, type Journal, openJournal } from '../journal/open.js';
import { type Keep, parseKeep } from '../config/settings/durations.js';
import { pruneJournal, type PruneResult } from '../journal/prune.js';
import { formatBytes } from '../log/duration.js';
import { openForReading } from '../report/common.js';
import { type RemovedFiles, removeFilesOfPruned } from './files.js';

export interface PruneReport extends PruneResult {
  endedBefore: string;
  dryRun: boolean;
  removed: RemovedFiles;
}

/** Prunes what ended longer than `keep` ago: the journal, then the files on disk. */
export async function prune(
  db: Journal,
  dataDir: string,
  keep: Keep,
  options: { dryRun?: boolean; suppressed?: boolean; signal?: AbortSignal } = {},
): Promise<PruneReport> {
  const cutoff = Date.now() - keep.ms;
  const endedBefore = new Date(cutoff).toISOString();
  const dryRun = options.dryRun === true;
  const result = await pruneJournal(db, {
    endedBefore,
    dryRun,
    suppressed: options.suppressed,
    signal: options.signal,
  });
  const removed = await removeFilesOfPruned(
    db,
    dataDir,
    cutoff,
    dryRun,
    new Set(dryRun ? result.files.map((f) => f.id) : []),
  );
  return { ...result, endedBefore, dryRun, removed };
}

/** One line for the log or the terminal. */
export function describePrune(r: PruneReport): string {
  const did = r.dryRun ? 'would prune' : 'pruned';
  const records = `${r.records.rows} rows, ${r.records.batches} batches, ${r.records.attempts} attempts`;
  const size = r.dryRun
    ? `journal ${formatBytes(r.bytesBefore)}`
    : `journal ${formatBytes(r.bytesBefore)} -> ${formatBytes(r.bytesAfter)}`;
  const files = `${r.dryRun ? 'would remove' : 'removed'} ${r.removed.files.length} file(s) from done/ and failed/ (${formatBytes(r.removed.bytes)})`;
  const suppressed =
    r.suppressed > 0
      ? `; ${r.suppressed} suppressed number(s) ${r.dryRun ? 'would be ' : ''}forgotten`
      : '';
  return `${did} ${r.files.length} file(s) that ended before ${r.endedBefore}: ${records}; ${size}; ${files}${suppressed}`;
}

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

async function dryRun(config: Config, keep: Keep, suppressed: boolean): Promise<PruneReport> {
  const db = openForReading(config.dataDir);
  if (!db) exitWith(EXIT.ok, `no journal in ${config.dataDir}: nothing to prune`);
  try {
    return await prune(db, config.dataDir, keep, { dryRun: true, suppressed });
  } finally {
    db.close();
  }
}

/** Pruning writes: the data directory's lock, as for any writer (the daemon prunes on its own). */
async function pruneLocked(config: Config, keep: Keep, suppressed: boolean): Promise<PruneReport> {
  let lock;
  try {
    lock = acquireLock(config.dataDir, 'smsdrop prune');
  } catch (err) {
    if (errorCode(err) === 'E_DATA_DIR_LOCKED')
      exitWith(
        EXIT.usage,
        `smsdrop: E_DATA_DIR_LOCKED: prune: ${(err as Error).message} (the daemon prunes by itself at start and once a day, by SMSDROP_KEEP)`,
      );
    throw err;
  }
  try {
    const db = openJournal(journalPath(config.dataDir), { synchronous: config.journalSync });
    try {
      return await prune(db, config.dataDir, keep, { suppressed });
    } finally {
      db.close();
    }
  } finally {
    lock.release();
  }
}
