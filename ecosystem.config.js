// pm2 process file for the smsdrop daemon: `pm2 start ecosystem.config.js`.
//
// This package is an ES module ("type": "module"). pm2 loads this file with require(), which
// Node >= 20.19 allows for an ES module (require(esm)) and which returns its named exports: pm2
// reads `apps` from there, so `apps` is a named export. The default export is for other tools.
//
// - One instance in fork mode: the journal has one writer (a second instance would be refused by
//   the data directory's lock anyway).
// - kill_timeout is longer than the daemon's grace period, so `pm2 stop` lets requests in flight
//   finish and be journalled before pm2 would resort to SIGKILL.
// - Restarts back off exponentially; exit status 2 (bad configuration, or another daemon already
//   holds the data directory) is not restarted, since it would fail the same way again.
// - Secrets come from the environment of `pm2 start` (or config/local.json); they are listed here
//   by name only. Nothing secret belongs in this file.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const dataDir = path.resolve(root, process.env.SMSDROP_DATA_DIR ?? 'data');
const graceMs = Number(process.env.SMSDROP_GRACE_MS ?? 30_000);

// dist/cli.js after `npm run build`; the TypeScript source (through tsx, a dev dependency) when
// there is no build, or when SMSDROP_FROM_SOURCE=1.
const fromSource =
  process.env.SMSDROP_FROM_SOURCE === '1' || !existsSync(path.join(root, 'dist', 'cli.js'));

// The Node settings that hold the daemon's memory, as bin/smsdrop (the `smsdrop` command) gives
// them, and overridable the same way: SMSDROP_NODE_FLAGS replaces the flags (empty: none), a flag
// NODE_OPTIONS names is left to it, a MALLOC_ARENA_MAX already set is kept (docs/operations.md).
const words = (text) => text.split(/\s+/).filter(Boolean);
const flagName = (flag) => flag.replace(/^--(no-)?/, '').replace(/=.*$/, '');
const memoryFlags = words(
  process.env.SMSDROP_NODE_FLAGS ?? readFileSync(path.join(root, 'bin', 'node-flags'), 'utf8'),
).filter((flag) => !(process.env.NODE_OPTIONS ?? '').includes(flagName(flag)));

const PASSED_THROUGH = [
  'SMSDROP_CONFIG',
  'SMSDROP_BASE_URL',
  'SMSDROP_ACCOUNT_SID',
  'SMSDROP_AUTH_TOKEN',
  'SMSDROP_APP_ID',
  'SMSDROP_TEMPLATE_ID',
  'SMSDROP_CA_FILE',
  'SMSDROP_TIMEZONE',
  'SMSDROP_CONCURRENCY',
  'SMSDROP_REQUESTS_PER_SECOND',
  'SMSDROP_MAX_FILES',
  'SMSDROP_STABILITY_MS',
  'SMSDROP_GRACE_MS',
  'SMSDROP_PAUSE_COOLDOWN_MS',
  'SMSDROP_PROGRESS_INTERVAL_MS',
  'SMSDROP_LOG_LEVEL',
  'SMSDROP_LOG_FORMAT',
  'SMSDROP_HTTP',
  'SMSDROP_HTTP_TOKEN',
  'SMSDROP_WEBHOOK_URL',
  'SMSDROP_WEBHOOK_SECRET',
  'SMSDROP_WEBHOOK_FORMAT',
];

export const apps = [
  {
    name: 'smsdrop',
    cwd: root,
    script: fromSource ? 'src/cli.ts' : 'dist/cli.js',
    args: 'run',
    interpreter: 'node',
    node_args: [...memoryFlags, ...(fromSource ? ['--import', 'tsx'] : [])],
    exec_mode: 'fork',
    instances: 1,
    autorestart: true,
    exp_backoff_restart_delay: 1_000,
    stop_exit_codes: [2],
    kill_timeout: graceMs + 10_000,
    watch: false,
    // The daemon's own JSON log is in data/logs/ (rotated daily); these are pm2's copies of the
    // terminal output: its info (and debug) lines on stdout go to pm2-out.log, its warnings and
    // errors on stderr to pm2-error.log (shown red by `pm2 logs`).
    out_file: path.join(dataDir, 'logs', 'pm2-out.log'),
    error_file: path.join(dataDir, 'logs', 'pm2-error.log'),
    merge_logs: true,
    env: {
      NODE_ENV: 'production',
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '1',
      SMSDROP_DATA_DIR: dataDir,
      ...Object.fromEntries(
        PASSED_THROUGH.filter((name) => process.env[name] !== undefined).map((name) => [
          name,
          process.env[name],
        ]),
      ),
    },
  },
];

export default { apps };
