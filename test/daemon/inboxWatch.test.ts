// No file left unseen in inbox/, through the real daemon: a same-named file dropped the moment the
// previous one was taken (chokidar calls that arrival "change", not "add"), a file no event
// announces (found by the rescan, and the log says so), and the files waiting shown by
// `smsdrop status` and /api/status.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import type { StatusReport } from '../../src/report/status.js';
import {
  cleanEnv,
  contactsCsv,
  httpUrlOf,
  listDir,
  type Proc,
  readLogLines,
  startDaemon,
  startProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

interface LogLine {
  event?: string;
  dropped?: string;
}

/** Hours: no rescan within a test, so only the watcher's events can take a file. */
const NEVER_MS = '3600000';
/** chokidar polling every 10 min: no event within a test, as on a network share. */
const NO_EVENTS = { SMSDROP_INBOX_POLL_MS: '600000' };

describe('smsdrop run: no file left unseen in inbox/', () => {
  const daemons: Proc[] = [];
  const dirs: string[] = [];

  after(async () => {
    for (const daemon of daemons) {
      daemon.kill('SIGKILL');
      await daemon.exited;
    }
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function daemonIn(prefix: string, env: Record<string, string>) {
    const dir = tempDir(prefix);
    dirs.push(dir);
    const data = path.join(dir, 'data');
    const daemon = await startDaemon({
      dataDir: data,
      env: { SMSDROP_STABILITY_MS: '200', ...env },
    });
    daemons.push(daemon);
    return { dir, data, inbox: path.join(data, 'inbox'), daemon };
  }

  it('takes a same-named file dropped the moment the previous one was taken, 20 rounds in a row', async () => {
    const { dir, data, inbox, daemon } = await daemonIn('inbox-race', {
      SMSDROP_INBOX_RESCAN_MS: NEVER_MS,
    });
    const staging = path.join(dir, 'staging');
    fs.mkdirSync(staging);
    const target = path.join(inbox, 'a.csv');
    const ROUNDS = 20;
    for (let round = 1; round <= ROUNDS; round++) {
      // a different file each round: other bytes are a new file, not a duplicate
      const next = path.join(staging, `a${round}.csv`);
      fs.writeFileSync(next, contactsCsv(1, { from: round, tag: `round${round}` }));
      fs.renameSync(next, target);
      const deadline = Date.now() + 15_000;
      while (fs.existsSync(target) && Date.now() < deadline) await nextTurn();
      assert.ok(
        !fs.existsSync(target),
        `round ${round}: a.csv still in inbox/ 15 s after it was dropped\n${daemon.output()}`,
      );
    }
    const done = path.join(data, 'done');
    const csvs = () => listDir(done).filter((n) => !/\.(result|rejected)\.csv$/.test(n));
    await waitUntil(
      () => csvs().length === ROUNDS,
      60_000,
      `${ROUNDS} files in done/`,
      () => listDir(done).join('\n'),
    );
    const log = readLogLines<LogLine>(path.join(data, 'logs'));
    const taken = log.filter((l) => l.event === 'file-taken' && l.dropped === 'a.csv');
    assert.equal(taken.length, ROUNDS, 'each file taken once');
    assert.deepEqual(
      log.filter((l) => l.event === 'file-found-by-rescan'),
      [],
      'each found by its event',
    );
  });

  it('takes a file no event announces, found by the rescan, and says so', async () => {
    const { data, inbox, daemon } = await daemonIn('inbox-rescan', {
      ...NO_EVENTS,
      SMSDROP_INBOX_RESCAN_MS: '1000',
    });
    fs.writeFileSync(path.join(inbox, 'unseen.csv'), contactsCsv(3, { tag: 'unseen' }));
    const done = path.join(data, 'done');
    await waitUntil(
      () => listDir(done).includes('unseen.result.csv'),
      30_000,
      'unseen.csv sent and filed',
      daemon.output,
    );
    assert.match(daemon.output(), /unseen\.csv was found by the rescan of inbox\//);
    const found = readLogLines<LogLine>(path.join(data, 'logs')).filter(
      (l) => l.event === 'file-found-by-rescan',
    );
    assert.deepEqual(
      found.map((l) => l.dropped),
      ['unseen.csv'],
    );
  });

  it('shows the files waiting in inbox/ and for how long: smsdrop status and /api/status', async () => {
    const { data, inbox, daemon } = await daemonIn('inbox-waiting', {
      ...NO_EVENTS,
      SMSDROP_INBOX_RESCAN_MS: NEVER_MS,
    });
    fs.writeFileSync(path.join(inbox, 'waiting.csv'), contactsCsv(2, { tag: 'waiting' }));
    fs.writeFileSync(path.join(inbox, 'draft.csv.part'), 'phone\n'); // being written: not listed
    const dropped = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const env = cleanEnv({ SMSDROP_DATA_DIR: data });

    const json = startProcess(['status', '--json'], env);
    await json.exited;
    const status = JSON.parse(json.output()) as StatusReport;
    assert.deepEqual(
      status.inbox.map((f) => f.name),
      ['waiting.csv'],
    );
    const [waiting] = status.inbox;
    assert.ok(waiting!.waiting_seconds >= 2, `waiting ${waiting!.waiting_seconds} s`);
    assert.ok(Math.abs(Date.parse(waiting!.since) - dropped) < 1_000, waiting!.since);

    const text = startProcess(['status'], env);
    await text.exited;
    assert.match(text.output(), /^inbox {6}1 file\(s\) waiting: waiting\.csv \(\d+ s\)$/m);

    const api = (await (await fetch(`${httpUrlOf(daemon)}/api/status`)).json()) as {
      status: StatusReport;
    };
    assert.deepEqual(
      api.status.inbox.map((f) => f.name),
      ['waiting.csv'],
    );
  });
});
