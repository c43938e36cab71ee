// Reading one file into the journal (intake): its rows checked and planned, batches sent while
// reading goes on when nothing found later can refuse the file, and the refusal of the file when
// it cannot be read whole.
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  FILE_STATUS,
  type FileRecord,
  type FileStore,
  type KeptRows,
  type SendStore,
} from '../ports/index.js';
import {
  type ErrorCode,
  errorCode,
  hasCode,
  isDatabaseOutage,
  isMachineCode,
  userError,
} from '../errors.js';
import { createRowWriter, type RowWriter } from '../plan/rowWriter.js';
import type { PlanStore, SentBeforeLookup } from '../ports/plan.js';
import type { FileInspection } from '../intake/inspect.js';
import { encodingRefusal } from '../intake/readings.js';
import { MAX_RECORD_CHARS, readRows } from '../intake/index.js';
import { GroupCounts } from '../intake/groupCounts.js';
import { sendWhileReading } from '../send/whileReading.js';
import { manyWaitsOn } from '../send/sleep.js';
import type { IntakeOptions } from '../intake/row.js';
import type { PipelineContext } from './context.js';
import { noteReading } from './readingNote.js';
import { assertUnchanged, headerTaker, keptRowMarker } from './intakeRows.js';

/** Why a file is refused, with its stable code. */
export interface Refusal {
  code: ErrorCode;
  reason: string;
}

export interface IntakeTerms {
  /** Planned only: nothing is sent while reading. */
  dryRun: boolean;
  /** Other files' rows, for the repeat window; none with --resend. */
  sentBefore: SentBeforeLookup | undefined;
  /** Ends this intake's turn (IntakeTurns): the next file may be read. */
  turnOver: () => void;
}

/**
 * A file read whole. `sendingOn` is what sends beside the reading, going on through the file's due
 * batches once it is over (never undefined: settled at once when nothing sent beside it); it
 * settles once its requests are recorded, and rejects with what stopped it.
 */
export interface ReadWhole {
  sendingOn: Promise<void>;
}

/**
 * Reads every row into the journal. Returns the refusal when the file as a whole is refused.
 * Batches that take no more numbers (full, or their group's last row read) are sent while reading
 * goes on, when that is allowed (see mayOverlap), and the rest once it is over, by the same
 * requests' flow (ReadWhole).
 */
export async function intake(
  ctx: PipelineContext,
  file: FileRecord,
  filePath: string,
  inspection: FileInspection,
  terms: IntakeTerms,
): Promise<Refusal | ReadWhole> {
  const kept = await ctx.files.beginIntake(file.id);
  const unreadable = encodingRefusal(filePath, inspection);
  if (unreadable)
    return refuse(ctx.files, file.id, inspection.size, refusalOf(filePath, unreadable));
  const reading = readHere(ctx, file.id, filePath, inspection, kept, terms);
  const noting = noteReading(ctx.files, file.id, filePath);
  try {
    await reading.done;
  } catch (err) {
    await reading.end();
    // So that, if requests went out and the rows stay, the counts add up (it commits them).
    await reading.abandon();
    // The turn is kept until the requests in flight are settled and the refusal recorded: the next
    // file would otherwise leave to this one a number whose request then fails, and a refused
    // file's failed rows cannot be retried (it is given again instead). Refusals are rare: the
    // next file then waits with this one's queued requests for a slot (through another file's
    // sending window, at worst).
    // its requests are recorded either way; the refusal is the news
    await reading.sending?.done.catch(() => {});
    // The journal's database gone (restarting, say): the file is read again once it is back.
    // Another node reads it now (this one's claim passed): not refused, it is that node's.
    // Read beside another node's file, it met that file's rows: read again after it (the caller).
    if (
      isDatabaseOutage(err) ||
      hasCode(err, 'E_FILE_CLAIM_LOST') ||
      hasCode(err, 'E_INTAKE_TURN_YIELDED')
    )
      throw err;
    return refuse(ctx.files, file.id, inspection.size, refusalOf(filePath, err));
  } finally {
    noting.stop();
  }
  await reading.finish();
  // Every row is in the journal and every batch planned: status sending, so that the next file's
  // intake counts this one's planned rows (sentBefore.ts), and its turn can start. The requests in
  // flight can wait long for a slot (other files' requests hold them through a sending window);
  // one of them that fails leaves a failed row here, which `smsdrop retry` of this file sends.
  await ctx.files.status(file.id, FILE_STATUS.sending);
  terms.turnOver();
  return { sendingOn: reading.sending?.done ?? Promise.resolve() };
}

