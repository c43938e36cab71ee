// `smsdrop send FILE [--dry-run] [--resend] [--json]`: one file through the pipeline, in the
// foreground, with a summary at the end and an exit status a script can act on.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { stemOf } from '../../datadir/names.js';
import { EXIT, SmsdropError } from '../../errors.js';
import { inspectFile } from '../../intake/inspect.js';
import type { Config } from '../../config/index.js';
import { createLogger, logDirOf, type Logger } from '../../log/logger.js';
import { formatDuration } from '../../log/duration.js';
import { redactSecrets } from '../../log/redact.js';
import { SendWindow } from '../../send/window.js';
import {
  everyRowAccepted,
  type FileRunResult,
  processFile,
  repeatsNote,
} from '../../pipeline/index.js';
import { previewLines } from '../../pipeline/messages.js';
import { costLine } from '../../report/cost.js';
import type { Runtime } from '../../pipeline/runtime.js';
import { unevenValuesLines } from '../../pipeline/valueCounts.js';
import { writeRejectedCsv } from '../../results/rejectedCsv.js';
import { writeResultCsv } from '../../results/resultCsv.js';
import { cancelledCount } from '../../report/common.js';
import { configFor, exitWithError, tellPause } from '../common.js';
import { dryRun, type DryRunResult, type InvalidRow, unevenOf } from '../dryRun.js';
import { openForegroundRuntime } from '../foreground.js';
import { startSendProgress } from '../progress.js';
import { nodesCarryingOn } from '../../pipeline/otherNodes.js';
import { elapsedText, fileTimesOf } from '../times.js';

/** Typical time of one request, for the dry run's estimate only. */
const ESTIMATED_REQUEST_MS = 200;

export function registerSendCommand(program: Command): void {
  program
    .command('send')
    .description('read, check and journal FILE, plan the requests and send them; prints a summary')
    .argument('<file>', 'CSV file')
    .option('--dry-run', 'do everything up to the network and print the plan; send nothing')
    .option('--resend', 'send again a file whose bytes were already sent')
    .option('--json', 'print the summary as one JSON object')
    .action(
      async (
        file: string,
        opts: { dryRun?: boolean; resend?: boolean; json?: boolean },
        command: Command,
      ) => {
        const config = configFor(command);
        if (!existsSync(file) || !statSync(file).isFile())
          exitWithError(
            new SmsdropError(
              'E_NOT_A_FILE',
              `${file}: ${existsSync(file) ? 'a directory, not a file' : 'no such file'}`,
            ),
          );
        const log = createLogger({
          level: config.logLevel,
          format: config.logFormat,
          // The summary of --json is stdout's alone.
          stdout: !opts.json,
          ...(opts.dryRun ? {} : { logDir: logDirOf(config.dataDir) }),
        });
        const result: DryRunResult = opts.dryRun
          ? await dryRun(config, file, log)
          : await sendForeground(config, file, opts, log);
        printSummary(result, file, opts, config);
        // A refusal is an error like the others: one line with its code on stderr (exit 2), besides
        // the summary.
        if (result.outcome === 'refused')
          process.stderr.write(
            `${redactSecrets(`smsdrop: ${result.code ? `${result.code}: ` : ''}${result.reason ?? 'refused'}`)}\n`,
          );
        if (result.invalidRows && !opts.json)
          printInvalidRows(result.invalidRows, result.counts.invalid);
        const paused = result.outcome === 'paused' && result.code && result.reason;
        process.exit(
          paused
            ? tellPause({ reason: result.reason!, code: result.code! }, log, ' to finish the file')
            : exitStatus(result),
        );
      },
    );
}

async function sendForeground(
  config: Config,
  file: string,
  opts: { resend?: boolean },
  log: Logger,
): Promise<DryRunResult> {
  const runtime = await openForegroundRuntime(
    config,
    `smsdrop send ${path.basename(file)}`,
    log,
    (locked) => `smsdrop: ${locked}`,
  );
  // Inspected here, so that the progress bar knows the file's size and journal identity.
  // unreadable: processFile refuses it
  const inspection = await inspectFile(file, config.encoding).catch(() => undefined);
  const progress =
    inspection &&
    startSendProgress(
      runtime.context,
      runtime.journal.files,
      file,
      inspection.sha256,
      inspection.size,
    );
  const out = resultFilesOf(file);
  // Written as soon as the file is read, while its requests go: its invalid rows are final then,
  // and whoever fixes them need not wait for the sending (nor the run's end for this file).
  let rejectedEarly: Promise<unknown> | undefined;
  const onIntakeEnd = (fileId: number) => {
    rejectedEarly = writeRejectedCsv(runtime.journal.reads, fileId, out.dir, out.base);
    rejectedEarly.catch(() => {}); // awaited below, where its error is the run's
  };
  try {
    const result = await processFile(runtime.context, file, {
      resend: opts.resend ?? false,
      ...(inspection ? { inspection } : {}),
      onIntakeEnd,
    });
    progress?.stop();
    // Already sent: the earlier send's results, written again beside the file given; unless its
    // rows were pruned (the result files would be empty, over the ones written then).
    if (result.file && !rowsPruned(result) && (await hasResults(runtime, result)))
      await writeResults(runtime, result, out, rejectedEarly);
    return {
      ...result,
      ...(await unevenOf(runtime.journal.reads, result)),
      ...(await carriedOn(runtime, result)),
    };
  } finally {
    progress?.stop();
    await runtime.close();
  }
}

