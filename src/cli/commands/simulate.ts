// `smsdrop simulate`: runs the provider simulator in the foreground until SIGTERM or SIGINT.
// The first stdout line is exactly `listening on <url>` so scripts and tests can wait for it.
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { type SimulateFlags, simulatorOptionsFromFlags } from '../../simulator/options.js';
import type { InFlightRequest, RunningSimulator, SimulatorOptions } from '../../simulator/types.js';

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
    .option('--stall-ms <ms>', 'a stalled request (stall fault) is answered 504 after this long')
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
    const { startSimulator } = await import('../../simulator/index.js');
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
      `${signal}: stopping after ${sim.requestCount} requests, ${sim.acceptedCount} accepted, at most ${sim.peakInFlight} at once\n${peakLine(sim.peakRequests)}`,
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

/** The requests in flight at the peak, one per `;`: when each came, its reqId, its fault. */
function peakLine(requests: readonly InFlightRequest[]): string {
  if (requests.length === 0) return '';
  const each = requests.map((r) => `${r.since} ${r.reqId ?? '-'} ${r.fault ?? 'none'}`);
  return `in flight at the peak: ${each.join('; ')}\n`;
}
