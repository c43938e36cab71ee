// What a webhook POST carries: smsdrop's own JSON, signed as Stripe signs its events (the
// HMAC-SHA256 of "TIMESTAMP.BODY", the timestamp in its own header, so that a receiver can refuse
// an old one replayed), or the markdown message of a WeCom (企业微信) or DingTalk group robot,
// whose URL DingTalk wants signed: timestamp and sign = base64(HMAC-SHA256(secret, timestamp +
// "\n" + secret)). Every POST has its own delivery id (X-Smsdrop-Delivery, as GitHub's
// X-GitHub-Delivery); the event's id in the body stays the same across repeats.
import { createHmac, randomUUID } from 'node:crypto';
import type { EventBody } from '../ports/index.js';
import type { WebhookFormat } from '../config/settings/webhookUrls.js';

export interface WebhookPost {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export const SIGNATURE_HEADER = 'X-Smsdrop-Signature';
export const TIMESTAMP_HEADER = 'X-Smsdrop-Timestamp';
export const DELIVERY_HEADER = 'X-Smsdrop-Delivery';

/** sha256=<hex HMAC-SHA256 of "TIMESTAMP.BODY">, the timestamp in Unix seconds. */
export function signature(timestamp: number, body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export function webhookPost(
  url: string,
  stored: string,
  format: WebhookFormat,
  secret: string | undefined,
  now = Date.now(),
): WebhookPost {
  const json = {
    'Content-Type': 'application/json; charset=utf-8',
    [DELIVERY_HEADER]: randomUUID(),
  };
  if (format === 'json') {
    const timestamp = Math.floor(now / 1000);
    const signed: Record<string, string> = secret
      ? {
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signature(timestamp, stored, secret),
        }
      : {};
    return { url, body: stored, headers: { ...json, ...signed } };
  }
  const event = JSON.parse(stored) as EventBody;
  const title = headline(event);
  const text = markdown(event, headline(event, plain));
  if (format === 'wecom')
    return {
      url,
      body: JSON.stringify({ msgtype: 'markdown', markdown: { content: text } }),
      headers: json,
    };
  return {
    url: secret ? dingTalkSigned(url, secret, now) : url,
    body: JSON.stringify({ msgtype: 'markdown', markdown: { title, text } }),
    headers: json,
  };
}

export function dingTalkSigned(url: string, secret: string, timestamp: number): string {
  const sign = createHmac('sha256', secret).update(`${timestamp}\n${secret}`).digest('base64');
  const signed = new URL(url);
  signed.searchParams.set('timestamp', String(timestamp));
  signed.searchParams.set('sign', sign);
  return signed.toString();
}

const HEADLINES: Record<EventBody['event'], string> = {
  'file.taken': 'file taken',
  'file.finished': 'file finished',
  'file.failed': 'file failed',
  'file.late': 'file not resumed (late)',
  'file.held': 'file held for approval',
  'file.approved': 'file approved',
  'file.paused': 'file paused',
  'file.resumed': 'file resumed',
  'file.cancelled': 'file cancelled',
  'file.taken_over': 'file taken over by another node',
  'sending.paused': 'sending paused',
  'sending.resumed': 'sending resumed',
};

/** The message's title: as text (DingTalk's notification title), or as markdown. */
function headline(
  event: EventBody,
  shown = (name: string) => name.replace(/[\r\n]+/g, ' '),
): string {
  return `smsdrop: ${HEADLINES[event.event]}${event.file ? ` ${shown(event.file.name)}` : ''}`;
}

/**
 * Text from outside (a file's name, a reason quoting the provider) as plain text in a robot's
 * markdown: no link, emphasis, heading, HTML tag (WeCom's <font>) or mention (@all) of its own.
 */
export function plain(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/@/g, '＠')
    .replace(/[\\`*_[\]()|~]/g, '\\$&');
}

function markdown(event: EventBody, title: string): string {
  const lines = [`### ${title}`, `- at: ${event.at}`];
  if (event.file)
    lines.push(
      `- file: ${plain(event.file.name)}${event.file.id === null ? '' : ` (id ${event.file.id})`}, ${event.file.status}`,
    );
  const c = event.file?.counts;
  if (c)
    lines.push(
      `- rows ${c.rows}: accepted ${c.accepted}, failed ${c.failed}, unknown ${c.unknown},${c.cancelled > 0 ? ` cancelled ${c.cancelled},` : ''} invalid ${c.invalid}, duplicates ${c.duplicates}, to send ${c.pending}`,
    );
  if (event.reason) lines.push(`- reason: ${plain(event.reason)}`);
  return lines.join('\n');
}