/**
 * A send stopped by a signal on a shared PostgreSQL journal: the daemons of the other nodes send
 * rest of its batches (pipeline/otherNodes.ts), which the summary says.
 */
async function carriedOn(
  runtime: Runtime,
  result: FileRunResult,
): Promise<{ carriedOnBy?: string[] }> {
  if (result.outcome !== 'stopped') return {};
  const nodes = await nodesCarryingOn(runtime.context, result.file?.status);
  return nodes.length > 0 ? { carriedOnBy: nodes } : {};
}

/**
 * A file refused with no request made has no results: a header-only result file would read as a
 * list sent to nobody. Refused after requests went, its result file says who got them (as the
 * daemon's in failed/).
 */
async function hasResults({ journal }: Runtime, result: FileRunResult): Promise<boolean> {
  if (result.outcome !== 'refused') return true;
  return (await journal.files.requestsMade(result.file!.id)) > 0;
}

function rowsPruned(result: FileRunResult): boolean {
  return result.outcome === 'already-sent' && result.file?.pruned_at != null;
}

/** Where the result files of `file` go: beside it, named after it. */
function resultFilesOf(file: string): { dir: string; base: string } {
  return {
    dir: path.dirname(path.resolve(file)),
    base: stemOf(path.basename(file)),
  };
}

/** The result file, and the rejected one unless it was written when the file was read. */
async function writeResults(
  { journal, spools }: Runtime,
  result: FileRunResult,
  out: { dir: string; base: string },
  rejectedEarly: Promise<unknown> | undefined,
): Promise<void> {
  await writeResultCsv(journal.reads, result.file!.id, out.dir, out.base, spools);
  await (rejectedEarly ?? writeRejectedCsv(journal.reads, result.file!.id, out.dir, out.base));
}

const STATUS_OF: Record<FileRunResult['outcome'], string> = {
  finished: 'done',
  'already-sent': 'already-sent',
  paused: 'paused',
  held: 'held',
  stopped: 'stopped',
  refused: 'refused',
  planned: 'dry-run',
  elsewhere: 'elsewhere',
};

export function exitStatus(result: FileRunResult): number {
  if (result.outcome === 'refused') return EXIT.usage;
  if (result.outcome === 'planned') return EXIT.ok;
  if (['paused', 'held', 'stopped', 'elsewhere'].includes(result.outcome)) return EXIT.incomplete;
  return everyRowAccepted(result.counts, result.waiting) ? EXIT.ok : EXIT.incomplete;
}

/** The first invalid rows of a dry run, with their line numbers and reasons. */
function printInvalidRows(rows: InvalidRow[], total: number): void {
  if (rows.length === 0) return;
  const more =
    total > rows.length
      ? ` (the first ${rows.length} of ${total}; a real run writes them all to NAME.rejected.csv)`
      : '';
  process.stdout.write(
    `invalid rows${more}:\n${rows.map((r) => `  line ${r.line}: ${r.reason}`).join('\n')}\n`,
  );
}

function printSummary(
  result: DryRunResult,
  file: string,
  opts: { json?: boolean },
  config: Config,
): void {
  const name = result.file?.name ?? path.basename(file);
  process.stdout.write(
    opts.json
      ? `${JSON.stringify(summaryJson(result, name, config))}\n`
      : `${summaryLines(result, name, config).join('\n')}\n`,
  );
}

/** The summary as `--json` prints it. */
function summaryJson(result: DryRunResult, name: string, config: Config): object {
  const c = result.counts;
  return {
    name,
    sha256: result.sha256 ?? null,
    status: STATUS_OF[result.outcome],
    rows: c.rows,
    invalid: c.invalid,
    duplicates: c.duplicates,
    repeats: c.repeats,
    ...(result.waiting ? { waitingIn: result.waiting } : {}),
    accepted: c.accepted,
    failed: c.failed,
    unknown: c.unknown,
    pending: c.pending,
    requests: result.plan ? result.plan.requests : c.requests,
    elapsedMs: result.elapsedMs,
    ...(result.plan ? {} : fileTimesOf(result.file)),
    ...(result.reason ? { reason: result.reason } : {}),
    ...(result.code ? { code: result.code } : {}),
    ...(result.held ? { held: result.held } : {}),
    ...(result.carriedOnBy ? { carriedOnBy: result.carriedOnBy } : {}),
    ...(result.plan
      ? {
          plan: {
            ...result.plan,
            estimatedSeconds: estimateSeconds(result.plan, config),
            ...windowOf(config),
            ...(result.messages ? { messages: result.messages } : {}),
            ...(result.cost ? { cost: result.cost } : {}),
          },
        }
      : {}),
    ...(result.invalidRows ? { invalidRows: result.invalidRows } : {}),
    ...(result.unevenValues ? { unevenValues: result.unevenValues } : {}),
  };
}

