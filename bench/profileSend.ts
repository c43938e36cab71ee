// `node --import tsx bench/profileSend.ts [--rows N] [--out DIR] [--cli dist|src] [--latency-ms N]
// [--concurrency N] [--env KEY=VALUE ...] [--journal-from DIR]`: one
// `smsdrop send` of the benchmark's generated file to the simulator (no latency), run under
// `node --cpu-prof`, and nothing else (no baselines): the profile to split by phase with
// scripts/cpuPhases.mjs. The CSV is kept in DIR and reused when DIR already has one of N rows, so
// a before/after pair reads the same bytes. Prints the machine's load (it is shared), the CPU
// seconds of the main thread and of the others, the wall time, and where the profiles were written.
// `--journal-from DIR` sends on a copy of the data directory DIR (a journal with history, as
// `npm run bench -- --history N --keep` leaves one) rather than on an empty one.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateCsv, SIMULATOR_TEMPLATES } from './generate.js';
import { cliArgs, childEnv, type CliSource, startSimulatorProcess, track } from './processes.js';

const CREDS = {
  accountSid: 'ACbench0000000000000000000000001',
  authToken: 'benchtoken000000000000000000001',
  appId: 'APPbench000000000000000000000001',
};

/** `--env KEY=VALUE` items, for the send process. */
function keyValues(items: string[]): Record<string, string> {
  return Object.fromEntries(
    items.map((item): [string, string] => {
      const at = item.indexOf('=');
      return [item.slice(0, at), item.slice(at + 1)];
    }),
  );
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/** CPU seconds (user + system) of each thread of a process so far, by thread id, from /proc. */
function threadCpu(pid: number, into: Map<number, number>): void {
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
        .split(') ')[1]!
        .split(' ');
      into.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / 100);
    }
  } catch {
    // the process (or a thread) ended between two reads: keep the last figures
  }
}

/**
 * `smsdrop send FILE --json` under --cpu-prof, with each thread's CPU polled every 50 ms (the last
 * poll is up to 50 ms before exit): the main thread's figure scales the profile's samples.
 */
async function profiledSend(cli: CliSource, csv: string, env: NodeJS.ProcessEnv, dir: string) {
  const start = process.hrtime.bigint();
  const args = ['--cpu-prof', '--cpu-prof-dir', dir, ...cliArgs(cli), 'send', csv, '--json'];
  const child = track(spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  const cpu = new Map<number, number>();
  const timer = setInterval(() => threadCpu(child.pid!, cpu), 50);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearInterval(timer);
  const main = cpu.get(child.pid!) ?? 0;
  const all = [...cpu.values()].reduce((a, b) => a + b, 0);
  return {
    exitCode: code,
    wallSeconds: Math.round(Number(process.hrtime.bigint() - start) / 1e7) / 100,
    mainThreadCpuSeconds: main,
    otherThreadsCpuSeconds: Math.round((all - main) * 100) / 100,
    summary: stdout.trim().split('\n').pop(),
    stderrTail: stderr.trim(),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      out: { type: 'string', default: path.join(os.tmpdir(), 'smsdrop-profile') },
      cli: { type: 'string', default: 'dist' },
      concurrency: { type: 'string', default: '8' },
      'latency-ms': { type: 'string', default: '0' },
      env: { type: 'string', multiple: true },
      'journal-from': { type: 'string' },
    },
  });
  const rows = Number(values.rows.replaceAll('_', ''));
  const out = path.resolve(values.out);
  const cli = values.cli as CliSource;
  mkdirSync(out, { recursive: true });
  const csv = path.join(out, `bench-${rows}.csv`);
  if (!existsSync(csv)) await generateCsv(csv, rows, 1, 0.02);
  const runDir = path.join(out, `run-${Date.now()}`);
  const profileDir = path.join(runDir, 'profile');
  mkdirSync(runDir);
  const journalFrom = values['journal-from'];
  if (journalFrom)
    cpSync(path.resolve(journalFrom), path.join(runDir, 'data'), { recursive: true });
  const latency = Number(values['latency-ms']);
  const sim = await startSimulatorProcess(
    cli,
    childEnv(runDir, CREDS, {}),
    latency,
    SIMULATOR_TEMPLATES,
  );
  const env = childEnv(runDir, CREDS, {
    ...keyValues(values.env ?? []),
    SMSDROP_BASE_URL: sim.url,
    SMSDROP_DATA_DIR: path.join(runDir, 'data'),
    SMSDROP_CONCURRENCY: values.concurrency,
  });
  const loadBefore = load();
  try {
    const { stderrTail, ...run } = await profiledSend(cli, csv, env, profileDir);
    const files = readdirSync(profileDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .sort() // main thread first: node names them …<pid>.<thread>.<sequence>.cpuprofile
      .map((f) => path.join(profileDir, f));
    process.stdout.write(
      `${JSON.stringify({ rows, ...run, loadBefore, loadAfter: load(), profiles: files }, null, 1)}\n`,
    );
    if (run.exitCode !== 0) process.stderr.write(`${stderrTail}\n`);
  } finally {
    await sim.stop();
    rmSync(path.join(runDir, 'data'), { recursive: true, force: true });
  }
}

await main();
