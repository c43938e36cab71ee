// Webhook receivers as configured (SMSDROP_WEBHOOK_URL): checked like the provider's base URL
// (HTTPS, or plain http to loopback only), and never shown with their credentials or query (a
// WeCom robot's key and a DingTalk robot's access_token are in the query).
import { createHash } from 'node:crypto';
import { isLoopbackHost } from './baseUrl.js';

export const WEBHOOK_FORMATS = ['json', 'wecom', 'dingtalk'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export interface WebhookUrls {
  urls: string[];
}

/**
 * A receiver: its URL, the id its outbox rows carry (the URL holds secrets), and what may be shown
 * of it.
 */
export interface WebhookTarget {
  url: string;
  id: string;
  shown: string;
}

/** Comma-separated URLs; the reason when one is not usable (without its secrets). */
export function parseWebhookUrls(text: string): WebhookUrls | string {
  const urls = text
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  if (urls.length === 0) return 'expected one or more URLs, comma-separated';
  for (const u of urls) {
    const problem = webhookUrlProblem(u);
    if (problem) return `${withoutSecrets(u)}: ${problem}`;
  }
  return { urls };
}

function webhookUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'expected an https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'expected an https URL';
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    return `plain http is allowed only to a loopback host; use https for ${url.hostname}`;
  return undefined;
}

/** The URL(s) without user info, query or fragment: what a log or an error may show. */
export function withoutSecrets(text: string): string {
  return text
    .split(',')
    .map((u) =>
      u
        .trim()
        .replace(/^([a-z][a-z0-9+.-]*:[\\/]*)?[^/]*@/is, '$1')
        .replace(/[?#].*$/s, ''),
    )
    .join(',');
}

export function webhookTargets(urls: WebhookUrls | undefined): WebhookTarget[] {
  return (urls?.urls ?? []).map((url) => ({
    url,
    id: createHash('sha256').update(url).digest('hex').slice(0, 16),
    shown: withoutSecrets(url),
  }));
}
