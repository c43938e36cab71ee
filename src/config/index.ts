// The configuration, as the rest of smsdrop reads it: the settings table (schema.ts), loading and
// validating them (load.ts), the checks across settings (problems.ts), and what the built-in
// simulator stands in for when no provider is configured.
import type { Config } from './schema.js';

export {
  type Config,
  ConfigError,
  type ConfigKey,
  type ConfigOverrides,
  settingCode,
  SETTINGS,
} from './schema.js';
export { type LoadConfigOptions, loadConfig, readEnvironment, validateConfig } from './load.js';
export { keepProblem, PROVIDER_SETTINGS } from './problems.js';

/** Credentials the built-in simulator uses, and that the program uses against it. Not secrets. */
export const DEMO_CREDENTIALS = {
  accountSid: '8a216da8demo0000000000000000acc1',
  authToken: 'demo0token0000000000000000000001',
  appId: '8a216da8demo0000000000000000app1',
} as const;

/** True when no real provider is configured: the program then runs against the simulator. */
export function usesBuiltInSimulator(config: Config): boolean {
  return !config.baseUrl || !config.accountSid || !config.authToken;
}

/** appId for CSV files without an appId column: the configured one, or the simulator's demo app. */
export function defaultAppIdFor(config: Config): string | undefined {
  return config.appId ?? (usesBuiltInSimulator(config) ? DEMO_CREDENTIALS.appId : undefined);
}
