// What each command's --help says besides its options: the exit statuses a script or pm2 can act
// on, and the settings the command reads. Kept in one table so every command's help has the same
// shape, and so a command added without an entry fails the CLI test rather than shipping bare.
import type { Command } from 'commander';
import { SETTINGS } from '../config/index.js';
import { SmsdropError } from '../errors.js';

interface CommandHelp {
  exits: Array<[code: number, meaning: string]>;
  /** Environment names; `sending` expands to every setting a sending command reads. */
  settings: Array<string>;
}

const UNEXPECTED: [number, string] = [1, 'anything unexpected (a bug: the message says what)'];
const USAGE = 'bad arguments or settings';

/** Settings that only the daemon reads (their documentation starts with "Daemon:"). */
const DAEMON_ONLY = new Set(
  Object.values(SETTINGS)
    .filter((s) => s.doc.startsWith('Daemon:'))
    .map((s) => s.env),
);
const ALL = Object.values(SETTINGS).map((s) => s.env);
/** What `send`, `retry` and `resume` read: every setting but the daemon's own. */
const SENDING = ALL.filter((env) => !DAEMON_ONLY.has(env));
/** Who may read what a command writes, and whether an open data directory stops it. */
const ACCESS = ['SMSDROP_SHARE_WITH_GROUP', 'SMSDROP_STRICT_PERMISSIONS'];
const READING = ['SMSDROP_DATA_DIR', ...ACCESS, 'SMSDROP_TIMEZONE'];

/** approve, pause, cancel: one write in the journal, with or without the daemon running. */
function controlHelp(done: string): CommandHelp {
  return {
    exits: [
      [0, done],
      [
        2,
        `${USAGE}, no such FILE, or a command its state refuses (E_CONTROL_REFUSED: an ended file, a held one paused)`,
      ],
      UNEXPECTED,
    ],
    settings: [...READING, 'SMSDROP_DATABASE_URL', 'SMSDROP_WEBHOOK_URL', 'SMSDROP_CONFIG'],
  };
}

