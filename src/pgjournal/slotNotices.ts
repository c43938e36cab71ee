// The nodes' word to each other about the account's slots (accountSlots.ts), by PostgreSQL's
// LISTEN/NOTIFY on one channel: "free NODE" when a node gives a slot back, "want NODE" when a
// node looked for a slot and found none, "pause NODE" when a node paused the account
// (accountPause.ts). A waiting node wakes on a free slot at once instead of at its next look; a
// node that hears others want slots keeps only its share of the account's; a node told of a pause
// reads it at once, rather than at its next renewal.
//
// One dedicated connection a node listens on, outside the pool (a LISTEN lives as long as its
// session). Nothing depends on a notice arriving: a node that misses them (its listening
// connection lost, reopened at its next look) still finds free slots by looking again, later.
import pg from 'pg';

/** The channel every node listens on; the senders' statements name it too (accountSlots.ts). */
export const SLOT_CHANNEL = 'smsdrop_slots';

export type SlotNotice = { kind: 'free' | 'want' | 'pause'; node: string };

/** How long a broken listening connection waits before it is opened again. */
const REOPEN_MS = 1_000;

export class SlotNotices {
  readonly #options: pg.ClientConfig;
  readonly #heard: (notice: SlotNotice) => void;
  #client: pg.Client | undefined;
  #opening: Promise<void> | undefined;
  #closed = false;
  #brokenAt = -Infinity;

  constructor(pool: pg.Pool, heard: (notice: SlotNotice) => void) {
    this.#options = pool.options;
    this.#heard = heard;
  }

  /** Listening, or trying again later: never throws (notices only make waits shorter). */
  ensureListening(): Promise<void> {
    if (this.#closed || this.#client) return Promise.resolve();
    if (performance.now() - this.#brokenAt < REOPEN_MS) return Promise.resolve();
    this.#opening ??= this.#open().finally(() => (this.#opening = undefined));
    return this.#opening;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#opening;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #open(): Promise<void> {
    const client = new pg.Client(this.#options);
    client.on('error', () => this.#broken(client));
    client.on('end', () => this.#broken(client));
    client.on('notification', (message) => {
      const notice = parseNotice(message.payload);
      if (notice) this.#heard(notice);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${SLOT_CHANNEL}`);
    } catch {
      this.#broken(client);
      await client.end().catch(() => undefined);
      return;
    }
    if (this.#closed) await client.end().catch(() => undefined);
    else this.#client = client;
  }

  #broken(client: pg.Client): void {
    this.#brokenAt = performance.now();
    if (this.#client === client) this.#client = undefined;
  }
}

function parseNotice(payload: string | undefined): SlotNotice | undefined {
  const match = /^(free|want|pause) (.+)$/.exec(payload ?? '');
  return match ? { kind: match[1] as SlotNotice['kind'], node: match[2]! } : undefined;
}
