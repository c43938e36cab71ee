// The numbers a file's intake has placed in batches, per group, remembered in a few bits each (a
// Bloom filter): "certainly not placed yet" or "maybe". A row whose number is certainly new goes
// straight into its group's batch; a "maybe" is a repeat or, rarely, a false alarm, and doubts.ts
// settles it exactly from the journal once the file is read.
//
// Why not a unique index on (group, number): numbers in a list come in no order, so each row's
// index entry lands on a page of its own, and every commit rewrites most of the index into the
// WAL: it more than doubles the time to store a list (docs/benchmark-history.md, "Duplicates
// without the unique index"). Why not an exact set in memory: it would hold every number of the
// file (a 4M-row list: 60+ MB), where this takes one byte per row the file could hold.

/**
 * Bits per row the file could hold, and bits set per number: ~2% false alarms when every row of the
 * file is a distinct valid number, far fewer in a file with more than a number per row.
 */
const BITS_PER_ROW = 8;
const HASHES = 5;
/**
 * The fewest bytes a row with a valid number takes: 11 digits and a line break (an international
 * number has more). So a file of N bytes holds at most N / 12 numbers.
 */
const MIN_ROW_BYTES = 12;
const MIN_BITS = 1 << 16;

export class SeenNumbers {
  readonly #words: Uint32Array;
  readonly #bits: number;
  readonly #at = new Uint32Array(HASHES);

  /** Sized for a file of `fileBytes` bytes, whatever its rows hold. */
  static forFile(fileBytes: number): SeenNumbers {
    return new SeenNumbers(
      Math.max(MIN_BITS, Math.ceil((fileBytes / MIN_ROW_BYTES) * BITS_PER_ROW)),
    );
  }

  /** `bits` bits in all (a few make nearly every number a "maybe": tests use that). */
  constructor(bits: number) {
    this.#bits = Math.max(1, Math.floor(bits));
    this.#words = new Uint32Array(Math.ceil(this.#bits / 32));
  }

  add(groupId: number, phone: string): void {
    const at = this.#positions(groupId, phone);
    for (let i = 0; i < HASHES; i++) this.#words[at[i]! >>> 5]! |= 1 << (at[i]! & 31);
  }

  /** False: the number was never added to this group. True: it may have been. */
  mayHave(groupId: number, phone: string): boolean {
    const at = this.#positions(groupId, phone);
    for (let i = 0; i < HASHES; i++)
      if ((this.#words[at[i]! >>> 5]! & (1 << (at[i]! & 31))) === 0) return false;
    return true;
  }

  /**
   * Adds the number when it was certainly never added (returns true); leaves the filter as it is
   * when it may have been (false). What mayHave and then add say and do, with one hashing.
   */
  addIfNew(groupId: number, phone: string): boolean {
    const at = this.#positions(groupId, phone);
    let isNew = false;
    for (let i = 0; i < HASHES && !isNew; i++)
      isNew = (this.#words[at[i]! >>> 5]! & (1 << (at[i]! & 31))) === 0;
    if (isNew) for (let i = 0; i < HASHES; i++) this.#words[at[i]! >>> 5]! |= 1 << (at[i]! & 31);
    return isNew;
  }

  /** The key's bits (in a buffer reused by every call). */
  #positions(groupId: number, phone: string): Uint32Array {
    // Two 32-bit hashes of (group, number), combined as h1 + i * h2 (Kirsch and Mitzenmacher).
    let h1 = 0x811c9dc5 ^ groupId;
    let h2 = Math.imul(groupId, 0x9e3779b1) ^ 0x27d4eb2f;
    for (let i = 0; i < phone.length; i++) {
      const c = phone.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 13;
    }
    h1 = mix(h1);
    h2 = mix(h2) | 1;
    for (let i = 0; i < HASHES; i++) this.#at[i] = ((h1 + Math.imul(i, h2)) >>> 0) % this.#bits;
    return this.#at;
  }
}

/** MurmurHash3's finaliser: every input bit moves every output bit. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
