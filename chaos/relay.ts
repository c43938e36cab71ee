// A TCP relay the chaos run controls, between one node and PostgreSQL or the provider: it passes
// bytes both ways until held, then passes nothing either way and closes nothing (a partition:
// connections stay open, what is sent waits), until released, when what waited goes on in order.
// A close that happens during a partition waits too (its FIN is held like any byte), so the other
// side learns of it only at the release. `dropClosedWhileHeld`: a connection whose node side ended
// during the partition is dropped at the release instead, its bytes never delivered (the packets
// of a request the node gave up on are lost); without it they arrive late, after the release.
import net from 'node:net';

export interface Relay {
  /** Where the node connects instead of the target. */
  readonly port: number;
  /** Stops passing bytes, both ways; no socket is closed. */
  hold(): void;
  /** Passes what waited, in order, and whatever comes next. */
  release(): void;
  /** Connections opened through it since it started. */
  connections(): number;
  /** Steps (chunks, ends, closes) waiting for the release, over every connection. */
  waiting(): number;
  close(): Promise<void>;
}

export interface RelayOptions {
  host: string;
  port: number;
  dropClosedWhileHeld?: boolean;
}

/** One connection through the relay: the node's socket and the target's. */
class Pair {
  /** What waits to be done on either side while held, in the order it happened. */
  readonly #waiting: Array<() => void> = [];
  #nodeEndedWhileHeld = false;

  constructor(
    readonly node: net.Socket,
    readonly target: net.Socket,
    readonly isHeld: () => boolean,
  ) {
    this.#pass(node, target, true);
    this.#pass(target, node, false);
  }

  #pass(from: net.Socket, to: net.Socket, fromNode: boolean): void {
    from.on('data', (chunk: Buffer) => this.#do(() => to.write(chunk)));
    from.on('end', () => {
      if (fromNode && this.isHeld()) this.#nodeEndedWhileHeld = true;
      this.#do(() => to.end());
    });
    from.on('error', () => {
      if (fromNode && this.isHeld()) this.#nodeEndedWhileHeld = true;
      this.#do(() => to.destroy());
    });
  }

  #do(step: () => void): void {
    if (this.isHeld()) this.#waiting.push(step);
    else step();
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  release(drop: boolean): void {
    if (drop && this.#nodeEndedWhileHeld) {
      this.#waiting.length = 0;
      this.node.destroy();
      this.target.destroy();
      return;
    }
    for (const step of this.#waiting.splice(0)) step();
  }

  destroy(): void {
    this.node.destroy();
    this.target.destroy();
  }
}

export async function startRelay(o: RelayOptions): Promise<Relay> {
  let held = false;
  let opened = 0;
  const pairs = new Set<Pair>();
  const server = net.createServer({ allowHalfOpen: true }, (node) => {
    opened++;
    const target = net.connect({ host: o.host, port: o.port, allowHalfOpen: true });
    const pair = new Pair(node, target, () => held);
    pairs.add(pair);
    const forget = () => {
      if (node.destroyed && target.destroyed) pairs.delete(pair);
    };
    node.on('close', forget);
    target.on('close', forget);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      for (const pair of [...pairs]) pair.release(o.dropClosedWhileHeld ?? false);
    },
    connections: () => opened,
    waiting: () => [...pairs].reduce((sum, pair) => sum + pair.waiting, 0),
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) pair.destroy();
        server.close(() => resolve());
      }),
  };
}
