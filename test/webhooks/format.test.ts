// The webhook bodies and their signatures, the receivers' URL rules, and the HTTP address rules.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { parseHttpAddress } from '../../src/config/settings/httpAddress.js';
import { authorized, checkHttpAccess } from '../../src/http/address.js';
import { dingTalkSigned, signature, webhookPost } from '../../src/webhooks/format.js';
import {
  parseWebhookUrls,
  webhookTargets,
  withoutSecrets,
} from '../../src/config/settings/webhookUrls.js';
import { ConfigError, validateConfig } from '../../src/config/index.js';

const EVENT = JSON.stringify({
  id: '0b6c9a52-93b1-4c43-8d0e-6a1f5e2d7c11',
  event: 'file.finished',
  at: '2026-01-02T03:04:05.000Z',
  file: {
    id: 1,
    name: '春季.csv',
    status: 'done',
    counts: {
      rows: 10,
      invalid: 1,
      duplicates: 0,
      repeats: 0,
      accepted: 8,
      failed: 1,
      unknown: 0,
      pending: 0,
      requests: 9,
    },
  },
});

/** The markdown messages of a WeCom and of a DingTalk group robot, as webhookPost writes them. */
interface WeComMessage {
  msgtype: string;
  markdown: { content: string };
}
interface DingTalkMessage {
  msgtype: string;
  markdown: { title: string; text: string };
}

/** The refusal a parser answered with; fails if it took the text. */
function refusal(result: object | string): string {
  if (typeof result !== 'string') assert.fail(`taken: ${JSON.stringify(result)}`);
  return result;
}

