// Preloaded (node --expose-gc --import) by test/daemon/gc.test.ts: a full garbage collection every
// 20 ms, so native objects (SQLite statements) are collected while the process works and while it
// sits idle, not only at exit. Every other one is asynchronous: V8 runs it from a task of the event
// loop, outside any JavaScript (no context entered), as an idle collection runs.
if (typeof globalThis.gc !== 'function') throw new Error('gcPreload.mjs needs node --expose-gc');
let collections = 0;
setInterval(() => {
  collections += 1;
  if (collections % 2 === 0) globalThis.gc({ type: 'major', execution: 'sync' });
  else void globalThis.gc({ type: 'major', execution: 'async' });
}, 20).unref();
