// What every step of a file's run is given: the journal's ports it reads and writes, and what
// this process shares among its files (turns, the files in progress, the result spools). The
// steps (intakeRun.ts, resume.ts) and index.ts, which runs them, all read it from here.
import type { FileStore, ReadStore, SendStore } from '../ports/index.js';
import type { ResultSpools } from '../results/spool.js';
import type { SendContext } from '../send/index.js';
import type { FilesInProgress } from './inProgress.js';
import type { IntakeTurns } from './turns.js';

export interface PipelineContext extends SendContext {
  /** The journal's file records, and what it reads (ports). */
  files: FileStore;
  reads: ReadStore;
  /** The sender's writes (ports): intake asks whether they are waiting. */
  send: SendStore;
  /** appId for files without an appId column. */
  defaultAppId: string | undefined;
  /**
   * The provider and account requests go to (providerIdentity), recorded with each file planned;
   * none: not recorded or checked (a dry run).
   */
  provider?: string;
  /** Whose turn it is to read a file into this journal. */
  turns: IntakeTurns;
  /** The files being processed now, by journal record. */
  inProgress: FilesInProgress;
  /** The process's result spools (a dry run has none: nothing to write ahead). */
  spools?: ResultSpools;
}
