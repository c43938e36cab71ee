// `smsdrop run`: the daemon. Takes the data directory's lock, resumes the files a previous run left
// in processing/, then watches inbox/ and sends every CSV dropped there, a few files at a time,
// until SIGTERM or SIGINT. Shutdown is a drain: no new file or request starts, requests in flight
// get up to graceMs to finish and be journalled, then the journal is closed and the lock released
// (last in, first out). A second signal exits at once; what was in flight is then in doubt and
// resolved from the journal at the next start.
import path from 'node:path';
import type { Config } from '../config/index.js';
import type { Awaitable, DaemonStateUpdate } from '../ports/index.js';
import { checkDataDir } from '../datadir/dataDir.js';
import { errorCode } from '../errors.js';
import { closeLogger, createLogger, type Logger } from '../log/logger.js';
import { openRuntime, type Runtime, type RuntimeOptions } from '../pipeline/runtime.js';
import { describeStatusCode } from '../provider/codes.js';
import { filesOldestFirst, type Folders, prepareFolders } from './folders.js';
import { describeError } from '../log/redact.js';
import { describeJournal } from '../journals/index.js';
import type { FileLife } from './fileLife.js';
import { helpOtherNodes } from './helpOtherNodes.js';
import { handleFile, takeFile } from './lifecycle.js';
import { createFilePool, type FilePool } from './pool.js';
import { releaseMemoryWhenIdle } from './releaseMemory.js';
import { startProgress } from './progress.js';
import { HttpSetupError } from '../http/address.js';
import {
  checkSurfaceSettings,
  type EarlyHttp,
  earlyHttp,
  type OperatorSurface,
  startOperatorSurface,
} from './surface.js';
import { type InboxWatcher, watchInbox } from './watch.js';
import { listenForStop, type StopSignals } from './signals.js';
import { DAEMON_ROLE, openWhenCommandsEnd } from './lockWait.js';
import { endWork } from './endWork.js';
import { schedulePruning } from '../retention/schedule.js';

/**
 * How the daemon ended; the command line turns it into the exit status:
 * - stopped: drained, every file filed or left in processing/ to resume, journal closed;
 * - incomplete: the grace period ran over with requests in flight, or the journal failed;
 * - setup-failed: a set-up mistake of the operator surface, said in one line;
 * - forced: a second signal during the drain, to go at once.
 */
export type DaemonEnd = 'stopped' | 'incomplete' | 'setup-failed' | 'forced';

/** Runs until a signal. */
export async function runDaemon(config: Config): Promise<DaemonEnd> {
  // before its folders are made: a path under a file is one line, not a stack
  checkDataDir(config.dataDir);
  const folders = prepareFolders(config.dataDir);
  const log = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    logDir: folders.logs,
  });
  try {
    checkSurfaceSettings(config);
  } catch (err) {
    return await setupFailed(err, log);
  }
  const early = earlyHttp(config, log);
  const runtime = await openDaemonRuntime(config, log, early);
  let surface: OperatorSurface;
  try {
    surface = await startOperatorSurface(config, runtime, log, early);
  } catch (err) {
    await early.close();
    await runtime.close().catch(() => {});
    return await setupFailed(err, log);
  }
  // before any line a supervisor or test waits for
  const signals = listenForStop(runtime, log);
  // A second signal ends it at once, whatever the drain is waiting for.
  return await Promise.race([
    serveUntilStopped(config, folders, runtime, log, surface, signals),
    signals.forced,
  ]);
}

async function openDaemonRuntime(config: Config, log: Logger, early: EarlyHttp): Promise<Runtime> {
  const options: RuntimeOptions = {
    role: DAEMON_ROLE,
    daemon: true,
    // A node started while its PostgreSQL restarts waits for it (as a running node does), its
    // health check answering 503 meanwhile.
    waitForDatabaseMs: 60_000,
    onDatabaseWait: () => early.listen(),
    log,
    // So that `smsdrop status` says why nothing is sent (called only once requests wait, so after
    // runtime is set).
    windowEvents: {
      onClosed: (closed) =>
        recordPause(
          runtime,
          {
            paused: `outside the sending window ${closed.window}; requests start at ${closed.opensAt}`,
          },
          log,
        ),
      onOpened: () => recordPause(runtime, { paused: null }, log),
    },
    onMessageWindow: (waiting) => recordWaiting(runtime, waiting, log),
  };
  let runtime: Runtime;
  try {
    runtime = await openWhenCommandsEnd(() => openRuntime(config, options), log);
    return runtime;
  } catch (err) {
    // The command line says what it was: one line and exit 2 for a setting, the machine, or
    // another daemon holding the data directory (E_DATA_DIR_LOCKED), which pm2 does not restart.
    await early.close();
    await closeLogger(log);
    throw err;
  }
}

/** A set-up mistake of the operator surface: one line, exit 2 (pm2 does not restart it). */
async function setupFailed(err: unknown, log: Logger): Promise<DaemonEnd> {
  if (!(err instanceof HttpSetupError)) throw err;
  log.error(`smsdrop run: ${err.message} (${err.code})`);
  await closeLogger(log);
  return 'setup-failed';
}

