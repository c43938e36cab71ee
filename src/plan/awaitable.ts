// Chaining Awaitable values without turning plain ones into promises: on a store that answers at
// once (SQLite) the planner stays synchronous, and its callers' `await` costs one microtask.
import type { Awaitable } from '../ports/awaitable.js';

export function isPromise<T>(value: Awaitable<T>): value is Promise<T> {
  return value instanceof Promise;
}

/** `next` of `value`: at once when `value` is plain, once it resolves when it is a promise. */
export function andThen<T, U>(
  value: Awaitable<T>,
  next: (resolved: T) => Awaitable<U>,
): Awaitable<U> {
  return isPromise(value) ? value.then(next) : next(value);
}

/** Both done: plain when neither is a promise. */
export function both(a: Awaitable<void>, b: Awaitable<void>): Awaitable<void> {
  if (!isPromise(a) && !isPromise(b)) return undefined;
  return Promise.all([a, b]).then(() => undefined);
}

/**
 * `run`, then `last` whatever happened, as try/finally: an error of `last` wins over `run`'s.
 */
export function andFinally<T>(run: () => Awaitable<T>, last: () => Awaitable<void>): Awaitable<T> {
  let result: Awaitable<T>;
  try {
    result = run();
  } catch (error) {
    return andThen(last(), () => {
      throw error;
    });
  }
  if (!isPromise(result)) return andThen(last(), () => result);
  return result.then(
    (value) => andThen(last(), () => value),
    (error: unknown) =>
      andThen(last(), () => {
        throw error;
      }),
  );
}
