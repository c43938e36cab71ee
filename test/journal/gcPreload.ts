// Preloaded (node --expose-gc --import tsx --import) by test/daemon/gc.test.ts into the daemon and
// `send`; it stands beside the SQLite journal's own tests, as what it holds is that journal's
// native build. It leaves 3,000 prepared statements of the SQLite build this process loads
// (src/journal/sqlite.ts) for the garbage collector, and then collects every 20 ms, every other
// time asynchronously: V8 runs that one from a task of the event loop, outside any JavaScript (no
// context entered), as its idle and background collections run. smsdrop keeps its own statements
// (Journal.statement), so without these the few it drops may all go in collections run from
// JavaScript, and a build that aborts when one is collected outside JavaScript
// (better-sqlite3 12 built against Node 24.19+ headers, nodejs/node#65446) could pass unseen.
import Database from '../../src/journal/sqlite.js';

const collect = globalThis.gc;
if (collect === undefined) throw new Error('gcPreload.ts needs node --expose-gc');
const db = new Database(':memory:');
for (let i = 0; i < 3000; i++) db.prepare(`SELECT ${i}`);

let collections = 0;
setInterval(() => {
  collections += 1;
  if (collections % 2 === 0) collect({ type: 'major', execution: 'sync' });
  else void collect({ type: 'major', execution: 'async' });
}, 20).unref();