export const COMMAND_HELP: Record<string, CommandHelp> = {
  approve: controlHelp('the file is approved (or given its new start time)'),
  pause: controlHelp('the file is paused (or already was): no new request of it starts'),
  cancel: controlHelp('the file is cancelled (or already was): its unsent rows end cancelled'),
  send: {
    exits: [
      [
        0,
        'every row accepted (or a duplicate of an accepted row); with --dry-run, the plan was made',
      ],
      [
        3,
        'rows ended invalid, failed, unknown or pending, sending paused for an outage (E_PROVIDER_FAILING) or was stopped, or repeats wait in another file',
      ],
      [
        2,
        `${USAGE}, a file refused as a whole (unreadable, no phone column), the data directory in use by another smsdrop, or sending stopped by what only the operator can fix (a token, account, app or certificate refused, no provider reached: E_PROVIDER_*)`,
      ],
      UNEXPECTED,
    ],
    settings: [...SENDING, 'SMSDROP_CONFIG'],
  },
  drain: {
    exits: [
      [0, 'the daemon drained and exited'],
      [2, `${USAGE}, or no daemon runs on the data directory`],
      UNEXPECTED,
    ],
    settings: ['SMSDROP_DATA_DIR'],
  },
  run: {
    exits: [
      [0, 'stopped by SIGTERM, Ctrl-C or `smsdrop drain` after requests in flight finished'],
      [
        3,
        'stopped with requests still in doubt (grace period over, or the journal failed): the next start settles them',
      ],
      [
        2,
        `${USAGE}, the data directory in use by another smsdrop, SMSDROP_HTTP in use or not loopback without SMSDROP_HTTP_TOKEN (pm2 does not restart on 2)`,
      ],
      UNEXPECTED,
    ],
    settings: [...ALL, 'SMSDROP_CONFIG'],
  },
  report: {
    exits: [[0, 'printed'], [2, `${USAGE}, or no such FILE in the journal`], UNEXPECTED],
    settings: [
      ...READING,
      'SMSDROP_TEMPLATES_FILE',
      'SMSDROP_PRICE_PER_SEGMENT',
      'SMSDROP_CURRENCY',
      'SMSDROP_CONFIG',
    ],
  },
  export: {
    exits: [
      [0, 'written'],
      [2, `${USAGE}, no such FILE in the journal, or its rows were pruned (E_ROWS_PRUNED)`],
      UNEXPECTED,
    ],
    settings: [...READING, 'SMSDROP_CONFIG'],
  },
  status: {
    exits: [[0, 'printed'], [2, USAGE], UNEXPECTED],
    settings: [...READING, 'SMSDROP_CONFIG'],
  },
  retry: {
    exits: [
      [0, 'every resent row accepted, and none waits in another file'],
      [3, 'some resent rows not accepted, or waiting in another file'],
      [
        2,
        `${USAGE}, no such FILE, unknown rows not confirmed, the data directory in use (stop the daemon first), or sending stopped by a set-up mistake (E_PROVIDER_*)`,
      ],
      UNEXPECTED,
    ],
    settings: [...SENDING, 'SMSDROP_CONFIG'],
  },
  resume: {
    exits: [
      [0, 'the file ended done with every row accepted'],
      [3, 'rows not accepted, still pending, or waiting in another file'],
      [
        0,
        'a paused FILE resumed while the daemon holds the data directory: the daemon goes on with it',
      ],
      [
        2,
        `${USAGE}, no such FILE, nothing to resume, a held or cancelled FILE (E_CONTROL_REFUSED), the data directory in use (stop the daemon first), or sending stopped by a set-up mistake (E_PROVIDER_*)`,
      ],
      UNEXPECTED,
    ],
    settings: [...SENDING, 'SMSDROP_CONFIG'],
  },
  simulate: {
    exits: [
      [0, 'stopped by SIGTERM or Ctrl-C'],
      [2, 'bad arguments'],
      [1, 'could not start (the port is taken, say), or anything unexpected'],
    ],
    settings: [
      'SMSDROP_ACCOUNT_SID',
      'SMSDROP_AUTH_TOKEN',
      'SMSDROP_APP_ID (a comma list; unset: demo credentials, printed at start)',
    ],
  },
  prune: {
    exits: [
      [0, 'pruned (or, with --dry-run, listed); also when SMSDROP_KEEP is off'],
      [
        2,
        `${USAGE}, a duration shorter than the repeat or resume window, or the data directory in use (the daemon prunes by itself)`,
      ],
      UNEXPECTED,
    ],
    settings: [
      'SMSDROP_DATA_DIR',
      ...ACCESS,
      'SMSDROP_KEEP',
      'SMSDROP_REPEAT_WINDOW',
      'SMSDROP_RESUME_WITHIN',
      'SMSDROP_JOURNAL_SYNC',
      'SMSDROP_CONFIG',
    ],
  },
  backup: {
    exits: [
      [0, 'copied and checked'],
      [2, `${USAGE}, no journal in the data directory, or DIR already holds a journal copy`],
      UNEXPECTED,
    ],
    settings: ['SMSDROP_DATA_DIR', ...ACCESS, 'SMSDROP_CONFIG'],
  },
  migrate: {
    exits: [
      [0, 'copied'],
      [
        2,
        `${USAGE}, no journal in the data directory, the data directory in use (stop the daemon), a PostgreSQL URL that does not connect, or a PostgreSQL journal that is not empty`,
      ],
      UNEXPECTED,
    ],
    settings: ['SMSDROP_DATA_DIR', ...ACCESS, 'SMSDROP_CONFIG'],
  },
  suppress: {
    exits: [
      [0, 'done'],
      [2, `${USAGE}, or a NUMBER that is not a phone number (nothing is changed)`],
      UNEXPECTED,
    ],
    settings: ['SMSDROP_DATA_DIR', ...ACCESS, 'SMSDROP_CONFIG'],
  },
};

/** The help text after a command's options: its exit statuses and the settings it reads. */
export function helpAfter(name: string): string {
  const help = COMMAND_HELP[name];
  if (!help) throw new SmsdropError('E_INTERNAL', `no help entry for command ${name}`);
  const exits = help.exits
    .map(([code, meaning]) => `  ${code}  ${wrap(meaning, 78, '     ').trimStart()}`)
    .join('\n');
  return `\nExit status:\n${exits}\n\nSettings read (SMSDROP_* variables, config/local.json or global flags):\n${wrap(help.settings.join(', '), 78, '  ')}\n`;
}

/**
 * Adds to every command (and its subcommands): the help text after, and a short pointer after a
 * usage error.
 */
export function decorateCommands(program: Command): void {
  for (const command of program.commands) {
    command.addHelpText('after', helpAfter(command.name()));
    const decorate = (c: Command, path: string) => {
      c.showHelpAfterError(`see ${path} --help`);
      for (const sub of c.commands) decorate(sub, `${path} ${sub.name()}`);
    };
    decorate(command, `smsdrop ${command.name()}`);
  }
}

function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(indent + line);
  return lines.join('\n');
}
