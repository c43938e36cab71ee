// Moved: the data directory's lock is src/datadir/lock.ts.
export * from '../datadir/lock.js';
