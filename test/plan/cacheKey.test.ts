// The writer's in-memory group key: two different groups (app, template, values) never share one,
// however their parts are cut, NUL characters included.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cacheKeyOf } from '../../src/plan/groups.js';

type Group = [string, string, string[]];

describe('cacheKeyOf', () => {
  it('tells apart groups whose parts run together', () => {
    const groups: Group[] = [
      ['app', '1', []],
      ['app', '1', ['']],
      ['app', '1', ['', '']],
      ['app', '1', ['a']],
      ['app', '1', ['a', '']],
      ['app', '1', ['', 'a']],
      ['app', '1', ['a,b']],
      ['app', '1', ['a', 'b']],
      ['app', '1a', []],
      ['app1', 'a', []],
      ['app', '1', ['a\u0000b']],
      ['app', '1', ['a', '\u0000b']],
      ['app', '1\u0000a', []],
      ['app\u0000', '1', ['a']],
      ['\u0000app', '1', []],
      ['app', '1', ['["app","1",["a"]]']],
      ['app', '1', ['\u0000']],
      ['app', '1', ['"']],
      ['app', '1', ['\\']],
    ];
    const keys = new Map<string, Group>();
    for (const group of groups) {
      const key = cacheKeyOf(...group);
      assert.equal(
        keys.get(key),
        undefined,
        `${JSON.stringify(group)} and ${JSON.stringify(keys.get(key))} share a key`,
      );
      keys.set(key, group);
    }
  });

  it('gives the same group the same key', () => {
    assert.equal(cacheKeyOf('app', '1', ['a', 'b']), cacheKeyOf('app', '1', ['a', 'b']));
    assert.equal(cacheKeyOf('app', '1', ['a\u0000']), cacheKeyOf('app', '1', ['a\u0000']));
  });

  it('tells apart random groups of a few characters, NUL among them', () => {
    let seed = 11;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const text = () => Array.from({ length: random(3) }, () => 'a\u0000,"'[random(4)]).join('');
    const keys = new Map<string, string>();
    for (let i = 0; i < 20_000; i++) {
      const group: Group = [`a${text()}`, `t${text()}`, Array.from({ length: random(3) }, text)];
      const key = cacheKeyOf(...group);
      const id = JSON.stringify(group);
      const seen = keys.get(key);
      assert.ok(seen === undefined || seen === id, `${id} and ${seen} share a key`);
      keys.set(key, id);
    }
  });
});
