// better-sqlite3 in the build that fits the Node running it. Two builds are installed, both as
// optional dependencies that npm skips where their `engines` do not match:
//   - `better-sqlite3` (13, Node-API, prebuilt in its package) on Node 22 and later;
//   - `better-sqlite3-node20` (an npm alias of better-sqlite3 12) on Node 20, where 13 does not
//     run. 12 is built on node::ObjectWrap, which aborts the process (SIGABRT, at exit or when an
//     idle collection frees a statement) once compiled against Node 24.19's headers or later
//     (nodejs/node#65446), so it is never loaded on Node 22 and later even when npm installed it.
// Both have the same API (typed by @types/better-sqlite3): import Database from here, not from
// 'better-sqlite3'.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/** The package holding the build for a Node of this major version. */
export function sqlitePackageFor(nodeMajor: number): string {
  return nodeMajor >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20';
}

function load(): typeof BetterSqlite3 {
  const major = Number(process.versions.node.split('.')[0]);
  const name = sqlitePackageFor(major);
  try {
    return createRequire(import.meta.url)(name) as typeof BetterSqlite3;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw Object.assign(
      new Error(
        `SQLite for Node ${process.versions.node} (package ${name}) does not load: ${reason}; ` +
          'run npm ci with this Node',
      ),
      { code: 'E_SQLITE_NOT_INSTALLED' },
    );
  }
}

const Database: typeof BetterSqlite3 = load();

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

export default Database;
