// `smsdrop suppress add|remove|list`: the numbers never sent to again (journal/suppression.ts).
// The provider's own refusals (blacklisted, unsubscribed) are added by the sender; this adds
// people's own (opt-outs, complaints) and takes numbers off again. It writes only that table, so
// it works while the daemon runs; files read after the change follow it, files already read do not.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { SmsdropError, UsageError } from '../../errors.js';
import type { Config } from '../../config/index.js';
import { normalisePhone } from '../../intake/phone.js';
import { openReader, openSuppressionList } from '../../journals/index.js';
import { renderTable } from '../../report/common.js';
import { configFor, exitWithError } from '../common.js';

const DEFAULT_REASON = 'listed by smsdrop suppress';

export function registerSuppressCommand(program: Command): void {
  const suppress = program
    .command('suppress')
    .description('numbers never sent to again: add, remove, list');
  suppress
    .command('add')
    .description(
      'suppress numbers: rows with them are rejected, with the reason, in every file read from now on',
    )
    .argument(
      '[numbers...]',
      'phone numbers, written as in a CSV (spaces, +86, full-width digits are fine)',
    )
    .option(
      '--file <path>',
      'also the numbers in this file, one per line (the first comma-separated cell; a header line is skipped)',
    )
    .option('--reason <text>', 'why (shown in rejected files and reports)', DEFAULT_REASON)
    .action((numbers: string[], opts: { file?: string; reason: string }, command: Command) =>
      addNumbers(configFor(command, { forReading: true }), numbers, opts),
    );
  suppress
    .command('remove')
    .description('take numbers off the list: files read from now on send to them again')
    .argument('<numbers...>', 'phone numbers')
    .action((numbers: string[], _opts: unknown, command: Command) =>
      removeNumbers(configFor(command, { forReading: true }), numbers),
    );
  suppress
    .command('list')
    .description('the suppressed numbers, with why, who (provider or list) and when')
    .option('--json', 'print a JSON array')
    .action((opts: { json?: boolean }, command: Command) =>
      printList(configFor(command, { forReading: true }), opts.json === true),
    );
}

async function addNumbers(
  config: Config,
  numbers: readonly string[],
  opts: { file?: string; reason: string },
): Promise<void> {
  if (numbers.length === 0 && !opts.file)
    exitWithError(new UsageError('suppress add: no numbers given'));
  const fromFile = opts.file ? readListFile(config, opts.file) : { phones: [], skipped: [] };
  const phones = [...new Set([...normalisedOrExit(config, numbers), ...fromFile.phones])];
  const list = await openSuppressionList(config, { synchronous: config.journalSync });
  try {
    const added = await list.add(phones, opts.reason, 'list');
    process.stdout.write(
      `${added} number(s) suppressed${phones.length > added ? `, ${phones.length - added} already were` : ''}\n`,
    );
  } finally {
    await list.close();
  }
  if (opts.file && fromFile.skipped.length > 0) {
    const examples = fromFile.skipped
      .slice(0, MAX_EXAMPLES)
      .map((line) => `\n  ${opts.file}:${line}`)
      .join('');
    const more = fromFile.skipped.length > MAX_EXAMPLES ? ', for example' : '';
    process.stderr.write(
      `${fromFile.skipped.length} line(s) of ${opts.file} are not phone numbers and were skipped${more}:${examples}\n`,
    );
  }
}

async function removeNumbers(config: Config, numbers: readonly string[]): Promise<void> {
  const phones = [...new Set(normalisedOrExit(config, numbers))];
  const list = await openSuppressionList(config, { synchronous: config.journalSync });
  try {
    const removed = await list.remove(phones);
    process.stdout.write(
      `${removed} number(s) removed${phones.length > removed ? `, ${phones.length - removed} were not suppressed` : ''}\n`,
    );
  } finally {
    await list.close();
  }
}

async function printList(config: Config, json: boolean): Promise<void> {
  const reader = await openReader(config);
  try {
    const list = reader ? await reader.suppressedNumbers() : [];
    if (json) process.stdout.write(`${JSON.stringify(list)}\n`);
    else if (list.length === 0) process.stdout.write('no suppressed numbers\n');
    else
      process.stdout.write(
        `${renderTable(
          ['phone', 'reason', 'source', 'added'],
          list.map((n) => [n.phone, n.reason, n.source, n.addedAt]),
        )}\n`,
      );
  } finally {
    reader?.close();
  }
}

/** Lines of a list file not read as numbers, shown at most. */
const MAX_EXAMPLES = 5;

/** The numbers as intake would store them; exits 2 naming each one that is not a phone number. */
function normalisedOrExit(config: Config, numbers: readonly string[]): string[] {
  const bad: string[] = [];
  const phones = numbers.flatMap((raw) => {
    const result = normalisePhone(raw, config.allowInternational);
    if (result.ok) return [result.phone];
    bad.push(`"${raw}": ${result.reason}`);
    return [];
  });
  if (bad.length > 0)
    exitWithError(
      new UsageError(`suppress: not phone numbers, nothing changed: ${bad.join(', ')}`),
    );
  return phones;
}

/**
 * One number per line, the first cell of each (a first line that is no number is a header).
 * A list exported from elsewhere often holds a few lines that are no number: those are skipped
 * ("LINE: reason"), and the rest is taken.
 */
function readListFile(config: Config, file: string): { phones: string[]; skipped: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    exitWithError(
      new SmsdropError(
        'E_FILE_UNREADABLE',
        `suppress: ${file}: cannot read the file: ${(err as Error).message}`,
      ),
    );
  }
  const phones: string[] = [];
  const skipped: string[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r\n|\n|\r/)
    .forEach((line, i) => {
      const cell = line.split(',')[0]!.trim().replace(/^"|"$/g, '');
      if (cell === '' || (i === 0 && !/\d/.test(cell))) return;
      const result = normalisePhone(cell, config.allowInternational);
      if (result.ok) phones.push(result.phone);
      else skipped.push(`${i + 1}: "${cell}": ${result.reason}`);
    });
  return { phones, skipped };
}