/** The summary for a person: status, counts, then the plan (a dry run) or the requests made. */
function summaryLines(result: DryRunResult, name: string, config: Config): string[] {
  const c = result.counts;
  const lines = [`${name}  ${STATUS_OF[result.outcome]}${alreadySentNote(result)}`];
  if (result.sha256) lines.push(`sha256     ${result.sha256}`);
  if (result.reason)
    lines.push(`reason     ${result.code ? `${result.code}: ` : ''}${result.reason}`);
  if (result.held)
    lines.push(
      `${result.held.waitingFor} by an operator: nothing more is sent until \`smsdrop resume ${result.file?.id ?? name}\` (or \`smsdrop cancel\` ends it)`,
    );
  if (result.carriedOnBy)
    lines.push(
      `stopped here: the daemons of the other nodes (${result.carriedOnBy.join(', ')}) send its ${c.pending} rows not sent yet; \`smsdrop send\` of the same file again gives its results once they are sent (smsdrop status shows how far it is)`,
    );
  lines.push(
    `rows ${c.rows}  invalid ${c.invalid}  duplicates ${c.duplicates}  accepted ${c.accepted}  failed ${c.failed}  unknown ${c.unknown}${cancelledCount(c)}  pending ${c.pending}`,
  );
  const repeats = repeatsNote(c, config.repeatWindow, result.waiting);
  if (repeats) lines.push(`repeats    ${repeats}`);
  if (result.plan) {
    const p = result.plan;
    lines.push(
      `plan: ${p.groups} groups, ${p.requests} requests, ${p.numbers} numbers; about ${formatDuration(estimateSeconds(p, config))} at concurrency ${config.concurrency}${rateNote(config)}. Nothing was sent.`,
    );
    const { sendWindow } = windowOf(config);
    if (sendWindow) lines.push(windowLine(sendWindow));
    if (result.messages) lines.push(...previewLines(result.messages));
    if (result.cost) lines.push(costLine(result.cost, `the ${p.numbers} number(s) of the plan`));
  } else {
    lines.push(
      `requests ${c.requests}  ${elapsedText(result.elapsedMs, fileTimesOf(result.file))}`,
    );
  }
  if (result.unevenValues) lines.push(...unevenValuesLines(result.unevenValues));
  return lines;
}

/** After the status of a file already sent: nothing went, and whose counts these are. */
function alreadySentNote(result: DryRunResult): string {
  if (result.outcome !== 'already-sent') return '';
  const whose = rowsPruned(result)
    ? "The counts are the earlier send's; its rows were pruned, so no result files were written"
    : "The counts and the result files beside it are the earlier send's";
  return ` (nothing sent again; use --resend to send it again). ${whose}`;
}

/**
 * The sending window, for the plan: requests start only inside it, so the estimate may span days.
 */
function windowOf(config: Config): { sendWindow?: { window: string; opensInSeconds: number } } {
  if (config.sendWindow === undefined) return {};
  const window = new SendWindow(config.sendWindow, config.sendWindowZone);
  return {
    sendWindow: { window: window.text, opensInSeconds: Math.ceil(window.opensInMs() / 1000) },
  };
}

function windowLine({
  window,
  opensInSeconds,
}: {
  window: string;
  opensInSeconds: number;
}): string {
  const now =
    opensInSeconds === 0 ? 'open now' : `closed now, opens in ${formatDuration(opensInSeconds)}`;
  return `sending window ${window}: ${now}. Requests start only inside it, so sending may take longer than the estimate.`;
}

/**
 * The slowest of: the concurrency, and each rate limit (a message window from empty, as if no
 * request were recent).
 */
function estimateSeconds(plan: { requests: number; numbers: number }, config: Config): number {
  const byConcurrency = (plan.requests * ESTIMATED_REQUEST_MS) / config.concurrency / 1000;
  const byRequests = config.requestsPerSecond > 0 ? plan.requests / config.requestsPerSecond : 0;
  const byMessages = config.messagesPerSecond > 0 ? plan.numbers / config.messagesPerSecond : 0;
  const window = config.messageWindow;
  // Requests are never cut to fit a window: whole requests of the plan's mean size, per span.
  const requestsPerSpan =
    window && plan.requests > 0
      ? Math.max(1, Math.floor(window.messages / (plan.numbers / plan.requests)))
      : 1;
  const byWindow = window
    ? ((Math.ceil(plan.requests / requestsPerSpan) - 1) * window.ms) / 1000
    : 0;
  return Math.ceil(Math.max(byConcurrency, byRequests, byMessages, byWindow));
}

/** The rate limits the estimate kept, said next to it. */
function rateNote(config: Config): string {
  const limits = [
    config.requestsPerSecond > 0 ? `${config.requestsPerSecond} requests/s` : '',
    config.messagesPerSecond > 0 ? `${config.messagesPerSecond} numbers/s` : '',
    config.messageWindow ? `message window ${config.messageWindow.text}` : '',
  ].filter(Boolean);
  return limits.length > 0 ? `, ${limits.join(', ')}` : '';
}
