// reqId memory: only accepted requests are remembered, per natural day, across a restart too.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { readRecordFile } from '../../src/simulator/index.js';
import { call, stampAt, start } from './helpers.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-sim-reqid-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('simulator reqId memory', () => {
  test('an accepted reqId is refused with 160054 for the rest of the day', async () => {
    const sim = await start();
    try {
      assert.equal(
        (await call(sim, { payload: { to: '13800000001', reqId: 'batch-1' } })).code,
        '000000',
      );
      assert.equal(
        (await call(sim, { payload: { to: '13800000001', reqId: 'batch-1' } })).code,
        '160054',
      );
      assert.equal(
        (await call(sim, { format: 'xml', payload: { to: '13800000002', reqId: 'batch-1' } })).code,
        '160054',
      );
      assert.equal(sim.records.length, 1);
    } finally {
      await sim.close();
    }
  });

  test('a refused request does not use up its reqId', async () => {
    const sim = await start({ blocked: ['13900000009'] });
    try {
      assert.equal(
        (await call(sim, { payload: { to: '13900000009', reqId: 'batch-2' } })).code,
        '160034',
      );
      assert.equal(
        (await call(sim, { sig: 'WRONG', payload: { to: '13800000001', reqId: 'batch-2' } })).code,
        '111109',
      );
      assert.equal(
        (await call(sim, { payload: { to: '13800000001', datas: ['x'], reqId: 'batch-2' } })).code,
        '160052',
      );
      assert.equal(
        (await call(sim, { payload: { to: '13800000001', reqId: 'batch-2' } })).code,
        '000000',
      );
    } finally {
      await sim.close();
    }
  });

  test('a status fault or a cut before accepting leaves the reqId free; a cut after accepting does not', async () => {
    const statusFault = await start({
      faults: [{ kind: 'status', statusCode: '160000', everyNth: 1 }],
    });
    try {
      assert.equal(
        (await call(statusFault, { payload: { to: '13800000001', reqId: 'f-1' } })).code,
        '160000',
      );
    } finally {
      await statusFault.close();
    }
    const cutBefore = await start({ faults: [{ kind: 'cut-before-accept', everyNth: 2 }] });
    try {
      assert.equal(
        (await call(cutBefore, { payload: { to: '13800000001', reqId: 'other' } })).code,
        '000000',
      );
      await assert.rejects(call(cutBefore, { payload: { to: '13800000001', reqId: 'f-2' } }));
      assert.equal(
        (await call(cutBefore, { payload: { to: '13800000001', reqId: 'f-2' } })).code,
        '000000',
      );
    } finally {
      await cutBefore.close();
    }
    const cutAfter = await start({ faults: [{ kind: 'cut-after-accept', everyNth: 1 }] });
    try {
      await assert.rejects(call(cutAfter, { payload: { to: '13800000001', reqId: 'f-3' } }));
      // The retry with the same reqId is refused as a duplicate (cut again, so look at the count).
      await assert.rejects(call(cutAfter, { payload: { to: '13800000001', reqId: 'f-3' } }));
      assert.equal(cutAfter.records.length, 1);
    } finally {
      await cutAfter.close();
    }
  });

  test('the next day in China the reqId may be used again, whatever zone the client signs in', async () => {
    // The simulator here reads timestamps in UTC; China's day turns at 16:00 UTC.
    let now = new Date('2024-05-01T10:00:00Z');
    const sim = await start({ now: () => now });
    try {
      assert.equal(
        (await call(sim, { stamp: stampAt(now), payload: { to: '13800000001', reqId: 'daily' } }))
          .code,
        '000000',
      );
      now = new Date('2024-05-01T15:59:59Z');
      assert.equal(
        (await call(sim, { stamp: stampAt(now), payload: { to: '13800000001', reqId: 'daily' } }))
          .code,
        '160054',
      );
      now = new Date('2024-05-01T16:00:01Z'); // still 1 May in UTC, the signing zone: 2 May in China
      assert.equal(
        (await call(sim, { stamp: stampAt(now), payload: { to: '13800000001', reqId: 'daily' } }))
          .code,
        '000000',
      );
    } finally {
      await sim.close();
    }
  });

  test("the day boundary is China's with a simulator in Asia/Shanghai too (16:00 UTC)", async () => {
    let now = new Date('2024-05-01T15:00:00Z');
    const sim = await start({ now: () => now, timezone: 'Asia/Shanghai' });
    try {
      assert.equal(
        (await call(sim, { stamp: stampAt(now, 8), payload: { to: '13800000001', reqId: 'sh' } }))
          .code,
        '000000',
      );
      now = new Date('2024-05-01T16:00:01Z');
      assert.equal(
        (await call(sim, { stamp: stampAt(now, 8), payload: { to: '13800000001', reqId: 'sh' } }))
          .code,
        '000000',
      );
    } finally {
      await sim.close();
    }
  });

  test("a simulator restarted on the same record file still refuses today's reqIds", async () => {
    const recordFile = path.join(dir, 'restart.jsonl');
    const first = await start({ recordFile });
    assert.equal(
      (await call(first, { payload: { to: '13800000001', reqId: 'survives' } })).code,
      '000000',
    );
    await first.close();
    const second = await start({ recordFile });
    try {
      assert.equal(
        (await call(second, { payload: { to: '13800000001', reqId: 'survives' } })).code,
        '160054',
      );
      assert.equal(second.records.length, 0);
    } finally {
      await second.close();
    }
  });
});

describe('simulator record file', () => {
  test('one JSON line per accepted request, nothing for refused ones, all there when close() resolves', async () => {
    const recordFile = path.join(dir, 'nested', 'record.jsonl');
    const sim = await start({ recordFile });
    await call(sim, {
      payload: { to: '13800000001,13800000002', datas: [' a ', '中文'], reqId: 'r-1' },
    });
    await call(sim, { payload: { to: 'bad' } });
    await call(sim, { format: 'xml', payload: { to: '13800000003', templateId: '3', datas: [] } });
    const accepted = sim.records.slice();
    await sim.close();
    const lines = readFileSync(recordFile, 'utf8').trimEnd().split('\n');
    assert.equal(lines.length, 2);
    assert.deepEqual(JSON.parse(lines[0]!), {
      time: '2024-05-01T12:00:00.000Z',
      smsMessageSid: accepted[0]!.smsMessageSid,
      appId: accepted[0]!.appId,
      templateId: '1',
      datas: [' a ', '中文'],
      to: ['13800000001', '13800000002'],
      reqId: 'r-1',
    });
    assert.deepEqual(readRecordFile(recordFile), accepted);
    assert.equal('reqId' in accepted[1]!, false);
  });

  test('readRecordFile: [] for a missing file, a torn last line skipped, a bad middle line reported', async () => {
    assert.deepEqual(readRecordFile(path.join(dir, 'absent.jsonl')), []);
    const { writeFileSync } = await import('node:fs');
    const torn = path.join(dir, 'torn.jsonl');
    writeFileSync(
      torn,
      '{"time":"t","smsMessageSid":"s","appId":"a","templateId":"1","datas":[],"to":["1"]}\n{"time":',
    );
    assert.equal(readRecordFile(torn).length, 1);
    const broken = path.join(dir, 'broken.jsonl');
    writeFileSync(broken, 'nope\n{"time":"t"}\n');
    assert.throws(() => readRecordFile(broken), /line 1 is not JSON/);
  });
});
