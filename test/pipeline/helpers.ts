// Shared by the pipeline tests: a simulator in this process (so it outlives a killed `send`),
// the real CLI as a child process, and the ground truth: what the simulator accepted.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isolatedSettings } from '../emptyConfig.js';
import {
  startSimulator,
  type RunningSimulator,
  type SimulatorOptions,
} from '../../src/simulator/index.js';

export const CREDS = {
  accountSid: 'ACtest00000000000000000000000001',
  authToken: 'tokentest0000000000000000000001',
  appId: 'APPtest0000000000000000000000001',
};
export const TEMPLATES = { '1': 2, '2': 1, '3': 0 };
const CLI = path.resolve('src/cli.ts');

export function tempDir(prefix = 'smsdrop-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function startSim(options: Partial<SimulatorOptions> = {}): Promise<RunningSimulator> {
  return startSimulator({
    accountSid: CREDS.accountSid,
    authToken: CREDS.authToken,
    appIds: [CREDS.appId],
    templates: TEMPLATES,
    seed: 7,
    ...options,
  });
}

/**
 * Environment for a child smsdrop: only what the test sets, never the developer's own SMSDROP_*.
 */
export function envFor(
  sim: { url: string },
  dataDir: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SMSDROP_')) env[k] = v;
  return {
    ...env,
    SMSDROP_BASE_URL: sim.url,
    SMSDROP_ACCOUNT_SID: CREDS.accountSid,
    SMSDROP_AUTH_TOKEN: CREDS.authToken,
    SMSDROP_APP_ID: CREDS.appId,
    SMSDROP_DATA_DIR: dataDir,
    SMSDROP_RETRY_BASE_MS: '5',
    SMSDROP_RETRY_MAX_MS: '50',
    SMSDROP_LOG_LEVEL: 'warn',
    ...isolatedSettings(), // what a developer keeps in config/ cannot change the test
    SMSDROP_HTTP: '127.0.0.1:0', // (read by the daemon only; any free port, should one start)
    ...extra,
  };
}

/**
 * `smsdrop send FILE --json` as a child left running (to be killed, say), with its exit code as a
 * promise.
 */
export function startSend(
  file: string,
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'send', file, '--json'], {
    env,
    stdio: 'ignore',
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited };
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> | undefined;
}

/** Runs `smsdrop ARGS` to the end (asynchronously, so the in-process simulator keeps answering). */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => {
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(stdout.trim().split('\n').pop() ?? '') as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      resolve({ status, stdout, stderr, json });
    });
  });
}

/** Each (app, template, values, number) the simulator accepted, with how many times. */
export function deliveries(sim: RunningSimulator): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of sim.records) {
    for (const to of r.to) {
      const key = messageKey(r.appId, r.templateId, r.datas, to);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

export function messageKey(
  appId: string,
  templateId: string,
  datas: string[],
  phone: string,
): string {
  return JSON.stringify([appId, templateId, datas, phone]);
}

export function writeCsv(dir: string, name: string, content: string | Buffer): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

export { spawnSync };
