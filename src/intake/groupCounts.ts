// How many rows each group (app, template, values) has in a file, counted while intake reads it,
// so that intake knows when a group's last row has been read. A batch may be sent before the end
// of the file only when no later row could still join it (fewest requests): a full batch can take
// no more numbers, and with these counts a group's last, part-full batch can go as soon as the
// group's last row is read, instead of after the whole file. A list of a million rows has tens
// of thousands of one-row groups (personalised rows): without the counts all of their requests
// wait for the end of the file.
//
// The count runs in a thread of its own (countWorker.ts) while intake reads, not before it: full
// batches need no counts, and counting the whole file first would hold back the first request
// by as long. Counted on the main thread, between intake's chunks, its garbage would share
// intake's heap and raise the process's peak memory. Each slot
// of the shared table holds the rows counted minus the rows intake has read; until the count is
// complete nothing is said; then intake looks at the groups it holds in memory, and a group whose
// rows have all been read goes (allRead). One it no longer holds waits for the end of the file,
// as without counts.
//
// Memory stays flat: rows are counted per slot of a fixed table (a hash of the group's key), not
// per group. Groups that share a slot are counted together, which can only make a group look
// unfinished for longer (only the group whose row empties the slot is known to have ended; the
// others go at the end of the file, as without counts), never finished too early. Should the
// counts still prove wrong (more rows of a slot than counted: the file was rewritten in place?),
// they are no longer trusted, and the journal never adds a row to a batch already closed.
// The counts are exact only if both passes see the same rows: so this reads only files without a
// double quote, whose records are exactly their lines split at their separator (what csv-parse
// makes of them with intake's options; intake sends during reading only such files anyway), and
// intake checks that it read the same header.
import { closeSync, openSync, readSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { unguardCell } from '../csvio/guard.js';
import { mapHeader } from './headers.js';
import { idsOf, datasOf, type IntakeOptions, LINE_BREAK, type RowShape } from './row.js';
import { startWorker } from '../workerThread.js';

/** Slots of the table: 4 MB, few enough shared slots up to millions of groups. */
const SLOTS = 1 << 20;
// Small reads: each decoded read is split into thousands of strings, and bigger reads make the
// heap (so the process's peak memory) grow for no gain in speed. They are synchronous, into one
// buffer: through a read stream, each read would wait for the thread pool, and the count would
// spend about half its time idle.
const READ_SIZE = 16 * 1024;
/** A record with nothing but whitespace (tabs too) and commas: a blank line (see isBlankRecord). */
const NOT_BLANK_RECORD = /[^\s,]/;
/**
 * The count's thread needs little: its garbage (the lines and cells of 16 KB reads) dies young.
 * Should it need more, it stops, and the counts say nothing.
 */
const COUNT_THREAD_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 16 };

/**
 * What the count's thread is given: the file, and the table (over a SharedArrayBuffer) to count
 * into.
 */
export interface CountJob {
  file: string;
  options: Omit<IntakeOptions, 'onHeader'>;
  slots: Int32Array;
}

/** How a count ended: the header counted under; undefined when no counts could be made. */
export type CountResult = { header: string[] } | undefined;

export class GroupCounts {
  /**
   * Per slot: rows counted so far minus rows intake has read (negative while the count is behind).
   */
  readonly #left = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
  #state: 'counting' | 'counted' | 'distrusted' = 'counting';
  #worker: Worker | undefined;
  /** The header cells (unguarded) intake read, and the ones counted under. */
  #headerRead: readonly string[] | undefined;
  #headerCounted: readonly string[] | undefined;
  /** Settles when the count is over: complete, given up, or stopped. */
  readonly done: Promise<void>;

  private constructor(file: string, options: IntakeOptions) {
    this.done = this.#count(file, options);
  }

  /**
   * Starts counting the rows of each group in the first `options.bytes` bytes of a file without a
   * double quote.
   */
  static start(file: string, options: IntakeOptions): GroupCounts {
    return new GroupCounts(file, options);
  }

