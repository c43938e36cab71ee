// Cluster mode's faults beside the kills, planned from the seed alone: a node stopped dead
// (SIGSTOP) for longer than its lease and then let go on (SIGCONT), as a long GC pause or a frozen
// VM would; a node cut off from PostgreSQL, or from the provider alone, by its own relay held
// (chaos/relay.ts: connections stay open, bytes wait) for several leases, then released. Each is
// due when the run has landed a given number of kills; it runs beside the kills, which leave a
// node alone while a fault holds it (a SIGTERM would wait on a stopped process, and the point is
// what the node does when it comes back).
import { setTimeout as sleep } from 'node:timers/promises';
import { seededRandom } from '../src/simulator/faults.js';
import type { CliProcess } from './procs.js';
import type { Relay } from './relay.js';

export type FaultKind = 'pause' | 'postgres' | 'provider';

export interface PlannedFault {
  kind: FaultKind;
  /** Due once this many kills have landed. */
  atKill: number;
  node: number;
  durationMs: number;
}

export interface FaultCounts {
  pauses: number;
  partitions: { postgres: number; provider: number };
  /** Pauses due on a node that was not running (it had exited by itself). */
  skipped: number;
}

export function noFaults(): FaultCounts {
  return { pauses: 0, partitions: { postgres: 0, provider: 0 }, skipped: 0 };
}

/** A pause lasts 1.5 to 3 leases; a partition 2 to 4. */
const SPAN_IN_LEASES: Record<'pause' | 'partition', [number, number]> = {
  pause: [1.5, 3],
  partition: [2, 4],
};

/**
 * The faults of a run, from its seed: partition i is of the provider when i mod 3 is 1 (two
 * partitions make one of each), of PostgreSQL otherwise. Sorted by when they are due.
 */
export function planFaults(p: {
  seed: number;
  kills: number;
  pauses: number;
  partitions: number;
  nodes: number;
  leaseMs: number;
}): PlannedFault[] {
  const random = seededRandom((p.seed ^ 0x3b9f0c25) >>> 0);
  const one = (kind: FaultKind): PlannedFault => {
    const [min, max] = SPAN_IN_LEASES[kind === 'pause' ? 'pause' : 'partition'];
    return {
      kind,
      atKill: Math.floor(random() * p.kills),
      node: Math.floor(random() * p.nodes),
      durationMs: Math.round(p.leaseMs * (min + random() * (max - min))),
    };
  };
  const faults = [
    ...Array.from({ length: p.pauses }, () => one('pause')),
    ...Array.from({ length: p.partitions }, (_, i) => one(i % 3 === 1 ? 'provider' : 'postgres')),
  ];
  return faults.sort((a, b) => a.atKill - b.atKill);
}

/** What a fault acts on: the node's process (as it is at the fault's start) and its relays. */
export interface FaultTargets {
  process(node: number): CliProcess;
  relay(node: number, to: 'postgres' | 'provider'): Relay;
  log(line: string): void;
}

/** Starts the faults as they fall due; knows which node a fault holds. */
export class FaultRunner {
  readonly counts = noFaults();
  readonly #plan: PlannedFault[];
  readonly #targets: FaultTargets;
  /** The fault running on each node, if any. */
  readonly #running = new Map<number, Promise<void>>();
  readonly #all: Promise<void>[] = [];

  constructor(plan: PlannedFault[], targets: FaultTargets) {
    this.#plan = [...plan];
    this.#targets = targets;
  }

  /** Faults not yet started. */
  get left(): number {
    return this.#plan.length;
  }

  /** Starts every fault due at `kills` landed (one on a node already held waits its turn). */
  startDue(kills: number): void {
    while (this.#plan[0] && this.#plan[0].atKill <= kills) {
      const fault = this.#plan.shift()!;
      const before = this.#running.get(fault.node) ?? Promise.resolve();
      const run = before.then(() => this.#run(fault));
      this.#running.set(fault.node, run);
      this.#all.push(run);
    }
  }

  /** Resolves once no fault holds `node`. */
  async clear(node: number): Promise<void> {
    for (let running = this.#running.get(node); running; running = this.#running.get(node)) {
      await running;
      if (this.#running.get(node) === running) this.#running.delete(node);
    }
  }

  /** Every fault started so far, ended. */
  async finish(): Promise<void> {
    await Promise.all(this.#all);
  }

  async #run(f: PlannedFault): Promise<void> {
    await startedUp(this.#targets.process(f.node));
    const what = `node ${f.node}: ${f.kind === 'pause' ? 'SIGSTOP' : `cut off from ${f.kind}`} for ${f.durationMs} ms`;
    if (f.kind === 'pause') {
      const proc = this.#targets.process(f.node);
      if (!proc.alive()) {
        this.counts.skipped++;
        return this.#targets.log(`${what}: not running, skipped`);
      }
      this.#targets.log(`${what} (pid ${proc.child.pid}): starts`);
      proc.child.kill('SIGSTOP');
      this.counts.pauses++;
      await sleep(f.durationMs);
      proc.child.kill('SIGCONT');
    } else {
      const relay = this.#targets.relay(f.node, f.kind);
      this.#targets.log(`${what}: starts`);
      relay.hold();
      this.counts.partitions[f.kind]++;
      await sleep(f.durationMs);
      relay.release();
    }
    this.#targets.log(`${what}: over`);
  }
}

/** How long a fault waits for its node to finish starting (a loaded machine starts slowly). */
const START_UP_WAIT_MS = 60_000;

/**
 * Resolves once the node watches its inbox (its start-up over: a fault during start-up would only
 * delay it), has exited, or START_UP_WAIT_MS passed.
 */
async function startedUp(proc: CliProcess): Promise<void> {
  const deadline = Date.now() + START_UP_WAIT_MS;
  while (proc.alive() && !proc.output().includes(' watching ') && Date.now() < deadline)
    await sleep(50);
}

/** "2 (SIGSTOP)", "3 (PostgreSQL 2, provider 1)": for the figures. */
export function formatFaultCounts(c: FaultCounts): string {
  const { postgres, provider } = c.partitions;
  return `pauses ${c.pauses}, partitions ${postgres + provider} (PostgreSQL ${postgres}, provider ${provider})`;
}
