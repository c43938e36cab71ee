import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { createSigner, formatTimestamp, signRequest } from '../../src/provider/sign.js';

const SID = '8a216da8demo0000000000000000acc1';
const TOKEN = 'demo0token0000000000000000000001';

describe('signRequest', () => {
  it('sig is the uppercase hex MD5 of sid + token + timestamp', () => {
    const ts = '20240102030405';
    const expected = createHash('md5').update(`${SID}${TOKEN}${ts}`).digest('hex').toUpperCase();
    const { sig } = signRequest(SID, TOKEN, ts);
    assert.equal(sig, expected);
    assert.match(sig, /^[0-9A-F]{32}$/);
  });

  it('matches a fixed vector (md5("abc") is 900150983CD24FB0D6963F7D28E17F72)', () => {
    assert.equal(signRequest('a', 'b', 'c').sig, '900150983CD24FB0D6963F7D28E17F72');
  });

  it('authorization is plain Base64 of sid:timestamp, no scheme prefix', () => {
    const { authorization } = signRequest(SID, TOKEN, '20240102030405');
    assert.equal(Buffer.from(authorization, 'base64').toString('utf8'), `${SID}:20240102030405`);
    assert.doesNotMatch(authorization, /^Basic /);
    assert.ok(!authorization.includes(Buffer.from(TOKEN).toString('base64')));
  });

  it('a different timestamp gives a different sig and authorization', () => {
    const a = signRequest(SID, TOKEN, '20240102030405');
    const b = signRequest(SID, TOKEN, '20240102030406');
    assert.notEqual(a.sig, b.sig);
    assert.notEqual(a.authorization, b.authorization);
  });
});

describe('formatTimestamp', () => {
  const instant = new Date(Date.UTC(2024, 0, 1, 20, 30, 5));

  it('formats yyyyMMddHHmmss in UTC', () => {
    assert.equal(formatTimestamp(instant, 'UTC'), '20240101203005');
  });

  it('formats in Asia/Shanghai, 8 hours ahead, across the date line', () => {
    assert.equal(formatTimestamp(instant, 'Asia/Shanghai'), '20240102043005');
  });

  it('writes midnight as 00, not 24', () => {
    assert.equal(
      formatTimestamp(new Date(Date.UTC(2024, 1, 29, 0, 0, 0)), 'UTC'),
      '20240229000000',
    );
  });

  it('defaults to the host local zone', () => {
    const d = new Date(2023, 11, 31, 23, 59, 58); // local wall clock
    assert.equal(formatTimestamp(d), '20231231235958');
  });

  it('gives the same answer when the cached formatter is reused', () => {
    const first = formatTimestamp(instant, 'America/New_York');
    assert.equal(first, '20240101153005');
    assert.equal(formatTimestamp(instant, 'America/New_York'), first);
  });
});

describe('createSigner', () => {
  it('signs each timestamp as signRequest does, the same second twice and a new one', () => {
    const sign = createSigner(SID, TOKEN);
    for (const ts of ['20240102030405', '20240102030405', '20240102030406', '20240102030405'])
      assert.deepEqual(sign(ts), signRequest(SID, TOKEN, ts));
  });
});
