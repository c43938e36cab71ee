// Who carries on a file this process stops sending, when several processes share one PostgreSQL
// journal: the daemons of the other nodes send the batches of every file read in whole that no live
// node holds (daemon/helpOtherNodes.ts), so the rows a stopped node or `send` leaves go out from
// there, not at its next start. A file still being read waits for its reader: its rows are not all
// in the journal.
import os from 'node:os';
import type { Config } from '../config/index.js';
import { FILE_STATUS } from '../ports/states.js';
import type { PipelineContext } from './context.js';

/** As the PostgreSQL journal registers this process (SMSDROP_NODE_ID, or host and pid). */
function thisNode(config: Pick<Config, 'nodeId'>): string {
  return config.nodeId ?? `${os.hostname()}:${process.pid}`;
}

const DEFAULT_LEASE_MS = 30_000;

/**
 * The other nodes seen within a lease, which send this file's rows now that this process stops;
 * none on SQLite, for a file not read in whole, or when the journal cannot say.
 */
export async function nodesCarryingOn(
  ctx: Pick<PipelineContext, 'config' | 'reads'>,
  fileStatus: string | undefined,
): Promise<string[]> {
  if (!ctx.config.databaseUrl || fileStatus !== FILE_STATUS.sending) return [];
  try {
    const seen = await ctx.reads.nodes(ctx.config.lease?.ms ?? DEFAULT_LEASE_MS);
    const self = thisNode(ctx.config);
    return seen.map((n) => n.id).filter((id) => id !== self);
  } catch {
    return []; // the journal does not answer: nothing to promise
  }
}
