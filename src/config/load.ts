// Loading the configuration: every default lives in SETTINGS (schema.ts), once, with its
// environment name and its documentation. Sources are merged in a fixed order, later wins:
//   built-in defaults < config/default.json < config/local.json (or $SMSDROP_CONFIG)
//   < environment variables < command-line flags
// and the merged result is validated as a whole before anything opens, so a bad value stops
// start-up with one message naming the setting, the value and what is expected.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { ConfigCode } from '../errors.js';
import { checkAcrossSettings, PROVIDER_SETTINGS } from './problems.js';
import {
  type Config,
  ConfigError,
  type ConfigKey,
  type ConfigOverrides,
  settingCode,
  SETTINGS,
  type Settings,
} from './schema.js';
import { hidePassword } from './settings/database.js';
import { withoutSecrets } from './settings/webhookUrls.js';
import { loadTemplates } from './templates.js';

const configSchema = z
  .object(
    Object.fromEntries(Object.entries(SETTINGS).map(([k, s]) => [k, s.schema])) as {
      [K in keyof Settings]: Settings[K]['schema'];
    },
  )
  .strict();

/** Values from the environment, by setting name. Only set variables are returned. */
export function readEnvironment(env: NodeJS.ProcessEnv = process.env): ConfigOverrides {
  const out: ConfigOverrides = {};
  for (const [key, setting] of Object.entries(SETTINGS)) {
    const value = env[setting.env];
    if (value !== undefined) out[key as ConfigKey] = value;
  }
  return out;
}

function readJsonFile(file: string): ConfigOverrides {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(
      'E_CONFIG_FILE',
      `cannot read configuration file ${file}: ${(err as Error).message}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // Not V8's message: it quotes the text around the mistake, which may be the auth token.
    throw new ConfigError(
      'E_CONFIG_FILE',
      `configuration file ${file} is not valid JSON${jsonErrorPlace(text, err)}: check the quotes and commas there (values in double quotes)`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError(
      'E_CONFIG_FILE',
      `configuration file ${file} is not valid: expected a JSON object`,
    );
  return parsed;
}

/** " at line L, column C" of the syntax error, from the position V8 names, or nothing. */
function jsonErrorPlace(text: string, err: unknown): string {
  const position = /position (\d+)/.exec((err as Error).message)?.[1];
  if (position === undefined) return '';
  const before = text.slice(0, Number(position)).split('\n');
  return ` at line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

export interface LoadConfigOptions {
  /** Folder holding default.json and local.json. Default: ./config */
  configDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Command-line flags, already named as settings. undefined values are ignored. */
  flags?: ConfigOverrides;
  /**
   * For a command that only reads the journal (report, status, export): the provider's settings
   * are left out, so that whatever they hold (half set, a bad URL) cannot stop it.
   */
  forReading?: boolean;
}

/**
 * Merges every source in order and validates the result. Throws ConfigError naming the setting, or
 * TemplatesFileError.
 */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const configDir = options.configDir ?? path.resolve('config');
  const layers: ConfigOverrides[] = [];
  const defaultFile = path.join(configDir, 'default.json');
  if (existsSync(defaultFile)) layers.push(readJsonFile(defaultFile));
  const localFile = env.SMSDROP_CONFIG
    ? path.resolve(env.SMSDROP_CONFIG)
    : path.join(configDir, 'local.json');
  if (env.SMSDROP_CONFIG || existsSync(localFile)) layers.push(readJsonFile(localFile));
  layers.push(readEnvironment(env));
  layers.push(
    Object.fromEntries(Object.entries(options.flags ?? {}).filter(([, v]) => v !== undefined)),
  );
  const merged: ConfigOverrides = {};
  for (const layer of layers) Object.assign(merged, layer);
  if (options.forReading) for (const key of PROVIDER_SETTINGS) delete merged[key];
  const config = validateConfig(merged);
  // Read at start-up like the settings, so that a broken file stops the program before any file is
  // read.
  const templates = loadTemplates(config.templatesFile, configDir);
  return templates ? { ...config, templates } : config;
}

/** Validates a merged object; the error names each bad setting, its value and what is expected. */
export function validateConfig(merged: ConfigOverrides): Config {
  const result = configSchema.safeParse(merged);
  if (result.success) {
    checkAcrossSettings(result.data as Config);
    return result.data as Config;
  }
  const lines = result.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? '');
    const setting = SETTINGS[key as ConfigKey];
    if (issue.code === 'unrecognized_keys') return `unknown setting(s) ${issue.keys.join(', ')}`;
    const shown = shownValue(key, merged);
    const where = setting ? `${key} (${setting.env})` : key;
    return `${where} = ${shown}: ${issue.message}`;
  });
  // One line, whatever the number of mistakes; the code is the first one's.
  throw new ConfigError(
    issueCode(result.error.issues[0]),
    `invalid configuration: ${lines.join('; ')}`,
  );
}

function issueCode(issue: z.ZodIssue | undefined): ConfigCode {
  const key = String(issue?.path[0] ?? '');
  if (issue?.code === 'unrecognized_keys' || !(key in SETTINGS)) return 'E_CONFIG_UNKNOWN_SETTING';
  return settingCode(key as ConfigKey);
}

/** Secrets are hidden, and URLs shown without what they may carry of them. */
function shownValue(key: string, merged: ConfigOverrides): string {
  if (key === 'authToken' || key === 'httpToken' || key === 'webhookSecret') return '(hidden)';
  if (key === 'baseUrl') return withoutUserInfo(merged.baseUrl);
  if (key === 'databaseUrl')
    return typeof merged.databaseUrl === 'string'
      ? JSON.stringify(hidePassword(merged.databaseUrl))
      : '(hidden)';
  if (key === 'webhookUrl')
    return typeof merged.webhookUrl === 'string'
      ? JSON.stringify(withoutSecrets(merged.webhookUrl))
      : '(hidden)';
  return JSON.stringify(merged[key as ConfigKey]);
}

/**
 * The base URL as written, but for a user name or password in it, and its query or fragment (a
 * secret, however misplaced: a sig, say). Everything after the scheme up to the last @ is
 * hidden, whatever it holds: a password with a # or ?, or slashes written the wrong way, is no URL
 * a parser would split, and it must not show.
 */
function withoutUserInfo(value: unknown): string {
  if (typeof value !== 'string') return JSON.stringify(value);
  return JSON.stringify(
    value
      .replace(/^([a-z][a-z0-9+.-]*:[\\/]*)?.*@/is, '$1(hidden)@')
      .replace(/[?#].*$/s, '?(hidden)'),
  );
}
