// How every port verb answers: a plain value when the store has it at once (SQLite), a promise
// when it has to wait for it (a server, or a write that must be on disk first). Callers always
// `await`; on a plain value that costs one microtask, and the hot verbs work on pages, not rows.

/** A value, or the promise of one. */
export type Awaitable<T> = T | Promise<T>;

/** Rows a page at a time, read with `for await` (one microtask per page, not per row). */
export type Pages<T> = Iterable<readonly T[]> | AsyncIterable<readonly T[]>;
