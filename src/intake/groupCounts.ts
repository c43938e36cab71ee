// How many rows each group (app, template, values) has in a file, counted before intake, so that
// intake knows when a group's last row has been read. A batch may be sent before the end of the
// file only when no later row could still join it (fewest requests): a full batch can take no
// more numbers, and with these counts a group's last, part-full batch can go as soon as the
// group's last row is read, instead of after the whole file. A list of a million rows has tens
// of thousands of one-row groups (personalised rows): without the counts all of their requests
// wait for the end of the file.
//
// Memory stays flat: rows are counted per slot of a fixed table (a hash of the group's key), not
// per group. Groups that share a slot are counted together, which can only make a group look
// unfinished for longer (only the group whose row empties the slot is known to have ended; the
// others go at the end of the file, as without counts), never finished too early. Should the
// counts still prove wrong (a row of a slot already at zero: the file was rewritten in place?),
// they are no longer trusted, and the journal never adds a row to a batch already closed.
// The counts are exact only if both passes see the same rows: so this reads only files without a
// double quote, whose records are exactly their lines split at commas (what csv-parse makes of
// them with intake's options; intake sends during reading only such files anyway), and intake
// checks that it read the same header.
import { closeSync, openSync, readSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { unguardCell } from '../csvio/guard.js';
import { mapHeader } from './headers.js';
import { idsOf, datasOf, type IntakeOptions, type RowShape } from './row.js';

/** Slots of the table: 4 MB, few enough shared slots up to millions of groups. */
const SLOTS = 1 << 20;
// Small reads: each decoded read is split into thousands of strings, and bigger reads made the
// heap (so the process's peak memory) grow by tens of MB for no gain in speed. They are
// synchronous, into one buffer: through a read stream, each of the ~2,000 reads of a 32 MB file
// waited for the thread pool, and the count of a million rows took 1.1 s, of which 0.6 s idle.
const READ_SIZE = 16 * 1024;
/** Reads between turns of the event loop (1 MB, ~30 ms): requests of other files in progress get answered. */
const READS_PER_TURN = 64;
const LINE_BREAK = /\r\n|\n|\r/;
/** A record with nothing but whitespace and commas: a blank line (see isBlankRecord). */
const NOT_BLANK_RECORD = /[^\s,]/;

export class GroupCounts {
  readonly #left: Uint32Array;
  #trusted = true;

  /** header: the header cells (unguarded) the rows were counted under. */
  constructor(
    readonly header: readonly string[],
    left: Uint32Array,
  ) {
    this.#left = left;
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

  /** Intake read another header than the one counted under: the counts say nothing. */
  distrust(): void {
    this.#trusted = false;
  }

  /** Counts one row of the group in `slot` as read; true when no row of it is left in the file. */
  rowRead(slot: number): boolean {
    const left = this.#left[slot]!;
    if (left === 0) {
      this.#trusted = false; // a row the count did not see: the file is not what was counted
      return false;
    }
    this.#left[slot] = left - 1;
    return this.#trusted && left === 1;
  }
}

function fnv(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return Math.imul(h, 0x01000193); // the NUL after the piece (h ^ 0 = h)
}

/**
 * Counts the rows of each group in the first `options.bytes` bytes of a file without a double
 * quote. Undefined when the counts cannot be made (no usable header, unreadable file): intake
 * then finds the problem itself, and part-full batches wait for the end of the file.
 */
export async function countGroups(file: string, options: IntakeOptions): Promise<GroupCounts | undefined> {
  const left = new Uint32Array(SLOTS);
  let shape: Pick<RowShape, 'map' | 'options'> | undefined;
  const countRecord = (record: string): void => {
    if (!NOT_BLANK_RECORD.test(record)) return; // blank: intake skips it too
    const cells = record.split(',');
    if (shape === undefined) {
      shape = { map: mapHeader(cells.map(unguardCell)), options };
      return;
    }
    const { appId, templateId } = idsOf(cells, shape);
    // Rows without both ids have no group (intake refuses them before grouping).
    if (appId !== undefined && templateId !== undefined) left[GroupCounts.slotOf(appId, templateId, datasOf(cells, shape))]!++;
  };
  let bytesRead: number;
  try {
    bytesRead = await forEachRecord(file, options, countRecord);
  } catch {
    return undefined;
  }
  // Fewer bytes than inspected: the file shrank or was rewritten; intake will find out.
  if (shape === undefined || (options.bytes !== undefined && bytesRead !== options.bytes)) return undefined;
  return new GroupCounts(shape.map.header, left);
}

/** Calls `each` with every line of the file's first `options.bytes` bytes, decoded; returns the bytes read. */
async function forEachRecord(file: string, options: IntakeOptions, each: (record: string) => void): Promise<number> {
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
    for (const record of lines.indexOf('\r') === -1 ? lines.split('\n') : lines.split(LINE_BREAK)) each(record);
  };
  const limit = options.bytes ?? Number.POSITIVE_INFINITY;
  const buffer = Buffer.allocUnsafe(READ_SIZE);
  const fd = openSync(file, 'r');
  let bytes = 0;
  try {
    for (let reads = 1; ; reads++) {
      const read = readSync(fd, buffer, 0, Math.min(READ_SIZE, limit - bytes), bytes);
      if (read === 0) break;
      bytes += read;
      lines(decoder.decode(buffer.subarray(0, read), { stream: true }), false);
      if (reads % READS_PER_TURN === 0) await nextTurn();
    }
  } finally {
    closeSync(fd);
  }
  lines(decoder.decode(), true);
  return bytes;
}