describe('webhook bodies', () => {
  it('json: the stored body as is, signed sha256=HMAC-SHA256 hex of "TIMESTAMP.BODY", with a delivery id', () => {
    const now = 1_700_000_000_500;
    const post = webhookPost('https://example.test/hook', EVENT, 'json', 'secret', now);
    const again = webhookPost('https://example.test/hook', EVENT, 'json', 'secret', now);
    assert.equal(post.body, EVENT);
    assert.equal(post.headers['X-Smsdrop-Timestamp'], '1700000000');
    assert.equal(
      post.headers['X-Smsdrop-Signature'],
      `sha256=${createHmac('sha256', 'secret').update(`1700000000.${EVENT}`).digest('hex')}`,
    );
    assert.equal(signature(1_700_000_000, EVENT, 'secret'), post.headers['X-Smsdrop-Signature']);
    assert.match(post.headers['X-Smsdrop-Delivery'] ?? '', /^[0-9a-f-]{36}$/);
    assert.notEqual(post.headers['X-Smsdrop-Delivery'], again.headers['X-Smsdrop-Delivery']);
  });

  it('robots: a file name or reason is plain text in the markdown (no link, tag or mention)', () => {
    const hostile = JSON.stringify({
      ...(JSON.parse(EVENT) as object),
      file: {
        id: 1,
        name: '[x](https://evil.test) @all <font color="red">*b*</font>\n# h.csv',
        status: 'done',
        counts: null,
      },
      reason: 'see [here](https://evil.test) @all',
    });
    for (const format of ['wecom', 'dingtalk'] as const) {
      const body = JSON.parse(
        webhookPost('https://robot.test/send', hostile, format, undefined).body,
      ) as { markdown: { content?: string; text?: string } };
      const text = body.markdown.content ?? body.markdown.text ?? '';
      assert.doesNotMatch(text, /\]\(|<font|@all|\*b\*|\n# h/, `${format}: ${text}`);
      assert.match(text, /x.*evil\.test.*all.*font.*h\.csv/, 'the name is still there to read');
    }
  });

  it('wecom: a markdown message with the file and its counts', () => {
    const body = JSON.parse(
      webhookPost(
        'https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=K',
        EVENT,
        'wecom',
        undefined,
      ).body,
    ) as WeComMessage;
    assert.equal(body.msgtype, 'markdown');
    assert.match(body.markdown.content, /file finished 春季\.csv/);
    assert.match(body.markdown.content, /accepted 8, failed 1/);
  });

  it('dingtalk: markdown with a title, the URL signed with timestamp and sign', () => {
    const post = webhookPost(
      'https://oapi.dingtalk.com/robot/send?access_token=T',
      EVENT,
      'dingtalk',
      'SECxyz',
      1_700_000_000_000,
    );
    const body = JSON.parse(post.body) as DingTalkMessage;
    assert.equal(body.msgtype, 'markdown');
    assert.equal(body.markdown.title, 'smsdrop: file finished 春季.csv');
    const url = new URL(post.url);
    assert.equal(url.searchParams.get('access_token'), 'T');
    assert.equal(url.searchParams.get('timestamp'), '1700000000000');
    assert.equal(
      url.searchParams.get('sign'),
      createHmac('sha256', 'SECxyz').update('1700000000000\nSECxyz').digest('base64'),
    );
    assert.equal(
      dingTalkSigned('https://x.test/r?access_token=T', 'SECxyz', 1_700_000_000_000),
      post.url.replace('oapi.dingtalk.com/robot/send', 'x.test/r'),
    );
  });
});

describe('webhook URLs', () => {
  it('https, or plain http to loopback only; shown without credentials or query', () => {
    assert.deepEqual(parseWebhookUrls('https://a.test/x?key=S, http://127.0.0.1:9/h'), {
      urls: ['https://a.test/x?key=S', 'http://127.0.0.1:9/h'],
    });
    assert.match(
      refusal(parseWebhookUrls('http://hooks.test/x?key=S')),
      /plain http is allowed only to a loopback host/,
    );
    assert.doesNotMatch(refusal(parseWebhookUrls('http://u:pw@hooks.test/x?key=S')), /pw|key=S/);
    assert.equal(withoutSecrets('https://u:pw@a.test/x?key=S#f'), 'https://a.test/x');
    const [target] = webhookTargets({ urls: ['https://a.test/x?key=S'] });
    assert.equal(target?.shown, 'https://a.test/x');
    assert.match(target.id, /^[0-9a-f]{16}$/);
  });

  it('the json format needs a secret; an invalid URL is named without its secrets', () => {
    assert.throws(
      () => validateConfig({ webhookUrl: 'https://a.test/x' }),
      (e: Error) => e instanceof ConfigError && /SMSDROP_WEBHOOK_SECRET/.test(e.message),
    );
    assert.equal(
      validateConfig({ webhookUrl: 'https://a.test/x?key=S', webhookFormat: 'wecom' }).webhookUrl
        ?.urls.length,
      1,
    );
    assert.throws(
      () => validateConfig({ webhookUrl: 'http://a.test/x?key=TOPSECRET', webhookSecret: 's' }),
      (e: Error) => !e.message.includes('TOPSECRET'),
    );
  });
});

describe('the HTTP address', () => {
  it('HOST:PORT or off', () => {
    assert.deepEqual(parseHttpAddress('127.0.0.1:7070'), {
      text: '127.0.0.1:7070',
      host: '127.0.0.1',
      port: 7070,
    });
    assert.deepEqual(parseHttpAddress('[::1]:0'), { text: '[::1]:0', host: '::1', port: 0 });
    assert.deepEqual(parseHttpAddress('OFF'), { text: 'off' });
    assert.match(refusal(parseHttpAddress('7070')), /expected HOST:PORT/);
    assert.match(refusal(parseHttpAddress('0.0.0.0:70000')), /expected HOST:PORT/);
    assert.equal(validateConfig({}).http.text, '127.0.0.1:7070');
  });

  it('off loopback only with a token, compared whole', () => {
    assert.throws(
      () => checkHttpAccess({ text: '0.0.0.0:7070', host: '0.0.0.0', port: 7070 }, undefined),
      { code: 'E_CONFIG_HTTP' },
    );
    checkHttpAccess({ text: '0.0.0.0:7070', host: '0.0.0.0', port: 7070 }, 'tok');
    checkHttpAccess({ text: 'localhost:7070', host: 'localhost', port: 7070 }, undefined);
    assert.equal(authorized(undefined, undefined), true);
    assert.equal(authorized('Bearer tok', 'tok'), true);
    assert.equal(authorized('Bearer to', 'tok'), false);
    assert.equal(authorized('Bearer tokk', 'tok'), false);
    assert.equal(authorized(undefined, 'tok'), false);
  });
});
