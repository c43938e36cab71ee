// The intake on a thread of its own (SMSDROP_INTAKE_THREAD): it writes the file's rows on its own
// connection while this thread's queued journal writes go on, hands the journal over between its
// chunks, and a file it refuses is refused here with the same code, line and reason. The whole
// path, with sending and crashes, is in test/pipeline/overlap.test.ts (run with the thread on and
// off).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from '../../src/journal/sqlite.js';
import { openJournal } from '../../src/journal/open.js';
import { handleOf } from '../../src/journal/handle.js';
import { writeQueueFor } from '../../src/journal/writeQueue.js';
import { FileRefusedError } from '../../src/intake/errors.js';
import { startIntakeThread } from '../../src/pipeline/intakeThread.js';
import { sqliteOf } from './sqliteOf.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-intake-thread-'));
const journalFile = path.join(dir, 'journal.sqlite');
const db = openJournal(journalFile);
sqliteOf(db).exec('CREATE TABLE scratch (what TEXT NOT NULL)');
const handle = handleOf(db);
const reader = new Database(journalFile, { readonly: true });
after(async () => {
  reader.close();
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
});

const ROWS = 20_000;

/** ROWS rows in two groups, each number once. */
function csv(name: string): { file: string; size: number } {
  const lines = ['phone,template,data1'];
  for (let i = 0; i < ROWS; i++) lines.push(`137${String(i).padStart(8, '0')},1,${i % 2}`);
  const file = path.join(dir, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, size: Buffer.byteLength(`${lines.join('\n')}\n`) };
}

async function startOn(file: string, size: number, quoted: boolean, onReleased = () => {}) {
  const record = await handle.files.create({
    sha256: `${path.basename(file)}-sha`,
    name: path.basename(file),
    path: file,
    size,
    encoding: 'utf-8',
  });
  const kept = await handle.files.beginIntake(record.id);
  const thread = startIntakeThread(
    handle.files.intakeWriter!()!,
    {
      synchronous: 'normal',
      fileId: record.id,
      filePath: file,
      size,
      read: {
        encoding: 'utf-8',
        bytes: size,
        allowInternational: false,
        quoted,
        defaultAppId: 'APP1',
      },
      maxPerRequest: 200,
      kept,
      window: undefined,
      overlap: !quoted,
    },
    onReleased,
  );
  return { fileId: record.id, thread };
}

const count = (query: string, ...params: unknown[]) =>
  reader
    .prepare(query)
    .pluck()
    .get(...params) as number;

describe('the intake on its own thread', () => {
  it("writes the file on its own connection, handing the journal to this thread's queued writes between chunks", async () => {
    const { file, size } = csv('two-groups.csv');
    let released = 0;
    const { fileId, thread } = await startOn(file, size, false, () => released++);
    let finished = false;
    void thread.finished.then(() => (finished = true));
    const queue = writeQueueFor(db);
    let writesDuringIntake = 0;
    for (let i = 0; !finished; i++) {
      await queue.run(() =>
        sqliteOf(db).prepare('INSERT INTO scratch (what) VALUES (?)').run(`w${i}`),
      );
      if (!finished) writesDuringIntake++;
    }
    await thread.finished;
    const rows = count('SELECT count(*) FROM rows WHERE file_id = ?', fileId);
    assert.equal(rows, ROWS);
    // Two groups of 10,000 numbers: 50 full batches each, all due.
    assert.equal(count('SELECT count(*) FROM batches WHERE file_id = ?', fileId), 100);
    assert.equal(
      count('SELECT count(*) FROM batches WHERE file_id = ? AND next_attempt_at = 0', fileId),
      100,
    );
    assert.ok(released > 0, 'batches released while the file was read were told of');
    assert.ok(writesDuringIntake > 0, 'queued writes went through while the thread wrote');
    // Each queued write was committed when its promise settled.
    assert.equal(count('SELECT count(*) FROM scratch'), writesDuringIntake + 1);
  });

  it('a file refused on the thread is refused with its code, line and reason', async () => {
    const text =
      'phone,template,data1\n13800138000,1,a\n13800138001,1,"never closed\n13800138002,1,c\n';
    const file = path.join(dir, 'quote.csv');
    writeFileSync(file, text);
    const { thread } = await startOn(file, Buffer.byteLength(text), true);
    await assert.rejects(thread.finished, (err: unknown) => {
      assert.ok(err instanceof FileRefusedError, String(err));
      assert.equal(err.code, 'E_FILE_QUOTE');
      assert.equal(err.file, file);
      assert.equal(err.line, 3);
      assert.match(err.reason, /double quote opened here is never closed/);
      return true;
    });
  });
});
