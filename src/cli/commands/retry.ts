// `smsdrop retry FILE --failed | --unknown [--yes] [--json]`: an explicit resend of those rows
// only (pipeline/retry.ts). It writes the journal and sends, so it takes the data-directory lock:
// with the daemon running it refuses. A file still in progress (paused, stopped) is finished along
// the way.
//
// Unknown rows may already have arrived. Those the provider would still recognise by their reqId
// are sent again under it, and a repeat is refused. For the others only a fresh reqId is left,
// which cannot stop the provider from sending them again, so resending those is confirmed first
// (y/N on a terminal; without one, only --yes); unconfirmed, they stay unknown.
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { Config } from '../../config/index.js';
import { EXIT, UsageError } from '../../errors.js';
import type { FileRecord, RetryStatus, WaitingFile } from '../../ports/index.js';
import { openReader } from '../../journals/index.js';
import { FILE_STATUS } from '../../ports/states.js';
import { createLogger, logDirOf, type Logger } from '../../log/logger.js';
import { providerChange, waitingNote } from '../../pipeline/index.js';
import { heldRepeats, ownReqIdRule, type RetryResult, retryRows } from '../../pipeline/retry.js';
import { cancelledCount, optionalLine, resolveFile } from '../../report/common.js';
import { configFor, exitOnUserError, exitWithError, tellPause } from '../common.js';
import { openForegroundRuntime } from '../foreground.js';
import { type ResultFilesNote, rewriteResultFiles } from '../resultFiles.js';
import { elapsedText, type FileTimes, fileTimesOf } from '../times.js';

interface RetryFlags {
  failed?: boolean;
  unknown?: boolean;
  cancelled?: boolean;
  yes?: boolean;
  json?: boolean;
}

export function registerRetryCommand(program: Command): void {
  program
    .command('retry')
    .description(
      'resend the failed, unknown and/or cancelled rows of FILE (the earlier attempts stay in the journal)',
    )
    .argument('<file>', 'file id, name or sha256 prefix')
    .option('--failed', 'resend the rows that failed (they were not sent)')
    .option(
      '--unknown',
      'resend the rows whose outcome is unknown: under their own reqId while the provider remembers it (it refuses a repeat), otherwise as new requests, after asking (they may already have arrived)',
    )
    .option(
      '--cancelled',
      'send the rows smsdrop cancel left cancelled (never requested); a plain retry leaves them alone',
    )
    .option('--yes', 'resend unknown rows without asking')
    .option('--json', 'print the summary as one JSON object')
    .action(async (file: string, flags: RetryFlags, command: Command) => {
      const config = configFor(command);
      const statuses: RetryStatus[] = [
        ...(flags.failed ? ['failed' as const] : []),
        ...(flags.unknown ? ['unknown' as const] : []),
        ...(flags.cancelled ? ['cancelled' as const] : []),
      ];
      if (statuses.length === 0)
        exitWithError(
          new UsageError(
            'retry: say which rows to resend: --failed, --unknown or both (--cancelled: those smsdrop cancel left)',
          ),
        );
      const target = await findTarget(config, file, statuses);
      if (target.rows === 0) {
        process.stdout.write(
          `${target.file.name} (id ${target.file.id}) has no ${statuses.join(' or ')} rows: nothing to resend\n`,
        );
        process.exit(EXIT.ok);
      }
      const newReqIds = statuses.includes('unknown')
        ? await confirmUnknown(target.file, target.unknown, flags.yes ?? false)
        : false;
      const log = createLogger({
        level: config.logLevel,
        format: config.logFormat,
        // The summary of --json is stdout's alone.
        stdout: !flags.json,
        logDir: logDirOf(config.dataDir),
      });
      const code = await runRetry(config, target.file, statuses, { ...flags, newReqIds }, log);
      process.exit(code);
    });
}

interface Target {
  file: FileRecord;
  rows: number;
  /** Unknown rows that would go under their own reqId, and under new ones. */
  unknown: { ownReqId: number; newReqId: number };
}

/**
 * Checks the arguments against the journal (read-only, before the lock): exits 2 when they are
 * wrong.
 */
async function findTarget(
  config: Config,
  query: string,
  statuses: readonly RetryStatus[],
): Promise<Target> {
  const reads = await openReader(config);
  try {
    if (!reads)
      throw new UsageError(
        `no journal in ${config.dataDir}: nothing has been sent from this data directory (check --data-dir)`,
      );
    const file = await resolveFile(reads, query);
    if (file.status === FILE_STATUS.intake || file.status === FILE_STATUS.refused) {
      const what = `${file.name} (id ${file.id}) was ${file.status === FILE_STATUS.refused ? 'refused' : 'not fully read'}`;
      const sent = (await reads.requestTiming(file.id)).requests;
      // Requests may have gone out while it was read: the same bytes continue it; a fixed copy
      // would be a new file.
      if (sent > 0)
        throw new UsageError(
          `${what}, after ${sent} request(s) went out while it was read: give the same file again (send or the inbox) to send the rest`,
        );
      throw new UsageError(`${what}: nothing of it was sent; fix the file and drop it again`);
    }
    const unknown = statuses.includes('unknown')
      ? await reads.retry.countUnknownByReqId(file.id, config.maxPerRequest, ownReqIdRule(config))
      : { ownReqId: 0, newReqId: 0 };
    return { file, rows: await reads.retry.countRetryable(file.id, statuses), unknown };
  } catch (err) {
    exitOnUserError(err);
    throw err;
  } finally {
    reads?.close();
  }
}

