// What a webhook POST carries: smsdrop's own JSON (signed with X-Smsdrop-Signature), or the
// markdown message of a WeCom (企业微信) or DingTalk group robot, whose URL DingTalk wants
// signed: timestamp and sign = base64(HMAC-SHA256(secret, timestamp + "\n" + secret)).
import { createHmac } from 'node:crypto';
import type { EventBody } from '../journal/outbox.js';
import type { WebhookFormat } from './urls.js';

export interface WebhookPost {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export const SIGNATURE_HEADER = 'X-Smsdrop-Signature';

/** sha256=<hex HMAC-SHA256 of the raw body>. */
export function signature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function webhookPost(
  url: string,
  stored: string,
  format: WebhookFormat,
  secret: string | undefined,
  now = Date.now(),
): WebhookPost {
  const json = { 'Content-Type': 'application/json; charset=utf-8' };
  if (format === 'json')
    return {
      url,
      body: stored,
      headers: { ...json, ...(secret ? { [SIGNATURE_HEADER]: signature(stored, secret) } : {}) },
    };
  const event = JSON.parse(stored) as EventBody;
  const title = headline(event);
  const text = markdown(event, title);
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
  'sending.paused': 'sending paused',
  'sending.resumed': 'sending resumed',
};

function headline(event: EventBody): string {
  return `smsdrop: ${HEADLINES[event.event]}${event.file ? ` ${event.file.name}` : ''}`;
}

function markdown(event: EventBody, title: string): string {
  const lines = [`### ${title}`, `- at: ${event.at}`];
  if (event.file)
    lines.push(
      `- file: ${event.file.name}${event.file.id === null ? '' : ` (id ${event.file.id})`}, ${event.file.status}`,
    );
  const c = event.file?.counts;
  if (c)
    lines.push(
      `- rows ${c.rows}: accepted ${c.accepted}, failed ${c.failed}, unknown ${c.unknown}, invalid ${c.invalid}, duplicates ${c.duplicates}, to send ${c.pending}`,
    );
  if (event.reason) lines.push(`- reason: ${event.reason}`);
  return lines.join('\n');
}