async function serveUntilStopped(
  config: Config,
  folders: Folders,
  runtime: Runtime,
  log: Logger,
  surface: OperatorSurface,
  signals: StopSignals,
): Promise<DaemonEnd> {
  try {
    return await serve(config, folders, runtime, log, surface, signals);
  } catch (err) {
    await surface.close().catch(() => {});
    // release the journal and the lock before the error exits
    await runtime.close().catch(() => {});
    throw err;
  } finally {
    await closeLogger(log);
  }
}

async function serve(
  config: Config,
  folders: Folders,
  runtime: Runtime,
  log: Logger,
  surface: OperatorSurface,
  signals: StopSignals,
): Promise<DaemonEnd> {
  announce(config, folders, runtime, log);
  recordPause(runtime, { paused: null }, log);
  recordWaiting(runtime, null, log);
  const life: FileLife = {
    folders,
    ctx: runtime.context,
    files: runtime.journal.files,
    outbox: runtime.journal.outbox,
    log,
    active: new Map(),
    busy: new Map(),
    cooldown: pauseCooldown(config, runtime, log),
    fresh: new Set(),
  };
  const pool = createFilePool(
    config.maxFilesInProgress,
    (name) => handleFile(life, name),
    (name, err) => log.error(`${name}: unexpected error: ${describeError(err)}`),
    () => releaseMemoryWhenIdle(() => pool.running + pool.queued > 0),
  );
  const progress = startProgress(
    runtime.context,
    runtime.journal.reads,
    log,
    config.progressIntervalMs,
    () => [...life.active.values()],
  );
  // Files a previous run left in processing/ go first, then what waits in inbox/.
  for (const name of filesOldestFirst(folders.processing)) {
    log.info(`resuming ${name} from processing/`, { event: 'file-resumed', file: name });
    pool.add(name);
  }
  const watcher = await watchForFiles(config, folders, runtime, life, log, (name) =>
    pool.add(name),
  );
  surface.setWatching(true);
  sayWatching(config, folders, runtime, log);
  // Ended files older than SMSDROP_KEEP go now and once a day, step by step between requests.
  const pruning = schedulePruning(config, runtime, log);
  const helping = helpOtherNodes(runtime.context, log);
  const signal = await signals.requested;
  pool.stop();
  await watcher.close();
  surface.setWatching(false);
  const [drained] = await Promise.all([endWork(config, pool, signal, log), helping.stop()]);
  progress.stop();
  await pruning.stop(); // it stops between two steps: none holds the journal after this
  await surface.close();
  // no longer true once this daemon stops, whoever holds the journal next
  recordWaiting(runtime, null, log);
  return await closeDown(config, runtime, log, signals, drained ? undefined : pool);
}

/**
 * After the drain: the journal is closed only when nothing is in flight any more (`stillSending`:
 * the pool, when the grace period ran over first).
 */
async function closeDown(
  config: Config,
  runtime: Runtime,
  log: Logger,
  signals: StopSignals,
  stillSending: FilePool | undefined,
): Promise<DaemonEnd> {
  if (stillSending) {
    log.warn(
      `grace period of ${config.graceMs} ms over with ${stillSending.running} file(s) still sending: requests in flight are in doubt and are settled from the journal at the next start`,
    );
    return 'incomplete';
  }
  signals.done();
  await runtime.close();
  log.info('stopped cleanly: journal closed, lock released');
  // Not a clean stop for a supervisor: pm2 starts it again, and the start settles what was lost.
  return errorCode(runtime.stop.signal.reason) === 'E_JOURNAL_LOST' ? 'incomplete' : 'stopped';
}

/** Watches inbox/: each stable file is taken into processing/ and handed to `onTaken`. */
function watchForFiles(
  config: Config,
  folders: Folders,
  runtime: Runtime,
  life: FileLife,
  log: Logger,
  onTaken: (name: string) => void,
): Promise<InboxWatcher> {
  return watchInbox(folders.inbox, {
    stabilityMs: config.stabilityMs,
    rescanMs: config.inboxRescanMs,
    pollMs: config.inboxPollMs,
    onFile: (file, foundBy) => {
      if (runtime.stop.signal.aborted) return; // left in inbox/ for the next start
      if (foundBy === 'rescan') foundByRescan(config, file, log);
      const name = takeFile(life, file);
      if (name) onTaken(name);
    },
    onTailWait: (file, ms) =>
      log.info(
        `${path.basename(file)} does not end with a line break: it is taken once unchanged for ${ms} ms more, in case it is still being copied`,
        { event: 'file-tail-wait', dropped: path.basename(file) },
      ),
    onError: (err) => log.error(`watching inbox/: ${describeError(err)}`),
    onNotAFile: (entry, what) =>
      log.warn(
        `inbox/${path.basename(entry)} is ${what}: only files are taken; it is left where it is (drop the CSV file itself into inbox/)`,
        { event: 'inbox-not-a-file', entry: path.basename(entry) },
      ),
  });
}

