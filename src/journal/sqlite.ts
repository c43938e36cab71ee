// better-sqlite3 in the build that fits the Node running it. Both are optional dependencies:
//   - `better-sqlite3` (13, Node-API, prebuilt in its package) on Node 22 and later; its engines
//     (>=22) make npm skip it on Node 20, where it does not run;
//   - `better-sqlite3-node20` (an npm alias of better-sqlite3 12, built from source) on Node 20.
//     npm installs it on later Nodes too, but it is never loaded there: 12 is built on
//     node::ObjectWrap, which aborts the process (SIGABRT, at exit or when a collection frees a
//     statement) once compiled against Node 24.19's headers or later (nodejs/node#65446).
// Both have the same API (typed by @types/better-sqlite3): import Database from here, not from
// 'better-sqlite3'.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { SmsdropError } from '../errors.js';

/** The package holding the build for a Node of this major version. */
export function sqlitePackageFor(nodeMajor: number): string {
  return nodeMajor >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20';
}

function load(): typeof BetterSqlite3 {
  const name = sqlitePackageFor(Number(process.versions.node.split('.')[0]));
  try {
    return createRequire(import.meta.url)(name) as typeof BetterSqlite3;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new SmsdropError(
      'E_SQLITE_NOT_INSTALLED',
      `SQLite for Node ${process.versions.node} (the package ${name}) does not load: ${reason}; ` +
        'install smsdrop again (npm ci) with this Node',
    );
  }
}

let build: typeof BetterSqlite3 | undefined;

/**
 * better-sqlite3's Database class, loaded at the first `new Database(...)`: a build that is missing
 * is then a set-up error with its code, not a failed import.
 */
const Database = function Database(...args: ConstructorParameters<typeof BetterSqlite3>) {
  build ??= load();
  return new build(...args);
} as unknown as typeof BetterSqlite3;

// The types that `import Database from 'better-sqlite3'` offers beside the class, under the same
// name (a namespace of types only, merged with the value).
// eslint-disable-next-line @typescript-eslint/no-namespace
declare namespace Database {
  export type Database = BetterSqlite3.Database;
  export type Statement<
    BindParameters extends unknown[] = unknown[],
    Result = unknown,
  > = BetterSqlite3.Statement<BindParameters, Result>;
  export type PragmaOptions = BetterSqlite3.PragmaOptions;
  export type Options = BetterSqlite3.Options;
  export type RunResult = BetterSqlite3.RunResult;
}

/**
 * How long a commit waits for the disk, on each connection to a journal's files alike (the
 * journal's, its intents', the checkpoints' thread's): 'full' also survives a power loss.
 */
export function setSynchronous(connection: BetterSqlite3.Database, level: 'normal' | 'full'): void {
  connection.pragma(`synchronous = ${level === 'full' ? 'FULL' : 'NORMAL'}`);
}

export default Database;
