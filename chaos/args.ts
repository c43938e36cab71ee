// The chaos suite's command line: its options, their usage text, and their parsing (a bad one is a
// UsageError, which the entry prints with the usage and exits 2 on).
import { parseArgs } from 'node:util';
import { parseFaults } from '../src/simulator/faults.js';
import type { Mode } from './mode.js';
import type { Scale } from './files.js';

export const DEFAULT_FAULTS =
  'http500@0.05,cut-after@0.03,cut-before@0.03,status=160000@0.03,stall@0.01';

export interface ChaosOptions {
  kills: number;
  mode: Mode | 'both';
  /** Cluster mode: daemons on the one PostgreSQL journal (default 3). */
  nodes?: number;
  seed: number;
  scale: Scale;
  faults: string;
  killWindowMs: [number, number];
  /** Keep the work folder even when the run passed. */
  keep: boolean;
  /** Cluster mode: nodes stopped (SIGSTOP) for longer than their lease, then let go on. */
  pauses?: number;
  /** Cluster mode: nodes cut off from PostgreSQL (one in three: from the provider) a while. */
  partitions?: number;
  /** Daemon and cluster modes: pause, resume and cancel commands among the kills. */
  control?: boolean;
  /** Lines of progress (default: none). */
  log?: (line: string) => void;
}

export const USAGE = `usage: npm run chaos -- [--kills N] [--mode send|daemon|both|cluster] [--nodes N] [--seed S]
       [--pauses N] [--partitions N] [--scale full|small] [--faults SPEC] [--kill-window MIN-MAX]
       [--control] [--json] [--keep]
  --kills N            kills per mode (default 100)
  --mode               send, daemon, both (send then daemon) or cluster (default both)
  --nodes N            cluster mode: daemons sharing one PostgreSQL journal (default 3)
  --pauses N           cluster mode: a node stopped dead (SIGSTOP) for 1.5 to 3 leases, then
                       let go on (SIGCONT), N times among the kills (default 0)
  --partitions N       cluster mode: a node's connections to PostgreSQL (every third partition:
                       to the provider) held open, nothing passing, for 2 to 4 leases, then
                       released, N times among the kills (default 0)
  --seed S             seed of the files, the kills, the pauses and partitions and the
                       simulator's faults (default: random, printed)
  --scale              full (a group of 20,500 numbers, 3,000 small groups...) or small (for the tests)
  --faults SPEC        the simulator's --faults (default ${DEFAULT_FAULTS})
  --kill-window A-B    a kill lands A to B ms after the process starts (default 50-2500)
  --control            daemon and cluster modes: now and then between kills, smsdrop pause,
                       resume or (rarer) cancel on a file in flight; the verdict adds: a cancelled
                       row never received, no request of a cancelled file after its cancel returned
  --json               print the figures as one JSON object on stdout (progress goes to stderr)
  --keep               keep the work folder even when the run passed`;

export class UsageError extends Error {}

function whole(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max)
    throw new UsageError(`--${name} expects a whole number from ${min} to ${max}, got "${text}"`);
  return n;
}

function oneOf<T extends string>(
  name: string,
  text: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (text === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(text))
    throw new UsageError(`--${name} expects ${allowed.join(', ')}, got "${text}"`);
  return text as T;
}

function killWindow(text: string | undefined): [number, number] {
  if (text === undefined) return [50, 2500];
  const m = /^(\d+)-(\d+)$/.exec(text);
  if (!m || Number(m[1]) > Number(m[2]))
    throw new UsageError(`--kill-window expects MIN-MAX in ms with MIN <= MAX, got "${text}"`);
  return [Number(m[1]), Number(m[2])];
}

/** The options of a command line; throws UsageError. */
export function parseChaosArgs(argv: string[]): ChaosOptions & { json: boolean } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        kills: { type: 'string' },
        mode: { type: 'string' },
        nodes: { type: 'string' },
        pauses: { type: 'string' },
        partitions: { type: 'string' },
        seed: { type: 'string' },
        scale: { type: 'string' },
        faults: { type: 'string' },
        'kill-window': { type: 'string' },
        json: { type: 'boolean' },
        control: { type: 'boolean' },
        keep: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const faults = parsed.faults ?? DEFAULT_FAULTS;
  try {
    parseFaults(faults);
  } catch (err) {
    throw new UsageError(`--faults: ${(err as Error).message}`);
  }
  return {
    kills: whole('kills', parsed.kills, 100, 0, 100_000),
    mode: oneOf('mode', parsed.mode, ['send', 'daemon', 'both', 'cluster'] as const, 'both'),
    nodes: whole('nodes', parsed.nodes, 3, 2, 8),
    pauses: whole('pauses', parsed.pauses, 0, 0, 10_000),
    partitions: whole('partitions', parsed.partitions, 0, 0, 10_000),
    seed: whole('seed', parsed.seed, Math.floor(Math.random() * 0xffffffff), 0, 0xffffffff),
    scale: oneOf('scale', parsed.scale, ['full', 'small'] as const, 'full'),
    faults,
    killWindowMs: killWindow(parsed['kill-window']),
    json: parsed.json ?? false,
    keep: parsed.keep ?? false,
    control: parsed.control ?? false,
  };
}
