// The pool of files in progress: bounded, first come first served, and a file that must wait
// (account pause, same bytes already running) frees its place and comes back before new files.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createFilePool } from '../../src/daemon/pool.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('file pool', () => {
  it('runs at most max files at once, in the order they were added', async () => {
    const gates = new Map<string, ReturnType<typeof deferred>>();
    const started: string[] = [];
    let running = 0;
    let most = 0;
    const pool = createFilePool(
      2,
      async (name) => {
        started.push(name);
        most = Math.max(most, ++running);
        const gate = deferred();
        gates.set(name, gate);
        await gate.promise;
        running--;
      },
      assert.fail,
    );
    for (const name of ['a', 'b', 'c', 'd']) pool.add(name);
    await tick();
    assert.deepEqual(started, ['a', 'b']);
    assert.equal(pool.queued, 2);
    gates.get('b')!.resolve();
    await tick();
    assert.deepEqual(started, ['a', 'b', 'c']);
    for (const name of ['a', 'c']) gates.get(name)!.resolve();
    await tick();
    gates.get('d')!.resolve();
    await pool.onIdle();
    assert.equal(most, 2);
    assert.deepEqual(started, ['a', 'b', 'c', 'd']);
  });

  it('lets a waiting file free its place, then runs it again before new files', async () => {
    const cooldown = deferred();
    const started: string[] = [];
    let pausedOnce = false;
    const pool = createFilePool(
      1,
      (name) => {
        started.push(name);
        if (name === 'paused' && !pausedOnce) {
          pausedOnce = true;
          return Promise.resolve({ again: cooldown.promise });
        }
        return Promise.resolve(undefined);
      },
      assert.fail,
    );
    pool.add('paused');
    pool.add('new');
    await tick();
    assert.deepEqual(started, ['paused', 'new'], 'the new file runs during the wait');
    pool.add('newer');
    cooldown.resolve();
    await tick();
    await pool.onIdle();
    assert.deepEqual(
      started,
      ['paused', 'new', 'newer', 'paused'],
      'runs again once the wait is over',
    );
  });

  it('puts returning files ahead of queued new ones', async () => {
    const cooldown = deferred();
    const gate = deferred();
    const started: string[] = [];
    const pool = createFilePool(
      1,
      async (name) => {
        started.push(name);
        if (name === 'back' && started.length === 1) return { again: cooldown.promise };
        if (name === 'busy') await gate.promise;
        return undefined;
      },
      assert.fail,
    );
    pool.add('back');
    pool.add('busy');
    pool.add('queued');
    await tick();
    cooldown.resolve(); // 'back' returns while 'busy' holds the only place
    await tick();
    gate.resolve();
    await tick();
    await pool.onIdle();
    assert.deepEqual(started, ['back', 'busy', 'back', 'queued']);
  });

  it('starts nothing after stop, and reports an error that escapes a job', async () => {
    const escaped: string[] = [];
    const gate = deferred();
    const started: string[] = [];
    const pool = createFilePool(
      1,
      async (name) => {
        started.push(name);
        await gate.promise;
        throw new Error(`boom ${name}`);
      },
      (name, err) => escaped.push(`${name}: ${(err as Error).message}`),
    );
    pool.add('a');
    pool.add('b');
    pool.stop();
    pool.add('c');
    gate.resolve();
    await pool.onIdle();
    await tick();
    assert.deepEqual(started, ['a']);
    assert.deepEqual(escaped, ['a: boom a']);
  });

  it("is p-queue's queue (a priority for returning files), not one of its own", () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const source = readFileSync(path.join(root, 'src/daemon/pool.ts'), 'utf8');
    assert.match(source, /^import PQueue from 'p-queue';$/m);
    assert.doesNotMatch(source, /idleWaiters|\.shift\(\)/, 'no hand-made queue or idle waiters');
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    // p-queue 10 needs Node 22; these machines run Node 20.
    assert.match(manifest.dependencies['p-queue'] ?? '', /^\^9\./);
  });
});
