// What a request leaves in the journal, on a real run against the simulator: its reqId (16 letters
// and digits, the one the provider received, kept once, on the batch), for an acceptance its
// smsMessageSid on the batch only (the attempt's reason stays empty), and its message's app id
// once for the journal.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newReqId, REQ_ID_LENGTH } from '../../src/journalRules/outcomes.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { APP, cleanUp, sendCsv, simulator, tempDir, writeCsvFile } from '../report/helpers.js';
import { openSqliteFile, type SqliteFile } from '../sqliteFile.js';

after(cleanUp);

const REQ_ID = /^[0-9A-Za-z]{16}$/;

describe('the bytes a request leaves in the journal', () => {
  let sim: RunningSimulator;
  let db: SqliteFile;

  before(async () => {
    const dir = tempDir();
    sim = await simulator();
    const lines = ['phone,templateId,data1,data2'];
    for (let i = 0; i < 6; i++) lines.push(`1390000000${i},1,order ${i},5`);
    const result = await sendCsv(
      path.join(dir, 'data'),
      sim,
      writeCsvFile(dir, 'personal.csv', lines),
    );
    assert.equal(result.outcome, 'finished');
    db = openSqliteFile(path.join(dir, 'data'));
  });
  after(() => db?.close());

  it('a reqId is 16 letters and digits, and the provider received the one the journal keeps', () => {
    const batches = db.prepare('SELECT id, req_id FROM batches ORDER BY id').all() as Array<{
      id: number;
      req_id: string;
    }>;
    assert.equal(batches.length, 6);
    for (const b of batches) assert.match(b.req_id, REQ_ID);
    const received = sim.records.map((r) => r.reqId).sort();
    assert.deepEqual(received, batches.map((b) => b.req_id).sort());
  });

  it("an accepted attempt keeps no reason: its batch holds the provider's smsMessageSid", () => {
    const rows = db
      .prepare(
        `SELECT a.outcome, a.reason, a.req_id, b.req_id AS batch_req_id,
           typeof(b.sms_message_sid) AS sid_type, length(b.sms_message_sid) AS sid_bytes,
           typeof(b.date_created) AS date_type
         FROM attempts a JOIN batches b ON b.id = a.batch_id`,
      )
      .all() as Array<Record<string, string | null>>;
    assert.equal(rows.length, 6);
    for (const r of rows) {
      assert.equal(r.outcome, 'accepted');
      assert.equal(r.reason, null);
      assert.equal(r.req_id, '', 'the batch’s own req_id, not kept twice');
      // the provider's 32 hex digits as their 16 bytes, its yyyyMMddHHmmss as 7
      assert.deepEqual([r.sid_type, r.sid_bytes, r.date_type], ['blob', 16, 'blob']);
    }
    const sids = db
      .prepare("SELECT sms_message_sid FROM v_recipients WHERE status = 'accepted'")
      .pluck()
      .all();
    assert.equal(new Set(sids).size, 6, 'each row reads its own smsMessageSid');
    for (const sid of sids) assert.match(String(sid), /^[0-9a-f]{32}$/);
    assert.deepEqual(
      sim.records.map((r) => r.smsMessageSid).sort(),
      [...sids].sort(),
      'the smsMessageSid the provider gave, read back',
    );
  });

  it("keeps no code on an accepted batch, and reads back the provider's success on every row", () => {
    assert.deepEqual(db.prepare('SELECT DISTINCT state, status_code FROM batches').raw().all(), [
      ['accepted', null],
    ]);
    assert.deepEqual(db.prepare('SELECT DISTINCT status_code FROM v_recipients').pluck().all(), [
      '000000',
    ]);
  });

  it('keeps the app id once, each group referring to it, and reads it back on every row', () => {
    assert.deepEqual(db.prepare('SELECT app_id FROM apps').pluck().all(), [APP]);
    assert.deepEqual(db.prepare('SELECT DISTINCT app_id, typeof(app) FROM groups').raw().all(), [
      ['', 'integer'],
    ]);
    assert.deepEqual(db.prepare('SELECT DISTINCT app_id FROM v_recipients').pluck().all(), [APP]);
  });

  it('keeps the process that sent once, each attempt referring to it', () => {
    assert.deepEqual(
      db
        .prepare('SELECT DISTINCT typeof(node), node = (SELECT id FROM processes) FROM attempts')
        .raw()
        .all(),
      [['text', 1]],
    );
    assert.match(
      String(db.prepare('SELECT name FROM processes').pluck().get()),
      /^.+:\d+$/,
      'host and pid',
    );
  });

  it('keeps a phone cell that is its number once, and reads it back as the cell', () => {
    assert.deepEqual(db.prepare('SELECT DISTINCT phone_raw FROM rows').pluck().all(), ['']);
    const recipients = db.prepare('SELECT phone_raw, phone FROM v_recipients').raw().all() as [
      string,
      string,
    ][];
    assert.equal(recipients.length, 6);
    for (const [raw, phone] of recipients) assert.equal(raw, phone);
  });

  it('fresh reqIds never repeat, and use every letter and digit', () => {
    const ids = Array.from({ length: 20_000 }, () => newReqId());
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids.slice(0, 100)) assert.equal(id.length, REQ_ID_LENGTH);
    assert.equal(new Set(ids.join('')).size, 62);
  });
});
