// The connections of the journal's pools. Each is set up before its first statement
// (setUpConnection, pg-pool's onConnect, which the pool awaits before it hands the connection out:
// a statement sent while another still runs is what node-postgres deprecates), and prepares each
// statement that has parameters once, under a name its text gives, running it by that name from
// then on. PostgreSQL then parses and analyses a text once a connection, not on every call: a
// request's writes, the claims and the intake's look-ups repeat the same few texts thousands of
// times a minute (docs/postgres.md, "Prepared statements").
import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * Every statement of the journal reads or writes a bounded set (a page, a chunk, a file's batches)
 * through indexes, in milliseconds. Once its tables hold about a million rows the planner starts
 * planning such statements with parallel workers, each started for the one statement: a page of a
 * result file then waits tens of milliseconds for work of two (docs/postgres.md, "Parallel
 * query"). A `SET`, not the startup packet's `options`, which PgBouncer refuses.
 */
export const NO_PARALLEL_QUERY = 'SET max_parallel_workers_per_gather = 0';

/** The name a statement's text is prepared under (PostgreSQL's names: 63 bytes at most). */
export function statementName(text: string): string {
  return `smsdrop_${createHash('sha1').update(text).digest('base64url')}`;
}

/** A query given as an object (`{ text, values, rowMode }`) that names no statement. */
interface UnnamedQuery {
  text: string;
  values: unknown[];
  name?: undefined;
  submit?: undefined;
}

function isUnnamedQuery(config: unknown): config is UnnamedQuery {
  if (typeof config !== 'object' || config === null) return false;
  const q = config as Partial<Record<keyof UnnamedQuery, unknown>>;
  return typeof q.text === 'string' && Array.isArray(q.values) && !q.name && !q.submit;
}

/**
 * A journal connection: a statement with parameters (`query(text, values)`, or an object with
 * `text` and `values`) is prepared once, then run by name.
 */
export class JournalClient extends pg.Client {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's overloads, passed through
  override query(...args: any[]): any {
    const [config, values, ...rest] = args as unknown[];
    const call = super.query.bind(this) as (...passed: unknown[]) => unknown;
    if (typeof config === 'string' && Array.isArray(values))
      return call({ name: statementName(config), text: config, values }, ...rest);
    if (isUnnamedQuery(config))
      return call({ ...config, name: statementName(config.text) }, values, ...rest);
    return call(...(args as unknown[]));
  }
}

/** What each new connection runs before the pool hands it out (pg-pool's onConnect). */
export async function setUpConnection(client: pg.ClientBase): Promise<void> {
  // A connection the server ends (a restart, say) emits 'error' on its client, idle or checked
  // out: the query under way, if any, fails and says so; unheard, the event ends the process.
  client.on('error', () => undefined);
  await client.query(NO_PARALLEL_QUERY);
}
