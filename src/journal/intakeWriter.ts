// The journal's two sides of an intake written by a thread of its own (pipeline/intakeThread.ts):
// the sending thread's link (where the journal is, the gate its queued writes pass, the batches
// to send first), and the intake thread's own connection with the planner's store on it.
import type { RepeatWindow } from '../config/settings/durations.js';
import type { IntakeWriterLink, WriteGate } from '../ports/intakeWriter.js';
import type { PlanStore, SentBeforeLookup } from '../ports/plan.js';
import { sendFirst } from './sendMoves.js';
import { commitBulk } from './bulk.js';
import { insideOf, type Journal } from './connection.js';
import { openJournal } from './open.js';
import { JournalPlanStore } from './planStore.js';
import { sentBeforeLookup } from './sentBefore.js';

/** The link of the sending thread's journal `db`. */
export function intakeWriterLink(db: Journal): IntakeWriterLink {
  return {
    location: db.name,
    shareWrites(gate: WriteGate) {
      // Nothing of this connection may stay open across the other thread's writes.
      commitBulk(db);
      insideOf(db).writeGate = gate;
      return () => {
        if (insideOf(db).writeGate === gate) insideOf(db).writeGate = undefined;
      };
    },
    sendFirst: (batchIds) => sendFirst(db, batchIds),
  };
}

/** The intake thread's side: its connection, the file's store on it, the repeat look-up. */
export interface IntakeWriter {
  store: PlanStore;
  sentBefore: SentBeforeLookup | undefined;
  /** Batches the planner asked to go first: the sending thread sends them first. */
  takeSendFirst(): number[];
  /** Commits what is open. */
  commit(): void;
  close(): void;
}

/** The store of a planner on its own thread: its batches to send first go to the sender's side. */
class ThreadPlanStore extends JournalPlanStore {
  readonly firstToSend: number[] = [];
  override sendFirst(batchIds: Iterable<number>): void {
    for (const id of batchIds) this.firstToSend.push(id);
  }
}

/**
 * Opens the journal at `location` (IntakeWriterLink.location) on this thread, for file `fileId`'s
 * intake. `window`: the repeat window, when other files' rows are to be asked (none: --resend).
 */
export function openIntakeWriter(
  location: string,
  fileId: number,
  options: { synchronous: 'normal' | 'full'; window: RepeatWindow | undefined },
): IntakeWriter {
  const db = openJournal(location, { synchronous: options.synchronous });
  try {
    const store = new ThreadPlanStore(db, fileId);
    const sentBefore = options.window ? sentBeforeLookup(db, fileId, options.window) : undefined;
    return {
      store,
      sentBefore,
      takeSendFirst: () => store.firstToSend.splice(0),
      commit: () => commitBulk(db),
      close: () => {
        try {
          commitBulk(db);
        } finally {
          db.close();
        }
      },
    };
  } catch (err) {
    db.close();
    throw err;
  }
}
