// An operator's control of a file (ports/control.ts) on the SQLite journal: the rules of
// src/journalRules/control.ts, written through the write queue (in the daemon, the turn's
// transaction; in a command's own connection, a transaction of its own), committed in the journal
// itself before the command returns. A command's connection first puts back the attempts a dead
// daemon left only in its intents (intents.ts, putBackOrphanedIntents): a batch whose request may
// have left is never taken for one still planned.
import { applyControl, cancelPlanned, controlOf } from '../journalRules/control.js';
import type { ControlStore } from '../ports/control.js';
import { insideOf, type Journal } from './connection.js';
import { putBackOrphanedIntents } from './intents.js';
import { runRule, SQLITE_RULES } from './rules.js';
import { nowIso } from './sql.js';
import { writeQueueFor } from './writeQueue.js';

export function sqliteControl(db: Journal): ControlStore {
  const write = <T>(work: () => T): Promise<T> =>
    writeQueueFor(db).run(() => {
      putBackOrphanedIntents(db);
      return work();
    });
  return {
    command: (fileId, command) =>
      write(() =>
        runRule(
          db,
          applyControl(SQLITE_RULES, insideOf(db).webhookTargets, fileId, command, nowIso()),
        ),
      ),
    control: (fileId) => runRule(db, controlOf(fileId)),
    cancelLeftovers: (fileId) =>
      write(() => runRule(db, cancelPlanned(SQLITE_RULES, fileId, nowIso()))),
  };
}
