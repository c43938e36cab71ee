// `smsdrop simulate`: runs the provider simulator in the foreground until SIGTERM or SIGINT.
// The first stdout line is exactly `listening on <url>` so scripts and tests can wait for it.
// Credentials come from the same variables the sender reads, else the demo ones (not secrets).
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { DEMO_CREDENTIALS } from '../config/index.js';
import { UsageError } from '../errors.js';
import { parseFaults, parseTemplates } from './faults.js';
import type { RunningSimulator, SimulatorOptions } from './types.js';

interface SimulateFlags {
  port: string;
  host: string;
  https?: boolean;
  caFile: string;
  tlsCert?: string;
  tlsKey?: string;
  templates: string;
  latencyMs?: string;
  blocked?: string;
  capped?: string;
  answer?: string;
  maxNumbers: string;
  faults?: string;
  seed?: string;
  record?: string;
  timezone?: string;
}

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description(
      'run a local Template SMS provider simulator: checks signatures, records accepted requests, injects faults',
    )
    .option('--port <n>', 'port to listen on; 0 = any free port', '0')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--https', 'serve HTTPS with a self-signed certificate made at start')
    .option(
      '--ca-file <file>',
      'with --https: where to write the certificate to trust',
      path.join(os.tmpdir(), 'smsdrop-simulator-ca.pem'),
    )
    .option('--tls-cert <file>', 'with --https: serve this certificate (PEM), with --tls-key')
    .option('--tls-key <file>', "with --https: the served certificate's key (PEM)")
    .option('--templates <spec>', 'templateId:variable count, comma-separated', '1:2,2:2,3:0')
    .option('--latency-ms <ms>', 'delay before answering: N or MIN-MAX')
    .option('--blocked <numbers>', 'comma-separated numbers answered 160034 (blacklisted)')
    .option(
      '--max-numbers <n>',
      'numbers per request above which 160048 is answered (older docs say 100)',
      '200',
    )
    .option(
      '--capped <numbers>',
      'comma-separated numbers over their daily cap: a request holding one is answered 160040',
    )
    .option(
      '--answer <spec>',
      'NUMBER=CODE,...: a request holding NUMBER is answered CODE (e.g. 13800000077=111115)',
    )
    .option(
      '--faults <spec>',
      'KIND[=CODE]@RATE,... e.g. http500@0.05,status=160000@/7,cut-after@/11,cut-before@/13,stall@0.01',
    )
    .option('--seed <n>', 'seed of the fault PRNG, to replay a run')
    .option('--record <file>', 'append each accepted request to this file as a JSON line')
    .option('--timezone <zone>', 'IANA zone for timestamps and the reqId day (default: host local)')
    .action(async (flags: SimulateFlags) => {
      let options: SimulatorOptions;
      try {
        options = simulatorOptionsFromFlags(flags, process.env);
      } catch (err) {
        process.stderr.write(`smsdrop: E_USAGE: simulate: ${(err as Error).message}\n`);
        process.exit(2);
      }
      await runSimulator(options, process.env);
    });
}

function wholeNumber(flag: string, text: string, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) > max)
    throw new UsageError(`${flag} expects a whole number from 0 to ${max}, got "${text}"`);
  return Number(text);
}

function parseLatency(text: string): [number, number] {
  const m = /^(\d+)(?:-(\d+))?$/.exec(text.trim());
  const min = Number(m?.[1]);
  const max = m?.[2] === undefined ? min : Number(m[2]);
  if (!m || max < min)
    throw new UsageError(`--latency-ms expects N or MIN-MAX with MIN <= MAX, got "${text}"`);
  return [min, max];
}

/** "13800000077=111115,..." -> { '13800000077': '111115' } */
function parseNumberCodes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list(text)) {
    const m = /^(\d+)=(\d{6})$/.exec(item);
    if (!m || m[2] === '000000')
      throw new UsageError(
        `--answer expects NUMBER=CODE with a 6-digit failure code, got "${item}"`,
      );
    out[m[1]!] = m[2]!;
  }
  return out;
}