  /**
   * The slot of a group (app, template, values): FNV-1a over their UTF-16 code units, each
   * followed by a NUL. Hashed piece by piece, with no key string built: counting runs on every row.
   */
  static slotOf(appId: string, templateId: string, datas: readonly string[]): number {
    let h = fnv(fnv(0x811c9dc5, appId), templateId);
    for (let i = 0; i < datas.length; i++) h = fnv(h, datas[i]!);
    // FNV's low bits alone spread keys that differ in their last characters poorly (numbered
    // values): mix all the bits into them first (MurmurHash3's finaliser).
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) & (SLOTS - 1);
  }

  /** True once the count is complete and its counts are trusted. */
  get ready(): boolean {
    return this.#state === 'counted';
  }

  /**
   * Intake read its header (unguarded cells): the counts hold only if they were made under the
   * same.
   */
  headerRead(header: readonly string[]): void {
    this.#headerRead = header;
    this.#distrustOtherHeader();
  }

  /** Once both headers are known: counts made under another header than intake read say nothing. */
  #distrustOtherHeader(): void {
    if (
      this.#headerRead &&
      this.#headerCounted &&
      !sameCells(this.#headerRead, this.#headerCounted)
    )
      this.distrust();
  }

  /** The counts say nothing any more (another header, another file). */
  distrust(): void {
    this.#state = 'distrusted';
  }

  /** Intake is over: a count still running is stopped. */
  stop(): Promise<void> {
    void this.#worker?.terminate();
    return this.done;
  }

  /**
   * True when the count is complete and every row of the groups in `slot` has been read: for a
   * group whose last row came before the count was complete (rowRead said nothing then).
   */
  allRead(slot: number): boolean {
    return this.#state === 'counted' && Atomics.load(this.#left, slot) === 0;
  }

  /**
   * Counts one row of the group in `slot` as read; true when the count says no row of it is left in
   * the file.
   */
  rowRead(slot: number): boolean {
    const left = Atomics.sub(this.#left, slot, 1); // the count's thread may be adding to it
    if (this.#state !== 'counted') return false;
    if (left <= 0) {
      this.distrust(); // a row the count did not see: the file is not what was counted
      return false;
    }
    return left === 1;
  }

  async #count(file: string, options: IntakeOptions): Promise<void> {
    const { onHeader: _, ...plain } = options;
    const result = await new Promise<CountResult>((resolve) => {
      const job: CountJob = { file, options: plain, slots: this.#left };
      // A thread that cannot start (no memory for one, say) means no counts, never a failed intake.
      const worker = (this.#worker = startWorker(import.meta.url, 'countWorker', {
        workerData: job,
        resourceLimits: COUNT_THREAD_LIMITS,
      }));
      worker.once('message', resolve);
      worker.once('error', () => resolve(undefined)); // out of memory, say: no counts
      worker.once('exit', () => resolve(undefined)); // stopped (after a message, this changes nothing)
    }).catch(() => undefined);
    this.#worker = undefined;
    if (result === undefined) return this.distrust();
    this.#headerCounted = result.header;
    this.#distrustOtherHeader();
    // Intake read more rows of a slot than the whole file has: not the file that was counted.
    if (this.#left.some((n) => n < 0)) this.distrust();
    if (this.#state === 'counting') this.#state = 'counted';
  }
}

/**
 * Counts the rows of each group in the first `options.bytes` bytes of a file without a double
 * quote into `slots` (run by the count's thread).
 */
export function countRows({ file, options, slots }: CountJob): CountResult {
  let shape: Pick<RowShape, 'map' | 'options'> | undefined;
  const delimiter = options.delimiter ?? ',';
  const countRecord = (record: string): void => {
    if (!NOT_BLANK_RECORD.test(record)) return; // blank: intake skips it too
    const cells = record.split(delimiter);
    if (shape === undefined) {
      shape = { map: mapHeader(cells.map(unguardCell)), options };
      return;
    }
    const { appId, templateId } = idsOf(cells, shape);
    // Rows without both ids have no group (intake refuses them before grouping).
    if (appId !== undefined && templateId !== undefined)
      Atomics.add(slots, GroupCounts.slotOf(appId, templateId, datasOf(cells, shape)), 1);
  };
  let bytesRead: number;
  try {
    bytesRead = forEachRecord(file, options, countRecord);
  } catch {
    return undefined; // unreadable: intake finds the problem itself
  }
  // Fewer bytes than inspected: the file shrank or was rewritten; intake will find out.
  if (shape === undefined || (options.bytes !== undefined && bytesRead !== options.bytes))
    return undefined;
  return { header: [...shape.map.header] };
}

function fnv(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return Math.imul(h, 0x01000193); // the NUL after the piece (h ^ 0 = h)
}

function sameCells(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((cell, i) => cell === b[i]);
}

/**
 * The complete counts of a file, before any row is read (undefined when they cannot be made: no
 * usable header, an unreadable file). Intake itself starts the count and reads on
 * (GroupCounts.start).
 */
export async function countGroups(
  file: string,
  options: IntakeOptions,
): Promise<GroupCounts | undefined> {
  const counts = GroupCounts.start(file, options);
  await counts.done;
  return counts.ready ? counts : undefined;
}

/**
 * Calls `each` with every line of the file's first `options.bytes` bytes, decoded; returns the
 * bytes read.
 */
function forEachRecord(
  file: string,
  options: Omit<IntakeOptions, 'onHeader'>,
  each: (record: string) => void,
): number {
  const decoder = new TextDecoder(options.encoding);
  let carry = '';
  let first = true;
  const lines = (text: string, final: boolean): void => {
    if (first && text.length > 0) {
      // A BOM is not part of the header (csv-parse drops it with bom: true; TextDecoder drops
      // only UTF-8's).
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    text = carry + text;
    // A CR at the end may be half of a CRLF: split there next time (an extra empty line is blank).
    const end = final ? text.length : Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r')) + 1;
    carry = text.slice(end);
    if (end === 0) return;
    const lines = text.slice(0, end);
    // Splitting at one character is much quicker than at a pattern, and most files have no CR.
    for (const record of lines.indexOf('\r') === -1 ? lines.split('\n') : lines.split(LINE_BREAK))
      each(record);
  };
  const limit = options.bytes ?? Number.POSITIVE_INFINITY;
  const buffer = Buffer.allocUnsafe(READ_SIZE);
  const fd = openSync(file, 'r');
  let bytes = 0;
  try {
    for (;;) {
      const read = readSync(fd, buffer, 0, Math.min(READ_SIZE, limit - bytes), bytes);
      if (read === 0) break;
      bytes += read;
      lines(decoder.decode(buffer.subarray(0, read), { stream: true }), false);
    }
  } finally {
    closeSync(fd);
  }
  lines(decoder.decode(), true);
  return bytes;
}
