// Test helpers for reports: a fresh data directory per test, the simulator in-process on loopback,
// the real pipeline (processFile) pointed at it, and the CLI run as a child process.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pLimit from 'p-limit';
import { type Config, loadConfig } from '../../src/config/index.js';
import type { JournalHandle } from '../../src/ports/index.js';
import { openWriter } from '../../src/journals/index.js';
import {
  type FileRunResult,
  type PipelineContext,
  type ProcessOptions,
  processFile,
} from '../../src/pipeline/index.js';
import { FilesInProgress } from '../../src/pipeline/inProgress.js';
import { IntakeTurns } from '../../src/pipeline/turns.js';
import { connectProvider, type ProviderConnection } from '../../src/provider/connect.js';
import { AccountPause, createRateLimiter } from '../../src/send/rate.js';
import {
  startSimulator,
  type RunningSimulator,
  type SimulatorOptions,
} from '../../src/simulator/index.js';

export const SID = '8a216da8report00000000000000acc1';
export const TOKEN = 'rep0rt5ecret7oken000000000000042';
export const APP = '8a216da8report00000000000000app1';

const cleanups: Array<() => Promise<void> | void> = [];

/** Runs (last in, first out) everything the helpers opened; call from after(). */
export async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) await cleanups.pop()!();
}

export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-report-test-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function simulator(extra: Partial<SimulatorOptions> = {}): Promise<RunningSimulator> {
  const sim = await startSimulator({
    accountSid: SID,
    authToken: TOKEN,
    appIds: [APP],
    templates: { '1': 2, '2': 1 },
    ...extra,
  });
  cleanups.push(() => sim.close());
  return sim;
}

/** Settings as the program would load them, with no config file and no environment. */
export function configFor(
  dataDir: string,
  sim: RunningSimulator,
  flags: Record<string, unknown> = {},
): Config {
  return loadConfig({
    configDir: path.join(dataDir, 'no-config'),
    env: {},
    flags: {
      dataDir,
      baseUrl: sim.url,
      accountSid: SID,
      authToken: TOKEN,
      appId: APP,
      retryBaseMs: 0,
      retryMaxMs: 0,
      ...flags,
    },
  });
}

export interface Sender {
  /** The journal of the data directory, as its ports. */
  stores: JournalHandle;
  ctx: PipelineContext;
  provider: ProviderConnection;
  config: Config;
}

/**
 * The real sending machinery (journal, client, limits) against `sim`: the journal opened as
 * `smsdrop send` opens it, the data directory's lock held until it closes.
 */
export async function sender(
  dataDir: string,
  sim: RunningSimulator,
  flags: Record<string, unknown> = {},
): Promise<Sender> {
  const config = configFor(dataDir, sim, flags);
  fs.mkdirSync(dataDir, { recursive: true });
  const { handle: ports } = await openWriter(config, {
    role: 'smsdrop send (report test)',
    synchronous: config.journalSync,
    reqIdOn: config.reqId,
    onLost: () => {
      throw new Error('the journal lost requests’ records');
    },
  });
  cleanups.push(() => ports.close());
  const provider = await connectProvider(config);
  cleanups.push(() => provider.close());
  const ctx: PipelineContext = {
    send: ports.send,
    files: ports.files,
    reads: ports.reads,
    client: provider.client,
    config,
    limit: pLimit(config.concurrency),
    rateLimiter: createRateLimiter(),
    pause: new AccountPause(),
    defaultAppId: provider.defaultAppId,
    turns: new IntakeTurns(ports.files),
    inProgress: new FilesInProgress(),
  };
  return { stores: ports, ctx, provider, config };
}

/** Sends one CSV through the whole pipeline; closes the sender's journal and client after. */
export async function sendCsv(
  dataDir: string,
  sim: RunningSimulator,
  file: string,
  flags: Record<string, unknown> = {},
  options: ProcessOptions = {},
): Promise<FileRunResult> {
  const s = await sender(dataDir, sim, flags);
  try {
    return await processFile(s.ctx, file, options);
  } finally {
    await s.provider.close();
    await s.stores.close();
  }
}

/** Writes a CSV (UTF-8, LF) into dir and returns its path. */
export function writeCsvFile(dir: string, name: string, lines: string[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `${lines.join('\n')}\n`, 'utf8');
  return file;
}

/** Numbers the simulator accepted, one entry per time a number was accepted. */
export function acceptedNumbers(sim: RunningSimulator): string[] {
  return sim.records.flatMap((r) => r.to);
}

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsxLoader = path.join(repo, 'node_modules/tsx/dist/loader.mjs');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `smsdrop ARGS` in dataDir's parent folder with the simulator's credentials in the
 * environment.
 */
export function runCli(
  args: string[],
  options: { dataDir: string; sim?: RunningSimulator; env?: Record<string, string> },
): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SMSDROP_DATA_DIR: options.dataDir,
    SMSDROP_RETRY_BASE_MS: '0',
    SMSDROP_RETRY_MAX_MS: '0',
    ...(options.sim
      ? {
          SMSDROP_BASE_URL: options.sim.url,
          SMSDROP_ACCOUNT_SID: SID,
          SMSDROP_AUTH_TOKEN: TOKEN,
          SMSDROP_APP_ID: APP,
        }
      : {}),
    ...options.env,
  };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', pathToFileURL(tsxLoader).href, path.join(repo, 'src/cli.ts'), ...args],
      { cwd: path.dirname(options.dataDir), env, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