function sayWatching(config: Config, folders: Folders, runtime: Runtime, log: Logger): void {
  if (!runtime.stop.signal.aborted)
    log.info(
      `watching ${folders.inbox} (a file is taken once unchanged for ${config.stabilityMs} ms; ${config.inboxPollMs > 0 ? `polled every ${config.inboxPollMs} ms` : 'file-system events'}, rescanned every ${config.inboxRescanMs} ms)`,
    );
}

/** A file the watcher's events did not announce: said, so that missed events are seen. */
function foundByRescan(config: Config, file: string, log: Logger): void {
  log.info(
    `${path.basename(file)} was found by the rescan of inbox/ (every ${config.inboxRescanMs} ms): no file-system event announced it${config.inboxPollMs > 0 ? '' : '; if this happens often, inbox/ may be a network share: see SMSDROP_INBOX_POLL_MS'}`,
    { event: 'file-found-by-rescan', dropped: path.basename(file) },
  );
}

function announce(config: Config, folders: Folders, runtime: Runtime, log: Logger): void {
  log.info(
    `smsdrop run: pid ${process.pid}, data directory ${folders.root}; ${describeJournal(config)}; up to ${config.maxFilesInProgress} files at once, ${config.concurrency} requests in flight`,
  );
  if (runtime.context.window)
    log.info(`requests start only within the sending window ${runtime.context.window.text}`);
  // Without credentials nothing may look like a real send: say it at warn level, every start.
  if (runtime.provider.simulator) log.warn(`sending to ${runtime.provider.describe}`);
  else log.info(`sending to ${runtime.provider.describe}`);
}

/**
 * After an account-fatal answer every file's sending stops (the shared AccountPause). One cooldown
 * for all of them: the operator is told once what to fix, and sending is tried again afterwards.
 */
function pauseCooldown(config: Config, runtime: Runtime, log: Logger): () => Promise<void> {
  let cooling: Promise<void> | undefined;
  return () =>
    (cooling ??= (async () => {
      const { pause } = runtime.context;
      const reason = pause.reason ?? 'account problem';
      const statusCode = pause.statusCode;
      const code = pause.code ?? 'E_PROVIDER_ACCOUNT';
      const explained = `${reason}${statusCode ? ` (${describeStatusCode(statusCode)})` : ''}`;
      const local = pause.local;
      if (local) await pausedAlone(runtime, `${code}: ${explained}`, log);
      else recordPause(runtime, { paused: explained, code }, log);
      log.error(
        `sending paused ${local ? 'on this node (the other nodes go on with its batches)' : 'for the account'}: ${code}: ${explained}. Fix it; files stay in processing/ and sending is tried again in ${Math.round(config.pauseCooldownMs / 1000)} s. New files are still read in.`,
        { event: 'account-paused', reason, code, ...(local ? { node: 'this' } : {}) },
      );
      await pause.cooldown(config.pauseCooldownMs, runtime.stop.signal); // or the pause lifts
      cooling = undefined;
      if (runtime.stop.signal.aborted) return;
      runtime.context.pause.resume();
      // Resumed (in the journal, for `smsdrop status` and the sending.resumed webhook) once an
      // answer lets sending go on: a cooldown that finds the provider still down changes nothing.
      runtime.context.pause.afterAnswer(() => {
        if (local) recordWaiting(runtime, null, log);
        else recordPause(runtime, { paused: null }, log);
        log.info('the provider answers again: sending goes on', { event: 'sending-resumed' });
      });
      log.info('cooldown over: trying to send again', { event: 'account-resumed' });
    })());
}

/**
 * A pause of this node alone (the provider does not answer it; the other nodes send on): said
 * as what this node's requests wait for, not as the account's pause, and its claims handed back.
 */
async function pausedAlone(runtime: Runtime, why: string, log: Logger): Promise<void> {
  recordWaiting(runtime, `sending paused on this node: ${why}`, log);
  await runtime.journal.send.handBack?.().catch((err: unknown) => {
    log.warn(`cannot hand this node's batches to the other nodes: ${describeError(err)}`);
  });
}

/**
 * Keeps daemon_state current so `smsdrop status` (which only reads the journal) can show the pause.
 */
function recordPause(runtime: Runtime, state: DaemonStateUpdate, log: Logger): void {
  warnIfFails(
    () => runtime.journal.daemon.setPause(state),
    (err) => log.warn(`cannot record the pause state in the journal: ${describeError(err)}`),
  );
}

/**
 * Keeps daemon_state current so `smsdrop status` can say what requests wait for (a message window).
 */
function recordWaiting(runtime: Runtime, waiting: string | null, log: Logger): void {
  warnIfFails(
    () => runtime.journal.daemon.setWaiting(waiting),
    (err) => log.warn(`cannot record the waiting state in the journal: ${describeError(err)}`),
  );
}

/** A write that only informs: written now when it can be, and a failure is a warning. */
function warnIfFails(write: () => Awaitable<void>, warn: (err: unknown) => void): void {
  try {
    const written = write();
    if (written instanceof Promise) written.catch(warn);
  } catch (err) {
    warn(err);
  }
}
