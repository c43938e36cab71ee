// What a sending process holds: the journal, the provider connection, one request-concurrency
// limit and one pacing limiter shared by every file, the account pause switch, and the logger.
// Released last-in first-out by close(), which may be called twice.
import pLimit, { type LimitFunction } from 'p-limit';
import { withCode } from '../errors.js';
import type { Config } from '../config/index.js';
import type { JournalHandle } from '../ports/index.js';
import { JournalLostError } from '../journals/index.js';
import { openWriter } from '../journals/index.js';
import { connectProvider, type ProviderConnection } from '../provider/connect.js';
import type { AccountSlots } from '../ports/account.js';
import { AdaptiveConcurrency } from '../send/concurrency.js';
import { accountRateLimiter } from '../send/accountRate.js';
import {
  AccountPause,
  createRateLimiter,
  type RateLimiter,
  type RateLimits,
} from '../send/rate.js';
import { SendWindow, type SendWindowEvents } from '../send/window.js';
import { manyWaitsOn } from '../send/sleep.js';
import { formatDuration } from '../log/duration.js';
import type { Logger } from '../log/logger.js';
import type { PipelineContext } from './context.js';
import { FilesInProgress } from './inProgress.js';
import { IntakeTurns } from './turns.js';
import { ResultSpools } from '../results/spool.js';
import { reportTakeovers } from './takeover.js';

export interface Runtime {
  /** The journal, as its ports. Closed by close(), not by itself. */
  journal: JournalHandle;
  provider: ProviderConnection;
  context: PipelineContext;
  stop: AbortController;
  /** Result files written ahead while sending (one set per process). */
  spools: ResultSpools;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Who holds the data-directory lock (shown to a second process). */
  role: string;
  /** The daemon (smsdrop run): listed as a node of a database journal; a one-shot command not. */
  daemon?: boolean;
  /** A database journal's server down at the start (restarting): how long to wait for it. */
  waitForDatabaseMs?: number;
  /** Told, besides the log, when the start waits for the database's server. */
  onDatabaseWait?: () => void;
  log: Logger;
  /** See ConnectOptions. */
  keepSimulatorRecords?: boolean;
  /**
   * Told, besides the log, when requests start waiting for the sending window and when it opens.
   */
  windowEvents?: SendWindowEvents;
  /**
   * Told, besides the log, when a message window holds requests (with why) and when it lets them go
   * (null).
   */
  onMessageWindow?: (waiting: string | null) => void;
}

/** A node waits for its database's server at the start, and says so in its log. */
function databaseWait(
  options: RuntimeOptions,
): { waitForDatabaseMs: number; onDatabaseWait: (why: string) => void } | object {
  const waitMs = options.waitForDatabaseMs;
  if (!waitMs) return {};
  return {
    waitForDatabaseMs: waitMs,
    onDatabaseWait: (why: string) => {
      options.log.warn(`waiting up to ${waitMs / 1000} s for the journal's server: ${why}`, {
        event: 'database-wait',
      });
      options.onDatabaseWait?.();
    },
  };
}

export async function openRuntime(config: Config, options: RuntimeOptions): Promise<Runtime> {
  const stop = new AbortController();
  const {
    handle: journal,
    replayed,
    missing,
    node,
  } = await openWriter(config, {
    role: options.role,
    daemon: options.daemon ?? false,
    synchronous: config.journalSync,
    reqIdOn: config.reqId,
    checkpointThread: true,
    onLost: stopWhenLost(options.log, stop),
    ...databaseWait(options),
  });
  try {
    logReplayed(options.log, replayed, missing);
    journal.send.whenHandedOn?.((what) => options.log.warn(what, { event: 'batch-handed-on' }));
    if (node !== undefined) reportTakeovers(journal, node, options.log);
    const provider = await connectProvider(config, {
      keepSimulatorRecords: options.keepSimulatorRecords ?? false,
      onUnknownCode: unknownCodeLogger(options.log),
    });
    const limit = pLimit(config.concurrency);
    const spools = new ResultSpools(config.dataDir);
    const context: PipelineContext = {
      send: journal.send,
      control: journal.control,
      files: journal.files,
      reads: journal.reads,
      client: provider.client,
      config,
      limit,
      concurrency: adaptiveConcurrencyOf(sharedLevel(limit, journal.account), config, options.log),
      ...(journal.account ? { account: journal.account } : {}),
      rateLimiter: await rateLimiterOf(config, journal, options.log, options.onMessageWindow),
      pause: pauseOf(config, journal.account),
      ...sendWindowOf(config, options.log, options.windowEvents),
      stopSignal: manyWaitsOn(stop.signal),
      defaultAppId: provider.defaultAppId,
      provider: provider.identity,
      turns: new IntakeTurns(journal.files),
      // Pruning leaves the files in it alone (retention/schedule.ts hands it over).
      inProgress: new FilesInProgress(),
      spools,
    };
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        await provider.close().catch(() => {});
        // What requests recorded on intents alone goes into the journal now, not at the next start.
        await journal.close();
      })());
    return { journal, provider, context, stop, close, spools };
  } catch (err) {
    await journal.close();
    throw err;
  }
}