/**
 * Whether unknown rows that cannot keep their reqId may go under new ones: asked, or --yes. Exits 2
 * on no.
 */
async function confirmUnknown(
  file: FileRecord,
  unknown: Target['unknown'],
  yes: boolean,
): Promise<boolean> {
  if (unknown.newReqId === 0 || yes) return yes;
  const safe =
    unknown.ownReqId > 0
      ? ` (${unknown.ownReqId} other unknown rows go again under their own reqId today, which the provider refuses to send twice)`
      : '';
  const warning =
    `${unknown.newReqId} rows of ${file.name} (id ${file.id}) have an unknown outcome: their request may have reached the provider, ` +
    'so those messages may already have arrived. Resending uses new requests with new reqIds, which the provider cannot recognise as repeats: ' +
    `a message that did arrive would arrive twice${safe}.`;
  if (!process.stdin.isTTY)
    exitWithError(new UsageError(`retry: ${warning} Not resent: add --yes to resend them anyway.`));
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`${warning}\nResend them anyway? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) exitWithError(new UsageError('retry: not resent'));
  } finally {
    prompt.close();
  }
  return true;
}

async function runRetry(
  config: Config,
  file: FileRecord,
  statuses: readonly RetryStatus[],
  flags: RetryFlags & { newReqIds: boolean },
  log: Logger,
): Promise<number> {
  const runtime = await openForegroundRuntime(
    config,
    `smsdrop retry ${file.name}`,
    log,
    (locked) => `smsdrop: ${locked} (retry sends, so it cannot run beside the daemon)`,
  );
  try {
    const changed = providerChange(file, runtime.context.provider);
    if (changed) throw changed; // one line and exit 2, once the journal and the lock are let go
    const result = await retryRows(
      runtime.context,
      runtime.journal,
      file.id,
      statuses,
      flags.newReqIds,
    );
    // The file's repeats (this retry's, and intake's) another file holds but has not sent: the
    // file is not done: exit 3, as send and resume do.
    const waiting = await heldRepeats(runtime.journal.files, file.id, result.counts);
    const results = await rewriteResultFiles(runtime, file, config);
    const times = fileTimesOf(await runtime.journal.files.file(file.id));
    printRetrySummary(file, statuses, { ...result, results, times }, waiting, flags.json ?? false);
    if (result.sent?.state === 'paused') return tellPause(result.sent, log, '');
    const o = result.outcome;
    // Nothing sent (every row asked for was a repeat of another file's): finished as well.
    const finished = result.sent === undefined || result.sent.state === 'finished';
    return finished && o.failed + o.unknown + o.pending === 0 && waiting.length === 0
      ? EXIT.ok
      : EXIT.incomplete;
  } finally {
    await runtime.close();
  }
}

function printRetrySummary(
  file: FileRecord,
  statuses: readonly RetryStatus[],
  r: RetryResult & { results: ResultFilesNote; times: FileTimes | undefined },
  waiting: WaitingFile[],
  json: boolean,
): void {
  const state = r.sent?.state ?? 'nothing to resend';
  if (json) {
    const waitingIn = waiting.length > 0 ? { waitingIn: waiting } : {};
    const paused = r.sent?.state === 'paused' ? { reason: r.sent.reason, code: r.sent.code } : {};
    process.stdout.write(
      `${JSON.stringify({ id: file.id, name: file.name, statuses, state, retried: r.outcome, repeats: r.retry.repeats, ...waitingIn, ...paused, file: r.counts, elapsedMs: r.elapsedMs, ...r.times, resultFiles: r.results.written })}\n`,
    );
    return;
  }
  const o = r.outcome;
  const c = r.counts;
  process.stdout.write(
    [
      `${file.name} (id ${file.id}): ${r.retry.rows} ${statuses.join(' and ')} rows resent, ${state}`,
      `resent rows  accepted ${o.accepted}  failed ${o.failed}  unknown ${o.unknown}  pending ${o.pending}`,
      ...(r.retry.repeats > 0
        ? [
            `repeats      ${r.retry.repeats} row(s) not resent: another file sent the same message to their number since, or holds it to send (the result file names it)`,
          ]
        : []),
      ...optionalLine('waiting      ', waitingNote(waiting)),
      `whole file   rows ${c.rows}  invalid ${c.invalid}  duplicates ${c.duplicates}  accepted ${c.accepted}  failed ${c.failed}  unknown ${c.unknown}${cancelledCount(c)}  pending ${c.pending}`,
      r.results.line.replace(/^results {4}/, 'results      '),
      `${elapsedText(r.elapsedMs, r.times)}; details: smsdrop report ${file.id}`,
    ].join('\n') + '\n',
  );
}
