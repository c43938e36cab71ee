// `smsdrop resume FILE [--json]`: sends what a file stopped or paused part-way still has pending,
// from the journal alone. A file read to the end has every row and every batch in the journal, so
// its bytes are not needed: the way to finish it when they are gone or were changed (a list
// stopped, then edited in place and given again as a new file, whose rows the repeat window then
// leaves to this one). Like retry it sends, so it takes the data-directory lock.
import type { Command } from 'commander';
import type { Config } from '../../config/index.js';
import { EXIT, UsageError } from '../../errors.js';
import type { FileRecord, JournalReader } from '../../ports/index.js';
import { FILE_STATUS } from '../../ports/states.js';
import { createLogger, logDirOf } from '../../log/logger.js';
import { everyRowAccepted, waitingNote } from '../../pipeline/index.js';
import { type ResumeResult, resumeFile } from '../../pipeline/resume.js';
import { cancelledCount, optionalLine, requireJournal, resolveFile } from '../../report/common.js';
import { configFor, exitOnUserError, tellPause } from '../common.js';
import { openForegroundRuntime } from '../foreground.js';
import { applyCommand } from './control.js';
import { type ResultFilesNote, rewriteResultFiles } from '../resultFiles.js';
import { elapsedText, type FileTimes, fileTimesOf } from '../times.js';

export function registerResumeCommand(program: Command): void {
  program
    .command('resume')
    .description(
      'send the rows a stopped or paused FILE still has pending, from the journal (its bytes are not needed)',
    )
    .argument('<file>', 'file id, name or sha256 prefix')
    .option('--json', 'print the summary as one JSON object')
    .action(async (query: string, flags: { json?: boolean }, command: Command) => {
      const config = configFor(command);
      const file = await findUnfinished(config, query);
      // A file an operator paused goes on: free to go from now on, whoever sends it.
      const released = await releaseControl(config, file);
      const log = createLogger({
        level: config.logLevel,
        format: config.logFormat,
        logDir: logDirOf(config.dataDir),
        // with --json, stdout is the summary alone
        stdout: !flags.json,
      });
      const runtime = await openForegroundRuntime(
        config,
        `smsdrop resume ${file.name}`,
        log,
        (locked) =>
          released
            ? `smsdrop: ${file.name} (id ${file.id}) resumed: the daemon goes on with it (it holds the data directory)`
            : `smsdrop: ${locked} (the daemon resumes the files in processing/ itself)`,
        released ? EXIT.ok : EXIT.usage,
      );
      const started = Date.now();
      let resumed: ResumeResult;
      let results: ResultFilesNote;
      let times: FileTimes | undefined;
      try {
        // A file planned for another provider: one line and exit 2, once the journal and the lock
        // are let go.
        resumed = await resumeFile(runtime.context, runtime.journal.files, file);
        results = await rewriteResultFiles(runtime, file, config);
        times = fileTimesOf(await runtime.journal.files.file(file.id));
      } finally {
        await runtime.close();
      }
      const { sent, counts, waiting } = resumed;
      const elapsed = { elapsedMs: Date.now() - started, times };
      printSummary(file, resumed, results, elapsed, flags.json ?? false);
      process.exit(
        sent.state === 'paused'
          ? tellPause(sent, log, '')
          : sent.state === 'finished' && everyRowAccepted(counts, waiting)
            ? EXIT.ok
            : EXIT.incomplete,
      );
    });
}

/**
 * The operator's hold on the file lifted (`resume` after `pause`): true when it was paused. A held
 * or cancelled file is refused (E_CONTROL_REFUSED, exit 2): approve it, or it is over.
 */
async function releaseControl(config: Config, file: FileRecord): Promise<boolean> {
  if (file.control === null) return false;
  try {
    return (await applyCommand(config, file, { action: 'resume', by: 'cli' })).changed;
  } catch (err) {
    exitOnUserError(err);
    throw err;
  }
}

/** The file, when it was read to the end and is not done; otherwise exits 2 saying why not. */
async function findUnfinished(config: Config, query: string): Promise<FileRecord> {
  let reader: JournalReader | undefined;
  try {
    reader = await requireJournal(config);
    const file = await resolveFile(reader, query);
    const what = `${file.name} (id ${file.id})`;
    if (file.status === FILE_STATUS.done)
      throw new UsageError(
        `${what} is done: nothing is pending (its failed or unknown rows: smsdrop retry)`,
      );
    if (file.status !== FILE_STATUS.sending) {
      throw new UsageError(
        `${what} was ${file.status === FILE_STATUS.refused ? 'refused' : 'not read to the end'}: its rows are not all in the journal; give the same file again`,
      );
    }
    return file;
  } catch (err) {
    exitOnUserError(err);
    throw err;
  } finally {
    reader?.close();
  }
}

function printSummary(
  file: FileRecord,
  { sent, counts: c, waiting }: ResumeResult,
  results: ResultFilesNote,
  { elapsedMs, times }: { elapsedMs: number; times: FileTimes | undefined },
  json: boolean,
): void {
  const state = sent.state === 'finished' ? 'done' : sent.state;
  if (json) {
    const extra = {
      ...(waiting.length > 0 ? { waitingIn: waiting } : {}),
      ...(sent.state === 'paused' ? { reason: sent.reason, code: sent.code } : {}),
      resultFiles: results.written,
      ...times,
    };
    process.stdout.write(
      `${JSON.stringify({ id: file.id, name: file.name, status: state, ...c, elapsedMs, ...extra })}\n`,
    );
    return;
  }
  process.stdout.write(
    [
      `${file.name} (id ${file.id})  ${state}`,
      `rows ${c.rows}  invalid ${c.invalid}  duplicates ${c.duplicates}  accepted ${c.accepted}  failed ${c.failed}  unknown ${c.unknown}${cancelledCount(c)}  pending ${c.pending}`,
      ...optionalLine('repeats    ', waitingNote(waiting)),
      results.line,
      `requests ${c.requests}  ${elapsedText(elapsedMs, times)}; details: smsdrop report ${file.id}`,
    ].join('\n') + '\n',
  );
}