/**
 * The level requests in flight are held to: the process's own, and the account's too when other
 * nodes send on it (the account's is then the one read).
 */
function sharedLevel(
  limit: LimitFunction,
  account: AccountSlots | undefined,
): Pick<LimitFunction, 'concurrency'> {
  if (!account) return limit;
  return {
    get concurrency() {
      return account.concurrency;
    },
    set concurrency(level: number) {
      limit.concurrency = level;
      account.concurrency = level;
    },
  };
}

/**
 * Requests in flight, halved when the provider says there are too many, said in the log each time
 * they change.
 */
function adaptiveConcurrencyOf(
  limit: Pick<LimitFunction, 'concurrency'>,
  config: Config,
  log: Logger,
): AdaptiveConcurrency {
  return new AdaptiveConcurrency(limit, config.concurrency, ({ from, to, statusCode }) => {
    if (statusCode)
      log.warn(
        `provider answered ${statusCode} (too many requests at once): requests in flight lowered from ${from} to ${to}; they grow back one at a time`,
        { event: 'concurrency-lowered', from, to, statusCode },
      );
    else
      log.info(
        `requests in flight raised from ${from} to ${to} (at most ${config.concurrency}, SMSDROP_CONCURRENCY)`,
        { event: 'concurrency-raised', from, to },
      );
  });
}

/** One warning per status code the code tables do not explain (provider/codes.ts). */
function unknownCodeLogger(log: Logger): (statusCode: string) => void {
  return (statusCode) =>
    log.warn(
      `unknown provider code ${JSON.stringify(statusCode.slice(0, 40))}: not in the code tables, so its batches are failed without a retry (treated as batch-rejected); see docs/provider-codes.md`,
      {
        event: 'unknown-provider-code',
        statusCode: statusCode.slice(0, 40),
      },
    );
}

/** Requests a crash cut off from their journal commit, put back by openWriter, said in the log. */
function logReplayed(log: Logger, replayed: number, missing: number): void {
  if (replayed > 0)
    log.warn(
      `${replayed} request(s) started just before the last run stopped had no journal record: they count as possibly received and are retried with their own reqId`,
    );
  if (missing > 0)
    log.error(
      `${missing} request(s) started just before the last run stopped name batches the journal does not have: see their files' results`,
    );
}

/**
 * A journal that loses requests' records stops this process (JournalLostError); the next start
 * settles them.
 */
function stopWhenLost(log: Logger, stop: AbortController): () => void {
  return () => {
    const lost = new JournalLostError();
    log.error(withCode(lost), { event: 'journal-lost', code: lost.code });
    stop.abort(lost); // the reason is how the daemon tells this stop from a signal's
  };
}

/**
 * The account pause switch; other nodes' too when they send on the account (the journal keeps it
 * for all of them).
 */
function pauseOf(config: Config, account: AccountSlots | undefined): AccountPause {
  return new AccountPause(
    config.pauseAfterFailures,
    account && { pause: account.pause, holdMs: config.pauseCooldownMs },
  );
}

/**
 * The pacing limits, one for every file, and for every node when other nodes send on the account
 * (the journal keeps them for all). A message window starts with what the journal's recent
 * requests used of it (those a crash cut off are back in the journal by now).
 */
async function rateLimiterOf(
  config: Config,
  journal: JournalHandle,
  log: Logger,
  also?: (waiting: string | null) => void,
): Promise<RateLimiter> {
  const window = config.messageWindow;
  const startedBefore = window ? await journal.send.recentStarts(Date.now() - window.ms) : [];
  const limits: RateLimits = {
    requestsPerSecond: config.requestsPerSecond,
    messagesPerSecond: config.messagesPerSecond,
    ...(window && {
      messageWindow: window,
      startedBefore,
      onWindowFull: ({ resumesAt, waitMs }) => {
        also?.(`message window ${window.text} used up; the next request starts at ${resumesAt}`);
        log.warn(
          `message window ${window.text} used up: the next request starts at ${resumesAt} (in ${formatDuration(waitMs / 1000)}); rows wait, nothing is lost`,
          {
            event: 'message-window-full',
            resumesAt,
          },
        );
      },
      onWindowRoom: () => also?.(null),
    }),
  };
  const { account } = journal;
  return account ? accountRateLimiter(limits, account.rate) : createRateLimiter(limits);
}

/**
 * The sending window of the settings, if any, saying in the log when requests wait for it and when
 * they go again.
 */
function sendWindowOf(
  config: Config,
  log: Logger,
  also: SendWindowEvents = {},
): { window: SendWindow } | undefined {
  if (config.sendWindow === undefined) return undefined;
  const window = new SendWindow(config.sendWindow, config.sendWindowZone, {
    onClosed: (closed) => {
      also.onClosed?.(closed);
      log.warn(
        `outside the sending window ${closed.window}: no request starts before ${window.opening} (${closed.opensAt}, in ${formatDuration(closed.opensInMs / 1000)}); files are still read in, their rows wait`,
        {
          event: 'window-closed',
          opensAt: closed.opensAt,
        },
      );
    },
    onOpened: () => {
      also.onOpened?.();
      log.info(`sending window ${window.text} open: requests start again`, {
        event: 'window-open',
      });
    },
  });
  return { window };
}
