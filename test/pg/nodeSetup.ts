// What the cluster tests with real daemons share: a simulator recording each message it accepted,
// and the settings of daemon nodes on one PostgreSQL journal sending to it.
import fs from 'node:fs';
import { readRecordFile } from '../../src/simulator/record.js';
import { cleanEnv, CREDENTIALS, type Proc, startProcess } from '../daemon/helpers.js';

export interface RecordingProvider {
  process: Proc;
  url: string;
  recordFile: string;
  /** How many messages it accepted so far. */
  sent: () => number;
  records: () => ReturnType<typeof readRecordFile>;
}

/**
 * `smsdrop simulate --record recordFile`, answering after `latencyMs` (long enough that a file
 * takes seconds to send, so a kill or a stop lands mid-file); its process joins `procs`.
 */
export async function recordingSimulator(
  procs: Proc[],
  recordFile: string,
  latencyMs: number,
): Promise<RecordingProvider> {
  const sim = startProcess(
    ['simulate', '--record', recordFile, '--latency-ms', String(latencyMs)],
    cleanEnv(CREDENTIALS),
  );
  procs.push(sim);
  const url = /listening on (\S+)/.exec(await sim.waitFor(/listening on (\S+)/))![1]!;
  return {
    process: sim,
    url,
    recordFile,
    sent: () => (fs.existsSync(recordFile) ? readRecordFile(recordFile).length : 0),
    records: () => readRecordFile(recordFile),
  };
}

/** The settings of node `node` on the journal at `databaseUrl`, sending to `provider`. */
export function nodeSettings(
  provider: RecordingProvider,
  databaseUrl: string,
  settings: Record<string, string>,
): (node: string) => Record<string, string> {
  return (node) => ({
    ...CREDENTIALS,
    SMSDROP_BASE_URL: provider.url,
    SMSDROP_DATABASE_URL: databaseUrl,
    SMSDROP_NODE_ID: node,
    ...settings,
  });
}
