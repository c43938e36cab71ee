// The data directory's lock (src/datadir/lock.ts): one process at a time, and nothing a killed
// process left keeps the next one out.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { acquireLock } from '../../src/datadir/lock.js';
import { errorCode } from '../../src/errors.js';

const freshDir = () => mkdtempSync(path.join(os.tmpdir(), 'smsdrop-lock-'));

/** A pid no process has: a child's, once it has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid;
}

describe('the data directory lock', () => {
  it('appears whole: the lock file holds its holder, and no draft is left', () => {
    const dir = freshDir();
    const lock = acquireLock(dir, 'smsdrop test');
    const holder = JSON.parse(readFileSync(path.join(dir, 'smsdrop.lock'), 'utf8')) as {
      pid: number;
      what: string;
    };
    assert.equal(holder.pid, process.pid);
    assert.equal(holder.what, 'smsdrop test');
    assert.deepEqual(readdirSync(dir), ['smsdrop.lock']);
    lock.release();
    assert.deepEqual(readdirSync(dir), []);
  });

  it('takes over at once a lock left empty (a process killed between creating and writing it)', () => {
    const dir = freshDir();
    writeFileSync(path.join(dir, 'smsdrop.lock'), '');
    const lock = acquireLock(dir, 'smsdrop test');
    assert.equal(
      (JSON.parse(readFileSync(path.join(dir, 'smsdrop.lock'), 'utf8')) as { pid: number }).pid,
      process.pid,
    );
    lock.release();
  });

  it('removes the drafts of dead processes', () => {
    const dir = freshDir();
    writeFileSync(path.join(dir, `smsdrop.lock.new-${deadPid()}`), '{}');
    const lock = acquireLock(dir, 'smsdrop test');
    assert.deepEqual(readdirSync(dir), ['smsdrop.lock']);
    lock.release();
  });

  it('keeps out while the holder lives', () => {
    const dir = freshDir();
    const holder = { pid: process.ppid, what: 'smsdrop run', since: new Date().toISOString() };
    writeFileSync(path.join(dir, 'smsdrop.lock'), JSON.stringify(holder));
    assert.throws(
      () => acquireLock(dir, 'smsdrop other'),
      (err: unknown) => errorCode(err) === 'E_DATA_DIR_LOCKED',
    );
  });
});
