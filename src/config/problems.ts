// Checks across settings, after each one has been read on its own: credentials all or none, a
// message window that holds a request, a signed webhook, and a keep that covers the windows.
import { type Config, ConfigError, type ConfigKey, settingCode, SETTINGS } from './schema.js';

/** Every check across settings, in order; throws ConfigError for the first that fails. */
export function checkAcrossSettings(config: Config): void {
  checkCredentialsComplete(config);
  checkWindowHoldsARequest(config);
  checkWebhookSigned(config);
  checkKeepCoversWindows(config);
}

/**
 * All three provider credentials, or none (the built-in simulator). Some but not all is a mistake,
 * such as a token missing from the environment pm2 was started with: it must not quietly turn
 * into a demo run that reports real rows as accepted. An appId is an account's too: given alone,
 * the simulator would refuse every request (111181), so it needs the credentials as well.
 */
function checkCredentialsComplete(config: Config): void {
  const keys = ['baseUrl', 'accountSid', 'authToken'] as const;
  const missing = keys.filter((k) => !config[k]);
  const given = [...keys, 'appId' as const].filter((k) => config[k]);
  if (missing.length === 0 || given.length === 0) return;
  const names = (list: readonly ConfigKey[]) =>
    list.map((k) => `${k} (${SETTINGS[k].env})`).join(', ');
  throw new ConfigError(
    'E_CONFIG_CREDENTIALS',
    `invalid configuration: incomplete provider credentials: ${names(missing)} not set while ${names(given)} ${given.length === 1 ? 'is' : 'are'}; set all three of baseUrl, accountSid and authToken, or none of them and no appId to use the built-in simulator`,
  );
}

/**
 * Settings of the provider: a command that only reads the journal ignores them (see loadConfig's
 * forReading).
 */
export const PROVIDER_SETTINGS: readonly ConfigKey[] = [
  'baseUrl',
  'accountSid',
  'authToken',
  'appId',
  'templateId',
  'caFile',
];

/** A window smaller than one full request would hold every full batch back for ever. */
function checkWindowHoldsARequest(config: Config): void {
  const window = config.messageWindow;
  if (!window || window.messages >= config.maxPerRequest) return;
  throw new ConfigError(
    settingCode('messageWindow'),
    `invalid configuration: messageWindow (${SETTINGS.messageWindow.env}) = "${window.text}": allows fewer numbers than one full request of maxPerRequest (${SETTINGS.maxPerRequest.env}) = ${config.maxPerRequest}; raise the window's count or lower maxPerRequest`,
  );
}

/** smsdrop's own webhook body is signed: a receiver must be able to tell it from anyone's POST. */
function checkWebhookSigned(config: Config): void {
  if (!config.webhookUrl || config.webhookFormat !== 'json' || config.webhookSecret) return;
  throw new ConfigError(
    settingCode('webhookSecret'),
    `invalid configuration: webhookUrl (${SETTINGS.webhookUrl.env}) is set but webhookSecret (${SETTINGS.webhookSecret.env}) is not: the json format's X-Smsdrop-Signature needs it`,
  );
}

/**
 * Pruning must not take away what the repeat window or late-file resumption still read: the rows
 * of files sent within them. One line, with its code: the setting is the one to change.
 */
function checkKeepCoversWindows(config: Config): void {
  const problem = keepProblem(config, config.keep, `keep (${SETTINGS.keep.env})`);
  if (problem) throw new ConfigError(settingCode('keep'), `invalid configuration: ${problem}`);
}

/**
 * Why `keep` (named `what`) is too short for the windows of `config`, or undefined when it is not.
 */
export function keepProblem(
  config: Config,
  keep: Config['keep'],
  what: string,
): string | undefined {
  if (keep.ms === 0) return undefined;
  const windows = (['repeatWindow', 'resumeWithin'] as const).filter((k) => config[k].ms > keep.ms);
  if (windows.length === 0) return undefined;
  const longest = windows.reduce((a, b) => (config[a].ms >= config[b].ms ? a : b));
  const named = windows.map((k) => `${SETTINGS[k].env} = ${config[k].text}`).join(' and ');
  return `${what} = "${keep.text}" is shorter than ${named}: pruning would remove rows they still need; make it at least ${config[longest].text}, or turn them off`;
}