type Sending = ReturnType<typeof sendWhileReading>;

/** One intake under way, on this thread or on one of its own, and what sends beside it. */
interface Reading {
  /** Settles once every row is in the journal; rejects with why the file is refused. */
  done: Promise<void>;
  /** Sending while reading, if allowed (mayOverlap). */
  sending: Sending | undefined;
  /**
   * Reading failed: no request starts any more, the ones started are let finish (sending.done),
   * and the reader stops what it started.
   */
  end(): Promise<void>;
  /**
   * Reading is over with every batch released: sending goes on through what is due (see
   * sendWhileReading), and the reader stops what it started.
   */
  finish(): Promise<void>;
  /** Reading stopped early: what the journal holds of the file is kept consistent (committed). */
  abandon(): Promise<void>;
}

/** What reads the rows (a Reading but what sends); `stop` ends what it started beside reading. */
type Reader = Pick<Reading, 'done' | 'abandon'> & { stop(): Promise<void> };

/** Sending while reading, if allowed, and the Reading it makes with the reader. */
function sendingBeside(
  ctx: PipelineContext,
  fileId: number,
  inspection: FileInspection,
  dryRun: boolean,
): { sending: Sending | undefined; reading(reader: Reader): Reading } {
  const readingFailed = new AbortController();
  const sending = mayOverlap(ctx, inspection, dryRun)
    ? sendWhileReading(withStop(ctx, readingFailed.signal), fileId)
    : undefined;
  return {
    sending,
    reading: (reader) => ({
      done: reader.done,
      sending,
      end: async () => {
        readingFailed.abort();
        await reader.stop();
      },
      finish: async () => {
        sending?.finish();
        await reader.stop();
      },
      abandon: () => reader.abandon(),
    }),
  };
}

/** The intake on this thread: the planner writes through this journal's own connection. */
function readHere(
  ctx: PipelineContext,
  fileId: number,
  filePath: string,
  inspection: FileInspection,
  kept: KeptRows,
  { dryRun, sentBefore }: IntakeTerms,
): Reading {
  const beside = sendingBeside(ctx, fileId, inspection, dryRun);
  const { sending } = beside;
  // So that a group's last batch can go once its last row is read, not after the whole file.
  // Counted while intake reads: full batches can go before the count is done.
  const groupCounts = sending
    ? GroupCounts.start(filePath, readOptions(ctx, inspection))
    : undefined;
  const store = ctx.files.planStore(fileId);
  const writer = createRowWriter(store, {
    maxPerRequest: ctx.config.maxPerRequest,
    rowsKept: kept.lines.length,
    fileBytes: inspection.size,
    ...(sending ? { onRelease: sending.released, sendersWaiting: sending.waiting } : {}),
    ...(groupCounts ? { groupCounts } : {}),
    ...(sentBefore ? { sentBefore } : {}),
  });
  const here = { store, writer, sending, groupCounts };
  return beside.reading({
    done: readAll(ctx, here, filePath, inspection, kept),
    stop: async () => {
      await groupCounts?.stop();
    },
    abandon: async () => {
      try {
        await writer.abandon();
      } catch {
        // The journal itself failed (a full disk?): the refusal says what matters.
      }
    },
  });
}

interface Here {
  /** Where the planner writes the file's rows, groups and batches. */
  store: PlanStore;
  writer: RowWriter;
  sending: Sending | undefined;
  groupCounts: GroupCounts | undefined;
}

/** Every row of the file through the planner, giving the requests in flight their turns. */
async function readAll(
  ctx: PipelineContext,
  { store, writer, sending, groupCounts }: Here,
  filePath: string,
  inspection: FileInspection,
  kept: KeptRows,
): Promise<void> {
  const markKept = keptRowMarker(kept);
  for await (const chunk of readRows(filePath, {
    ...readOptions(ctx, inspection),
    onHeader: headerTaker(store, groupCounts),
  })) {
    await writer.write(markKept(chunk));
    if (!sending) continue;
    // Before a batch filled by these rows can go: a file still growing may end in half a row.
    assertUnchanged(filePath, inspection.size);
    await letSendingRun(ctx.send);
  }
  await writer.finish();
  assertUnchanged(filePath, inspection.size);
}