function readCertificate(flags: SimulateFlags): { key: string; cert: string } {
  if (!flags.https || flags.tlsCert === undefined || flags.tlsKey === undefined)
    throw new UsageError('--tls-cert and --tls-key go together, with --https');
  const read = (flag: string, file: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(`${flag}: cannot read ${file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  };
  return { cert: read('--tls-cert', flags.tlsCert), key: read('--tls-key', flags.tlsKey) };
}

function list(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Flags and environment to simulator options; throws with a message naming the bad flag. */
export function simulatorOptionsFromFlags(
  flags: SimulateFlags,
  env: NodeJS.ProcessEnv,
): SimulatorOptions {
  const wrap = <T>(flag: string, parse: () => T): T => {
    try {
      return parse();
    } catch (err) {
      throw new UsageError(`${flag}: ${(err as Error).message}`);
    }
  };
  const options: SimulatorOptions = {
    host: flags.host,
    port: wholeNumber('--port', flags.port, 65535),
    https: Boolean(flags.https),
    accountSid: env.SMSDROP_ACCOUNT_SID || DEMO_CREDENTIALS.accountSid,
    authToken: env.SMSDROP_AUTH_TOKEN || DEMO_CREDENTIALS.authToken,
    appIds: env.SMSDROP_APP_ID ? list(env.SMSDROP_APP_ID) : [DEMO_CREDENTIALS.appId],
    templates: wrap('--templates', () => parseTemplates(flags.templates)),
    blocked: list(flags.blocked),
    capped: list(flags.capped),
    numberCodes: parseNumberCodes(flags.answer ?? ''),
    maxNumbers: Math.max(1, wholeNumber('--max-numbers', flags.maxNumbers, 1000)),
    faults: wrap('--faults', () => parseFaults(flags.faults ?? '')),
    // Nothing reads them in this process (the record file is the CLI's record), and kept they
    // would grow with every accepted request for as long as it runs.
    keepRecords: false,
  };
  if (options.https) options.caFile = flags.caFile;
  if (flags.tlsCert !== undefined || flags.tlsKey !== undefined)
    options.certificate = readCertificate(flags);
  if (flags.latencyMs !== undefined) options.latencyMs = parseLatency(flags.latencyMs);
  // Always a known seed, printed at start, so a run with probabilistic faults can be replayed.
  options.seed =
    flags.seed !== undefined
      ? wholeNumber('--seed', flags.seed, 0xffffffff)
      : randomInt(0xffffffff);
  if (flags.record !== undefined) options.recordFile = flags.record;
  if (flags.timezone !== undefined) options.timezone = flags.timezone;
  if (options.appIds.length === 0) throw new UsageError('SMSDROP_APP_ID lists no app id');
  return options;
}

function describe(o: SimulatorOptions, sim: RunningSimulator, env: NodeJS.ProcessEnv): string[] {
  const lines = [`listening on ${sim.url}`];
  if (sim.caFile) lines.push(`CA certificate (trust it with SMSDROP_CA_FILE): ${sim.caFile}`);
  lines.push(`account sid: ${o.accountSid}${env.SMSDROP_ACCOUNT_SID ? '' : ' (demo)'}`);
  // A token from the environment is a real secret: never print it. The demo token is public.
  lines.push(
    env.SMSDROP_AUTH_TOKEN
      ? 'auth token: from SMSDROP_AUTH_TOKEN (not shown)'
      : `auth token: ${o.authToken} (demo)`,
  );
  lines.push(`app id: ${o.appIds.join(', ')}${env.SMSDROP_APP_ID ? '' : ' (demo)'}`);
  const templates = Object.entries(o.templates).map(
    ([id, n]) => `${id} (${n} variable${n === 1 ? '' : 's'})`,
  );
  lines.push(`templates: ${templates.join(', ')}`);
  if (o.blocked?.length) lines.push(`blocked numbers: ${o.blocked.length}`);
  if (o.capped?.length) lines.push(`capped numbers: ${o.capped.length}`);
  const answers = Object.entries(o.numberCodes ?? {});
  if (answers.length)
    lines.push(`numbers with a chosen answer: ${answers.map(([n, c]) => `${n}=${c}`).join(', ')}`);
  if (o.latencyMs) lines.push(`latency: ${o.latencyMs[0]}-${o.latencyMs[1]} ms`);
  if (o.faults?.length)
    lines.push(`faults: ${o.faults.map((f) => JSON.stringify(f)).join(' ')} (seed ${o.seed})`);
  if (o.recordFile) lines.push(`recording accepted requests to ${o.recordFile}`);
  return lines;
}

async function runSimulator(options: SimulatorOptions, env: NodeJS.ProcessEnv): Promise<void> {
  let sim: RunningSimulator;
  try {
    // Loaded when the command runs, so the other commands do not carry the server.
    const { startSimulator } = await import('./index.js');
    sim = await startSimulator(options);
  } catch (err) {
    process.stderr.write(`smsdrop simulate: cannot start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    // A second signal does not wait for a close that seems stuck.
    if (stopping) process.exit(1);
    stopping = true;
    process.stdout.write(
      `${signal}: stopping after ${sim.requestCount} requests, ${sim.acceptedCount} accepted\n`,
    );
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // Handlers first, then the line scripts wait for: a signal sent the moment "listening on"
  // is read must find them in place, or it kills the process without a clean close.
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdout.write(`${describe(options, sim, env).join('\n')}\n`);
}
