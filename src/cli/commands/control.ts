// `smsdrop approve|pause|cancel FILE` (and the control half of `smsdrop resume`): an operator's
// hold on a file, written in the journal (ports/control.ts) without the data directory's lock, so
// that it works while the daemon runs: the daemon obeys within a second, and no request of the
// file starts once the command has returned.
import type { Command } from 'commander';
import type { Config } from '../../config/index.js';
import { webhookTargets } from '../../config/settings/webhookUrls.js';
import { UsageError } from '../../errors.js';
import { openControl } from '../../journals/index.js';
import { createLogger, logDirOf } from '../../log/logger.js';
import { formatMoment, parseMoment, zoneName } from '../../log/time.js';
import type { ControlCommand, ControlResult, FileRecord } from '../../ports/index.js';
import { requireJournal, resolveFile } from '../../report/common.js';
import { configFor, exitOnUserError } from '../common.js';

export function registerControlCommands(program: Command): void {
  program
    .command('approve')
    .description('send a FILE held for approval (SMSDROP_APPROVAL=on): now, or --at a time')
    .argument('<file>', 'file id, name or sha256 prefix')
    .option(
      '--at <time>',
      'start then, not before: ISO 8601 with its offset, or a local time "YYYY-MM-DD HH:MM" in SMSDROP_TIMEZONE',
    )
    .option('--json', 'print the outcome as one JSON object')
    .action((query: string, flags: { at?: string; json?: boolean }, command: Command) =>
      controlCommand(configFor(command), query, { action: 'approve', by: 'cli' }, flags),
    );
  program
    .command('pause')
    .description(
      'hold a FILE: no new request of it starts once this returns (those in flight finish); smsdrop resume goes on',
    )
    .argument('<file>', 'file id, name or sha256 prefix')
    .option('--json', 'print the outcome as one JSON object')
    .action((query: string, flags: { json?: boolean }, command: Command) =>
      controlCommand(configFor(command), query, { action: 'pause', by: 'cli' }, flags),
    );
  program
    .command('cancel')
    .description(
      'end a FILE for good: its unsent rows end cancelled (a held file is refused); requests in flight finish',
    )
    .argument('<file>', 'file id, name or sha256 prefix')
    .option('--json', 'print the outcome as one JSON object')
    .action((query: string, flags: { json?: boolean }, command: Command) =>
      controlCommand(configFor(command), query, { action: 'cancel', by: 'cli' }, flags),
    );
}

async function controlCommand(
  config: Config,
  query: string,
  command: ControlCommand,
  flags: { at?: string; json?: boolean },
): Promise<void> {
  try {
    const file = await findFile(config, query);
    const at = flags.at === undefined ? {} : { at: startTime(flags.at, config.timezone) };
    const result = await applyCommand(config, file, { ...command, ...at });
    printOutcome(config, result, flags.json === true, command.action);
  } catch (err) {
    exitOnUserError(err);
    throw err;
  }
}

/** The file FILE names in the journal (exits 2 when none or several). */
export async function findFile(config: Config, query: string): Promise<FileRecord> {
  const reader = await requireJournal(config);
  try {
    return await resolveFile(reader, query);
  } finally {
    reader.close();
  }
}

/** Writes the command in the journal, and says so in the log (who asked: the CLI). */
export async function applyCommand(
  config: Config,
  file: FileRecord,
  command: ControlCommand,
): Promise<ControlResult> {
  const store = await openControl(config, {
    synchronous: config.journalSync,
    webhookTargets: webhookTargets(config.webhookUrl).map((t) => t.id),
  });
  let result: ControlResult;
  try {
    result = await store.command(file.id, command);
  } finally {
    await store.close();
  }
  if (result.changed) {
    const log = createLogger({
      level: config.logLevel,
      format: config.logFormat,
      logDir: logDirOf(config.dataDir),
      // the log file keeps the line; the terminal gets the command's own answer (or its JSON)
      stdout: false,
    });
    log.info(`${file.name} (id ${file.id}): ${command.action} by ${command.by}`, {
      event: `file-${command.action}`,
      file: file.name,
      fileId: file.id,
      by: command.by,
      ...(result.startAt ? { startAt: result.startAt } : {}),
    });
  }
  return result;
}

function startTime(text: string, zone: string | undefined): string {
  const at = parseMoment(text, zone);
  if (!at)
    throw new UsageError(
      `--at ${text}: not a time: write ISO 8601 with its offset (2026-12-07T09:00+08:00) or a local time "2026-12-07 09:00" (${zoneName(zone)}, SMSDROP_TIMEZONE)`,
    );
  return at.toISOString();
}

const SAID: Record<ControlCommand['action'], string> = {
  approve: 'approved: it goes',
  pause: 'paused: no new request of it starts; requests in flight finish and are recorded',
  resume: 'resumed: it goes on',
  cancel: 'cancelled: no new request of it starts; its unsent rows end cancelled',
};

function printOutcome(
  config: Config,
  r: ControlResult,
  json: boolean,
  action: ControlCommand['action'],
): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(r)}\n`);
    return;
  }
  const what = `${r.name} (id ${r.fileId})`;
  if (!r.changed) {
    process.stdout.write(`${what}: already ${r.control ?? 'going'}; nothing changed\n`);
    return;
  }
  const when =
    action === 'approve' && r.startAt !== null
      ? `scheduled: it starts at ${formatMoment(r.startAt, config.timezone, 'minutes')} (${zoneName(config.timezone)})`
      : SAID[action];
  const cancelled = action === 'cancel' ? ` (${r.cancelled} row(s) cancelled)` : '';
  process.stdout.write(`${what}: ${when}${cancelled}\n`);
}
