// Preloaded (node --expose-gc --import) by test/daemon/gc.test.ts: a full garbage collection every
// 20 ms, so native objects (SQLite statements) are collected while the process works and while it
// sits idle, not only at exit.
if (typeof globalThis.gc !== 'function') throw new Error('gcPreload.mjs needs node --expose-gc');
setInterval(() => globalThis.gc(), 20).unref();
