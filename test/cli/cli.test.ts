// The command line as a user meets it, run as a child process: --version, bare `smsdrop`, usage
// errors in one line with a pointer, and each command's help naming its exit statuses and the
// settings it reads.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pLimit from 'p-limit';
import { SETTINGS } from '../../src/config/index.js';
import { isolatedSettings } from '../emptyConfig.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsxLoader = pathToFileURL(path.join(repo, 'node_modules/tsx/dist/loader.mjs')).href;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// Two CLIs at a time: a test asks for up to 17 helps at once, and each process's 60 s limit
// starts when it starts, so on a loaded two-core machine the last ones would not get their share.
const twoAtATime = pLimit(2);

function smsdrop(args: string[]): Promise<Run> {
  return twoAtATime(() => runCli(args));
}

/** A module hook that writes `LOADED name` to stderr for each command module loaded. */
const commandsSeen = pathToFileURL(path.join(repo, 'test/fixtures/commandsSeen.mjs')).href;

function runCli(args: string[], imports: string[] = []): Promise<Run> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...isolatedSettings() };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        ...imports.flatMap((i) => ['--import', i]),
        '--import',
        tsxLoader,
        path.join(repo, 'src/cli.ts'),
        ...args,
      ],
      { cwd: repo, env, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

const COMMANDS = [
  'simulate',
  'send',
  'report',
  'export',
  'retry',
  'resume',
  'status',
  'run',
  'suppress',
  'backup',
  'prune',
];

describe('the command line', () => {
  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as {
      version: string;
    };
    const [long, short] = await Promise.all([smsdrop(['--version']), smsdrop(['-V'])]);
    for (const r of [long, short]) {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${version}\n`);
    }
  });

  it('loads only the module of the command named, all of them for the help', async () => {
    /** The command modules (cli/commands/NAME) a run with these arguments loads. */
    const loaded = async (args: string[]) => {
      const run = await twoAtATime(() => runCli(args, [commandsSeen]));
      return [...new Set([...run.stderr.matchAll(/^LOADED (\w+)$/gm)].map((m) => m[1]))].sort();
    };
    assert.deepEqual(await loaded(['status', '--help']), ['status']);
    assert.deepEqual(await loaded(['pause', '--help']), ['control']);
    assert.deepEqual(await loaded(['help', 'send']), ['send']);
    // A value that is also a command's name: every module, so the command named is still found.
    assert.equal((await loaded(['report', 'send', '--help'])).length, 14);
    assert.equal((await loaded(['--help'])).length, 14);
  });

  it('bare smsdrop prints the help on stdout and exits 0; so does --help and a bare command group', async () => {
    const [bare, help, group] = await Promise.all([
      smsdrop([]),
      smsdrop(['--help']),
      smsdrop(['suppress']),
    ]);
    for (const r of [bare, help]) {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.match(r.stdout, /^Usage: smsdrop /);
      for (const command of COMMANDS)
        assert.match(r.stdout, new RegExp(`\\n  ${command}\\b`), command);
    }
    assert.equal(bare.stdout, help.stdout);
    assert.equal(group.code, 0);
    assert.match(
      group.stdout,
      /^Usage: smsdrop suppress .*\n[\s\S]*\n {2}add\b[\s\S]*\n {2}list\b/,
    );
  });

  it('an unknown command or option is one line with its code and a pointer to the help, exit 2', async () => {
    const runs = await Promise.all([
      smsdrop(['sned', 'x.csv']),
      smsdrop(['--bogus']),
      smsdrop(['send', '--bogus', 'x.csv']),
      smsdrop(['send']),
      smsdrop(['suppress', 'add', '--bogus']),
    ]);
    const [command, option, subOption, missing, nested] = runs;
    for (const r of runs) {
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 2, r.stderr);
      assert.match(lines[0]!, /^smsdrop: E_USAGE: /);
    }
    assert.match(
      command.stderr,
      /^smsdrop: E_USAGE: unknown command 'sned'.*\nsee smsdrop --help\n$/,
    );
    assert.match(
      option.stderr,
      /^smsdrop: E_USAGE: unknown option '--bogus'\nsee smsdrop --help\n$/,
    );
    assert.match(
      subOption.stderr,
      /^smsdrop: E_USAGE: unknown option '--bogus'\nsee smsdrop send --help\n$/,
    );
    assert.match(missing.stderr, /missing required argument 'file'\nsee smsdrop send --help\n$/);
    assert.match(nested.stderr, /\nsee smsdrop suppress add --help\n$/);
  });

  it("each command's help lists its exit statuses and the settings it reads, in one style", async () => {
    const runs = await Promise.all(COMMANDS.map((c) => smsdrop([c, '--help'])));
    runs.forEach((r, i) => {
      const command = COMMANDS[i]!;
      assert.equal(r.code, 0, `${command}: ${r.stderr}`);
      const exits = /\nExit status:\n((?: {2}\d {2}.*\n(?: {5}.*\n)*)+)/.exec(r.stdout);
      assert.ok(exits, `${command} --help lists its exit statuses:\n${r.stdout}`);
      assert.match(exits[1]!, /^ {2}0 {2}/m, `${command}: exit 0`);
      assert.match(exits[1]!, /^ {2}2 {2}/m, `${command}: exit 2`);
      assert.match(
        r.stdout,
        /\nSettings read .*:\n {2}SMSDROP_/,
        `${command} --help lists its settings`,
      );
      for (const line of r.stdout.split('\n'))
        assert.ok(
          line.length <= 100,
          `${command} --help: a line of ${line.length} characters: ${line}`,
        );
    });
    const settingsOf = (i: number) =>
      new Set(
        /\nSettings read .*:\n([\s\S]*)$/.exec(runs[i]!.stdout)![1]!.match(/SMSDROP_[A-Z_]+/g),
      );
    // The daemon reads every setting; send all but the daemon's own; report just where, who may
    // read what it writes, in which zone, and what a segment costs.
    const daemon = settingsOf(COMMANDS.indexOf('run'));
    for (const s of Object.values(SETTINGS))
      assert.ok(daemon.has(s.env), `run --help names ${s.env}`);
    const send = settingsOf(COMMANDS.indexOf('send'));
    assert.ok(
      send.has('SMSDROP_AUTH_TOKEN') &&
        send.has('SMSDROP_REPEAT_WINDOW') &&
        !send.has('SMSDROP_STABILITY_MS'),
    );
    assert.deepEqual([...settingsOf(COMMANDS.indexOf('report'))].sort(), [
      'SMSDROP_CONFIG',
      'SMSDROP_CURRENCY',
      'SMSDROP_DATA_DIR',
      'SMSDROP_PRICE_PER_SEGMENT',
      'SMSDROP_SHARE_WITH_GROUP',
      'SMSDROP_STRICT_PERMISSIONS',
      'SMSDROP_TEMPLATES_FILE',
      'SMSDROP_TIMEZONE',
    ]);
    assert.match(runs[COMMANDS.indexOf('send')]!.stdout, /^ {2}3 {2}rows ended invalid/m);
  });

  it('descriptions share one style: lower case, no full stop at the end', async () => {
    const texts: string[] = [];
    const runs = await Promise.all([
      smsdrop(['--help']),
      ...COMMANDS.map((c) => smsdrop([c, '--help'])),
      smsdrop(['suppress', 'add', '--help']),
    ]);
    for (const r of runs) {
      // The description is the paragraph after Usage; options' and commands' descriptions follow
      // their names.
      texts.push(r.stdout.split('\n')[2]!);
      // Option and command lines: a name, two spaces or more, the description, wrapped onto lines
      // indented further.
      const listed = r.stdout.split(/\n(?:Exit status|Settings read)/)[0]!.split('\n');
      let current: number | undefined;
      for (const line of listed) {
        const term = /^ {2}\S.*? {2,}(\S.*)$/.exec(line);
        if (term) current = texts.push(term[1]!) - 1;
        else if (current !== undefined && /^ {6,}\S/.test(line))
          texts[current] += ` ${line.trim()}`;
        else current = undefined;
      }
    }
    for (const text of texts) {
      assert.match(
        text,
        /^(?:[a-z"(0-9]|[A-Z0-9]{2,}\b)/,
        `starts in lower case (or with an acronym): ${text}`,
      );
      assert.doesNotMatch(text, /\.$/, `no full stop at the end: ${text}`);
    }
  });
});
