// A child of checkpoints.test.ts: starts the journal's thread and stops it again, 40 times, each
// time a random wait of up to `process.argv[3]` ms after the thread came online, so that some
// stops come while it still starts (loads SQLite's addon). Prints "ok" if the process lived.
import { once } from 'node:events';
import path from 'node:path';
import { startCheckpoints, stopCheckpoints } from '../../src/journal/checkpoints.js';
import { insideOf } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';

const db = openJournal(path.join(process.argv[2]!, 'journal.sqlite'));
const waitMs = Number(process.argv[3]);
for (let i = 0; i < 40; i++) {
  startCheckpoints(db, 'normal');
  // From when it runs JavaScript: it then loads its modules, SQLite's addon among them.
  await once(insideOf(db).checkpoints!.worker, 'online');
  await new Promise((resolve) => setTimeout(resolve, Math.random() * waitMs));
  await stopCheckpoints(db);
}
db.close();
process.stdout.write('ok\n');