/**
 * Turns of the event loop intake gives the requests in flight after each chunk, at most: the
 * turn their answers arrive in, and the one that journals them with the next attempts (below).
 * Each turn with writes commits the intake's transaction, so more turns would cost CPU.
 */
const TURNS_FOR_SENDING = 3;

/**
 * The parser hands over rows without a turn of the event loop until it needs more bytes (one read
 * of 64 KB: ~2,000 rows), so intake gives the requests in flight turns after each chunk. An
 * answer becomes the next request at the next turn (its outcome and the next attempt are
 * journalled together, then the request leaves; see writeQueue.ts and sendBatch). So intake
 * waits while journal writes are waiting, a few turns at most, so that a steady flow of answers
 * cannot stop the reading.
 */
async function letSendingRun(send: SendStore): Promise<void> {
  for (let turn = 0; turn < TURNS_FOR_SENDING; turn++) {
    await nextTurn();
    if (!send.writesPending()) return;
  }
}

/**
 * Sending may start before the last row is read only when nothing found later can refuse the
 * file: csv-parse, with intake's options, can fail partway only on a double quote, or on a record
 * past its size limit (a line that long). Such a file is read to the end first, so a broken quote
 * or a huge line near its end still leaves nothing sent.
 */
function mayOverlap(ctx: PipelineContext, inspection: FileInspection, dryRun: boolean): boolean {
  return (
    ctx.config.sendDuringIntake &&
    !inspection.quoted &&
    inspection.longestLine <= MAX_RECORD_CHARS &&
    !dryRun
  );
}

function withStop(ctx: PipelineContext, signal: AbortSignal): PipelineContext {
  return {
    ...ctx,
    stopSignal: manyWaitsOn(ctx.stopSignal ? AbortSignal.any([ctx.stopSignal, signal]) : signal),
  };
}

function readOptions(ctx: PipelineContext, inspection: FileInspection): IntakeOptions {
  return {
    encoding: inspection.encoding,
    delimiter: inspection.delimiter,
    bytes: inspection.size,
    allowInternational: ctx.config.allowInternational,
    maxValueChars: ctx.config.maxValueChars,
    decodedExactly: inspection.exact,
    quoted: inspection.quoted,
    ...(ctx.defaultAppId ? { defaultAppId: ctx.defaultAppId } : {}),
    ...(ctx.config.templateId ? { defaultTemplateId: ctx.config.templateId } : {}),
    ...(ctx.config.templates ? { templates: ctx.config.templates } : {}),
  };
}

/**
 * The file is refused. When nothing was sent, its rows are dropped, as if never read. When
 * requests went out while it was read, those stay recorded, and the same bytes given again
 * continue from there (FileStore.beginIntake): dropping them would send the same numbers twice.
 */
export async function refuse(
  files: FileStore,
  fileId: number,
  size: number,
  { code, reason }: Refusal,
  sentWhen = 'while the file was being read',
): Promise<Refusal> {
  const refused = await files.refuse(fileId, (sent) =>
    sent === 0
      ? reason
      : `${reason}. But ${sent} request(s) had already gone out ${sentWhen}: the result file names who got them. ` +
        `Giving smsdrop the file again, as it was or once complete, sends only the rest (a file that begins with the same ${size} bytes continues this one); ` +
        'a copy saved otherwise is a new file: its rows that went out are not sent again within the repeat window (SMSDROP_REPEAT_WINDOW), but a row whose values changed is a new message and is sent',
  );
  return { code, reason: refused.reason };
}

/**
 * The refusal an error makes, told apart by its code (userError maps SQLite's and the system's).
 */
export function refusalOf(filePath: string, err: unknown): Refusal {
  const known = userError(err);
  const e = err as NodeJS.ErrnoException;
  // The journal's own failures (a full disk under it, any SQLite error) are not the file's fault:
  // say which it was.
  if (known && isMachineCode(known.code))
    return {
      code: known.code,
      reason: `${filePath}: the journal could not record it: ${known.message}`,
    };
  if (errorCode(err)?.startsWith('SQLITE_'))
    return {
      code: 'E_JOURNAL_WRITE',
      reason: `${filePath}: the journal could not record it: ${e.code} ${e.message}`,
    };
  if (known) return { code: known.code, reason: known.message };
  return {
    code: 'E_FILE_UNREADABLE',
    reason: `${filePath}: cannot read the file: ${e.code ? `${e.code} ` : ''}${e.message ?? String(err)}`,
  };
}
