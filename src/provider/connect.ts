// Chooses where requests go: the configured provider, or, when no credentials are configured,
// the built-in simulator started in this process on a free loopback port. Nothing leaves the
// machine in that case, and the caller says so loudly.
import {
  type Config,
  DEMO_CREDENTIALS,
  defaultAppIdFor,
  usesBuiltInSimulator,
} from '../config/index.js';
import { registerSecret } from '../log/redact.js';
import type { RunningSimulator } from '../simulator/types.js';
import { createProviderClient, type ProviderClient } from './client.js';

/** Templates of the built-in simulator: id -> number of variables (the bundled sample uses 1). */
export const BUILT_IN_TEMPLATES: Record<string, number> = { '1': 2, '2': 2, '3': 0 };

export interface ProviderConnection {
  client: ProviderClient;
  /** Set when the built-in simulator is in use. */
  simulator?: RunningSimulator;
  /** Where requests go, for the start-up line (no secrets). */
  describe: string;
  /** appId to use when a CSV has no appId column. */
  defaultAppId: string | undefined;
  /** Which provider and account, as recorded with each file planned (providerIdentity). */
  identity: string;
  close(): Promise<void>;
}

/** The built-in simulator's identity: its port changes at every start, its account does not. */
export const BUILT_IN_SIMULATOR = 'the built-in simulator';

/**
 * Which provider and account requests go to: "host (account SID)", or the built-in simulator.
 * Recorded with every file planned, so that a file is never resumed against another. Never the
 * token; nor the port: the same provider reached on another port (a proxy, a local test server
 * started again) is still the one the file was planned for.
 */
export function providerIdentity(config: Config): string {
  if (usesBuiltInSimulator(config)) return BUILT_IN_SIMULATOR;
  return `${new URL(config.baseUrl!).hostname} (account ${config.accountSid})`;
}

export interface ConnectOptions {
  /**
   * Keep the built-in simulator's accepted requests in memory (tests); off, its memory stays flat.
   */
  keepSimulatorRecords?: boolean;
  /** Told the first time the provider answers a status code the code tables do not explain. */
  onUnknownCode?: (statusCode: string) => void;
}

export async function connectProvider(
  config: Config,
  options: ConnectOptions = {},
): Promise<ProviderConnection> {
  registerSecret(config.authToken);
  if (!usesBuiltInSimulator(config)) {
    const client = createProviderClient({
      ...clientOptions(config, config.baseUrl!, config.accountSid!, config.authToken!),
      ...unknownCodeOption(options),
    });
    return {
      client,
      describe: `provider ${config.baseUrl} (account ${config.accountSid})`,
      defaultAppId: defaultAppIdFor(config),
      identity: providerIdentity(config),
      close: () => client.close(),
    };
  }
  // Loaded only when used: a run against the real provider does not carry the simulator.
  const { startSimulator } = await import('../simulator/index.js');
  const simulator = await startSimulator({
    host: '127.0.0.1',
    port: 0,
    accountSid: DEMO_CREDENTIALS.accountSid,
    authToken: DEMO_CREDENTIALS.authToken,
    appIds: [DEMO_CREDENTIALS.appId],
    templates: BUILT_IN_TEMPLATES,
    keepRecords: options.keepSimulatorRecords ?? false,
  });
  const client = createProviderClient({
    ...clientOptions(
      config,
      simulator.url,
      DEMO_CREDENTIALS.accountSid,
      DEMO_CREDENTIALS.authToken,
    ),
    ...unknownCodeOption(options),
  });
  return {
    client,
    simulator,
    describe: `BUILT-IN SIMULATOR at ${simulator.url}: no credentials configured, NOTHING LEAVES THIS MACHINE and no real message is sent`,
    defaultAppId: defaultAppIdFor(config),
    identity: BUILT_IN_SIMULATOR,
    close: async () => {
      await client.close();
      await simulator.close();
    },
  };
}

function clientOptions(config: Config, baseUrl: string, accountSid: string, authToken: string) {
  return {
    baseUrl,
    accountSid,
    authToken,
    format: config.format,
    maxPerRequest: config.maxPerRequest,
    connectTimeoutMs: config.connectTimeoutMs,
    responseTimeoutMs: config.responseTimeoutMs,
    connections: Math.max(config.concurrency, 1),
    ...(config.caFile ? { caFile: config.caFile } : {}),
    ...(config.timezone ? { timezone: config.timezone } : {}),
  };
}

function unknownCodeOption(options: ConnectOptions): {
  onUnknownCode?: (statusCode: string) => void;
} {
  return options.onUnknownCode ? { onUnknownCode: options.onUnknownCode } : {};
}
