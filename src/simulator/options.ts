// The simulator's options from `smsdrop simulate`'s flags and the environment. Credentials come
// from the same variables the sender reads, else the demo ones (not secrets).
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DEMO_CREDENTIALS } from '../config/index.js';
import { UsageError } from '../errors.js';
import { parseFaults, parseTemplates } from './faults.js';
import type { SimulatorOptions } from './types.js';

/** `smsdrop simulate`'s flags, as commander gives them. */
export interface SimulateFlags {
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
  stallMs?: string;
  seed?: string;
  record?: string;
  timezone?: string;
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
  if (flags.stallMs !== undefined)
    options.stallMs = wholeNumber('--stall-ms', flags.stallMs, 3_600_000);
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
