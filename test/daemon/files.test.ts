// The daemon's everyday life, as a real process against the simulator (its own process): files
// dropped into inbox/, one of them written slowly in pieces, end in done/ with their result
// files and every message is accepted exactly once; the same bytes dropped again under another
// name (or the same name) send nothing; names never collide; other files go to failed/ with a note.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import {
  assertEachOnce,
  contactsCsv,
  CREDENTIALS,
  listDir,
  numbersOf,
  type Proc,
  readLogLines,
  resultRows,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

describe('smsdrop run: files dropped into inbox/', () => {
  let dir: string;
  let data: string;
  let sim: Simulator;
  let daemon: Proc;
  const inbox = () => path.join(data, 'inbox');
  const done = () => path.join(data, 'done');
  const failed = () => path.join(data, 'failed');
  const waitForFiles = (folder: string, names: string[]) =>
    waitUntil(
      () => names.every((n) => fs.existsSync(path.join(folder, n))),
      20_000,
      `${names.join(', ')} in ${folder}`,
      () => `${listDir(folder).join(' ')}\n${daemon.output()}`,
    );

  before(async () => {
    dir = tempDir('daemon-files');
    data = path.join(dir, 'data');
    sim = await startSimulatorProcess(dir, ['--latency-ms', '0-3']);
    // A stability time well above the slow writer's pauses (100 ms): a stalled test process must
    // not make a half-written file look complete (300 ms against 150 ms pauses did, once, under
    // load).
    daemon = await startDaemon({
      dataDir: data,
      simulator: sim,
      env: { SMSDROP_STABILITY_MS: '1500' },
    });
  });

  after(async () => {
    daemon?.kill('SIGKILL');
    await daemon?.exited;
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates its folders', () => {
    for (const folder of ['inbox', 'processing', 'done', 'failed', 'logs'])
      assert.ok(fs.statSync(path.join(data, folder)).isDirectory(), folder);
  });

  it('sends files dropped whole, written slowly in pieces, or renamed from .part, each message once', async () => {
    fs.writeFileSync(path.join(inbox(), 'whole.csv'), contactsCsv(20, { bad: 2 }));
    // Renamed into place after being written under an ignored name.
    fs.writeFileSync(path.join(inbox(), 'renamed.csv.part'), contactsCsv(10, { from: 100 }));
    // whole.csv, dropped at the same moment, finishing proves the daemon has looked at the folder
    // past the stability time; the .part file must still be where it was written, untaken.
    // (Checking that done/ is empty instead raced with whole.csv on fast machines.)
    await waitForFiles(done(), ['whole.result.csv']);
    await sleep(400);
    assert.ok(
      fs.existsSync(path.join(inbox(), 'renamed.csv.part')),
      'a .part file must not be taken',
    );
    const takenPart = [
      ...listDir(done()),
      ...listDir(path.join(data, 'processing')),
      ...listDir(failed()),
    ].filter((n) => n.startsWith('renamed'));
    assert.deepEqual(takenPart, [], 'a .part file must not be taken');
    fs.renameSync(path.join(inbox(), 'renamed.csv.part'), path.join(inbox(), 'renamed.csv'));
    // Written in pieces, each pause far shorter than the stability time (1500 ms): taken only when
    // complete.
    const slow = contactsCsv(30, { from: 200 }).split('\n');
    const fd = fs.openSync(path.join(inbox(), 'slow.csv'), 'w');
    for (let i = 0; i < slow.length; i += 5) {
      fs.writeSync(fd, slow.slice(i, i + 5).join('\n') + (i + 5 < slow.length ? '\n' : ''));
      await sleep(100);
    }
    fs.closeSync(fd);

    await waitForFiles(done(), [
      'whole.csv',
      'whole.result.csv',
      'whole.rejected.csv',
      'renamed.csv',
      'renamed.result.csv',
      'slow.csv',
      'slow.result.csv',
    ]);
    assertEachOnce(sim.records(), [...numbersOf(20), ...numbersOf(10, 100), ...numbersOf(30, 200)]);

    const whole = resultRows(path.join(done(), 'whole.result.csv'));
    assert.equal(whole.length, 22, 'one result line per input row');
    assert.deepEqual(Object.keys(whole[0]!), [
      'line',
      'phone',
      'normalised_phone',
      'status',
      'status_code',
      'message',
      'sms_message_sid',
      'date_created',
    ]);
    assert.equal(
      whole.filter(
        (r) =>
          r.status === 'accepted' &&
          r.status_code === '000000' &&
          /^[0-9a-f]{32}$/.test(r.sms_message_sid ?? ''),
      ).length,
      20,
    );
    assert.equal(whole.filter((r) => r.status === 'invalid').length, 2);
    assert.equal(resultRows(path.join(done(), 'whole.rejected.csv')).length, 2);
    assert.ok(
      !fs.existsSync(path.join(done(), 'slow.rejected.csv')),
      'no rejected file without invalid rows',
    );
    assert.equal(
      resultRows(path.join(done(), 'slow.result.csv')).filter((r) => r.status === 'accepted')
        .length,
      30,
      'the slow file was taken complete',
    );
    assert.deepEqual(listDir(path.join(data, 'processing')), []);
    assert.deepEqual(listDir(inbox()), []);
  });

  it('holds a file paused inside its last row (no line break at its end) until that row is complete', async () => {
    const content = contactsCsv(10, { from: 400 });
    const cut = content.length - 6; // the last row ends ",1,code409,5\n": cut after "code"
    const file = path.join(inbox(), 'paused.csv');
    fs.writeFileSync(file, content.slice(0, cut));
    // Past the stability time (1500 ms), short of four more: a copy paused inside its last row.
    await waitUntil(
      () => /paused\.csv does not end with a line break/.test(daemon.output()),
      10_000,
      'the wait for the last row',
      daemon.output,
    );
    await sleep(1500);
    assert.ok(fs.existsSync(file), 'not taken while its last row may be cut short');
    fs.appendFileSync(file, content.slice(cut));
    await waitForFiles(done(), ['paused.csv', 'paused.result.csv']);
    assertEachOnce(
      sim.records().filter((r) => r.to.some((n) => n.startsWith('138000004'))),
      numbersOf(10, 400),
    );
    const last = sim.records().find((r) => r.to.includes('13800000409'));
    assert.deepEqual(last?.datas, ['code409', '5'], 'the last row sent whole');
  });

  it('says so loudly when a file grows after it was sent and filed (a copy that paused too long); the complete file then sends only the rest', async () => {
    const before = sim.records().length;
    const whole = contactsCsv(20, { from: 800 });
    const part = whole.split('\n').slice(0, 11).join('\n') + '\n'; // header and 10 rows
    fs.writeFileSync(path.join(inbox(), 'late.csv'), part);
    await waitForFiles(done(), ['late.csv', 'late.result.csv']);
    fs.appendFileSync(path.join(done(), 'late.csv'), whole.slice(part.length)); // the copy goes on, into done/
    await waitForFiles(done(), ['late.grown.txt']);
    assert.match(
      fs.readFileSync(path.join(done(), 'late.grown.txt'), 'utf8'),
      /^late\.csv grew after it was read and sent \(\d+ bytes, now \d+\)/,
    );
    // The log is written asynchronously: the note can be on disk before its log line.
    const logged = () =>
      readLogLines<{ event?: string }>(path.join(data, 'logs')).filter(
        (l) => l.event === 'file-grew-after-done',
      );
    await waitUntil(() => logged().length > 0, 10_000, 'the log line', daemon.output);
    assert.equal(logged().length, 1);
    fs.writeFileSync(path.join(inbox(), 'late (complete).csv'), whole);
    await waitForFiles(done(), ['late (complete).result.csv']);
    assertEachOnce(sim.records().slice(before), numbersOf(20, 800));
  });

  it('sends nothing for the same bytes dropped again under another name, and says whose duplicate it is', async () => {
    const before = sim.records().length;
    fs.copyFileSync(path.join(done(), 'whole.csv'), path.join(inbox(), 'copy of whole.csv'));
    await waitForFiles(done(), [
      'copy of whole.csv',
      'copy of whole.duplicate.txt',
      'copy of whole.result.csv',
    ]);
    assert.match(
      fs.readFileSync(path.join(done(), 'copy of whole.duplicate.txt'), 'utf8'),
      /^duplicate of whole\.csv/,
    );
    assert.deepEqual(
      resultRows(path.join(done(), 'copy of whole.result.csv')),
      resultRows(path.join(done(), 'whole.result.csv')),
      "the original's results",
    );
    await sleep(300);
    assert.equal(sim.records().length, before, 'nothing new sent');
  });

  it('sends each message once when a list and its copy saved otherwise are dropped together, and warns of the repeats', async () => {
    const before = sim.records().length;
    const list = contactsCsv(40, { from: 600 });
    fs.writeFileSync(path.join(inbox(), 'list.csv'), list);
    // What Excel makes of it: CRLF, and the rows after the first ten in another order.
    const lines = list.trimEnd().split('\n');
    fs.writeFileSync(
      path.join(inbox(), 'list (saved).csv'),
      `${[...lines.slice(0, 11), ...lines.slice(11).reverse()].join('\r\n')}\r\n`,
    );
    await waitForFiles(done(), ['list.result.csv', 'list (saved).result.csv']);
    assertEachOnce(sim.records().slice(before), numbersOf(40, 600));
    const statuses = [
      ...resultRows(path.join(done(), 'list.result.csv')),
      ...resultRows(path.join(done(), 'list (saved).result.csv')),
    ].map((r) => r.status);
    assert.deepEqual(
      [
        statuses.filter((s) => s === 'accepted').length,
        statuses.filter((s) => s === 'duplicate').length,
      ],
      [40, 40],
    );
    // Read one after the other, whichever came first: the other file's rows are all repeats.
    const warned = readLogLines<{
      event?: string;
      file?: string;
      repeats?: number;
      message: string;
    }>(path.join(data, 'logs')).filter(
      (l) => l.event === 'file-repeats' && l.file?.startsWith('list'),
    );
    assert.equal(warned.length, 1, daemon.output());
    assert.equal(warned[0]!.repeats, 40);
    assert.match(
      warned[0]!.message,
      /^list( \(saved\))?\.csv: 40 row\(s\) not sent: another file sent the same message to their number/,
    );
  });

  it('keeps both when the same name is dropped twice', async () => {
    const before = sim.records().length;
    fs.writeFileSync(path.join(inbox(), 'whole.csv'), contactsCsv(3, { from: 300 }));
    await waitForFiles(done(), ['whole (2).csv', 'whole (2).result.csv']);
    assert.equal(
      resultRows(path.join(done(), 'whole.result.csv')).length,
      22,
      'the first file and its results are untouched',
    );
    assert.equal(resultRows(path.join(done(), 'whole (2).result.csv')).length, 3);
    assertEachOnce(sim.records().slice(before), numbersOf(3, 300));
  });

  it('moves refused files and non-CSV files to failed/ with a note, and ignores names being written', async () => {
    fs.writeFileSync(path.join(inbox(), 'no-phone.csv'), 'name,data1\nAda,1\n');
    fs.writeFileSync(path.join(inbox(), 'report.xlsx'), 'not a csv');
    fs.writeFileSync(path.join(inbox(), 'UPPER.CSV'), contactsCsv(2, { from: 400 }));
    for (const ignored of ['.hidden.csv', '~$lock.csv', 'download.csv.crdownload', 'x.tmp'])
      fs.writeFileSync(path.join(inbox(), ignored), contactsCsv(1, { from: 500 }));
    await waitForFiles(failed(), [
      'no-phone.csv',
      'no-phone.error.txt',
      'report.xlsx',
      'report.xlsx.error.txt',
    ]);
    await waitForFiles(done(), ['UPPER.CSV', 'UPPER.result.csv']);
    assert.match(
      fs.readFileSync(path.join(failed(), 'no-phone.error.txt'), 'utf8'),
      /reason: E_NO_PHONE_COLUMN: no-phone\.csv, line 1: no phone column/,
      'named as it is now, not by its path in processing/',
    );
    assert.match(
      fs.readFileSync(path.join(failed(), 'report.xlsx.error.txt'), 'utf8'),
      /reason: E_FILE_EXCEL: this is an Excel workbook: save it as CSV UTF-8/,
    );
    await sleep(500);
    assert.deepEqual(
      fs.readdirSync(inbox()).sort(),
      ['.hidden.csv', 'download.csv.crdownload', 'x.tmp', '~$lock.csv'],
      'ignored names stay',
    );
    assert.ok(
      !sim.records().some((r) => r.to.includes(numbersOf(1, 500)[0]!)),
      'nothing sent from ignored files',
    );
  });

  it('logs a line per file taken, finished and failed, and stops cleanly on SIGTERM without printing the token', async () => {
    daemon.kill('SIGTERM');
    const { code } = await daemon.exited;
    assert.equal(code, 0, daemon.output());
    const logDir = path.join(data, 'logs');
    const logFiles = listDir(logDir).filter((n) => /^smsdrop-.*\.log$/.test(n));
    assert.ok(logFiles.length > 0, 'a JSON log file');
    const lines = readLogLines<{ event?: string; message: string; file?: string }>(logDir);
    const events = (event: string) => lines.filter((l) => l.event === event).map((l) => l.file);
    assert.ok(events('file-taken').includes('slow.csv'));
    assert.ok(events('file-finished').includes('whole.csv'));
    assert.ok(events('file-duplicate').includes('copy of whole.csv'));
    assert.ok(events('file-failed').includes('no-phone.csv'));
    assert.match(lines.at(-1)!.message, /stopped cleanly/);
    const everything =
      daemon.output() + logFiles.map((n) => fs.readFileSync(path.join(logDir, n), 'utf8')).join('');
    assert.ok(!everything.includes(CREDENTIALS.SMSDROP_AUTH_TOKEN), 'the auth token never appears');
  });
});

describe('smsdrop run without credentials', () => {
  it('says loudly that the built-in simulator is used and nothing leaves the machine, and still works', async () => {
    const data = path.join(tempDir('daemon-demo'), 'data');
    const daemon = await startDaemon({ dataDir: data });
    try {
      assert.match(daemon.output(), /warn.*BUILT-IN SIMULATOR.*NOTHING LEAVES THIS MACHINE/);
      fs.writeFileSync(path.join(data, 'inbox', 'demo.csv'), contactsCsv(3));
      await waitUntil(
        () => fs.existsSync(path.join(data, 'done', 'demo.result.csv')),
        20_000,
        'done/demo.result.csv',
        daemon.output,
      );
      assert.equal(
        resultRows(path.join(data, 'done', 'demo.result.csv')).filter(
          (r) => r.status === 'accepted',
        ).length,
        3,
      );
      daemon.kill('SIGINT');
      assert.equal((await daemon.exited).code, 0, daemon.output());
    } finally {
      daemon.kill('SIGKILL');
      await daemon.exited;
      fs.rmSync(path.dirname(data), { recursive: true, force: true });
    }
  });
});
