// What a restart does with a batch that was mid-request when the process died.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import pLimit from 'p-limit';
import { loadConfig } from '../../src/config/index.js';
import { getBatch } from '../../src/journal/batchNumbers.js';
import { recoverInterrupted, startAttempt } from '../../src/journal/sendMoves.js';
import { countFile } from '../../src/journal/fileReads.js';
import { createFile } from '../../src/journal/files.js';
import type { Journal } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';
import { planWriter } from './planWriter.js';
import type { ProviderClient } from '../../src/provider/client.js';
import type { TemplateSmsRequest } from '../../src/provider/types.js';
import { sendFile } from '../../src/send/index.js';
import { AccountPause, createRateLimiter } from '../../src/send/rate.js';
import { SqliteSendStore } from '../../src/journal/sendStore.js';
import { sqliteOf } from './sqliteOf.js';

function journalWithOneBatch(): { db: Journal; fileId: number; batchId: number } {
  const db = openJournal(
    path.join(mkdtempSync(path.join(os.tmpdir(), 'smsdrop-recovery-')), 'journal.sqlite'),
  );
  const file = createFile(db, {
    sha256: 'abc',
    name: 'x.csv',
    path: '/x.csv',
    size: 1,
    encoding: 'utf-8',
  });
  const writer = planWriter(db, file.id, { maxPerRequest: 200 });
  writer.write([
    {
      line: 2,
      phoneRaw: '13800000001',
      phone: '13800000001',
      appId: 'app',
      templateId: '1',
      datas: ['a'],
      extras: [],
    },
  ]);
  writer.finish();
  sqliteOf(db).prepare("UPDATE files SET status = 'sending' WHERE id = ?").run(file.id);
  const batchId = sqliteOf(db)
    .prepare('SELECT id FROM batches WHERE file_id = ?')
    .pluck()
    .get(file.id) as number;
  return { db, fileId: file.id, batchId };
}

function countingClient(): ProviderClient & { sent: TemplateSmsRequest[] } {
  const sent: TemplateSmsRequest[] = [];
  return {
    sent,
    send: (req) => {
      sent.push(req);
      return Promise.resolve({
        kind: 'accepted',
        statusCode: '000000',
        smsMessageSid: 'sid',
        dateCreated: '20260101000000',
      });
    },
    close: async () => {},
  };
}

function contextFor(db: Journal, client: ProviderClient, now: number) {
  const config = loadConfig({
    configDir: mkdtempSync(path.join(os.tmpdir(), 'smsdrop-cfg-')),
    env: { SMSDROP_TIMEZONE: 'Asia/Shanghai' },
  });
  return {
    send: new SqliteSendStore(db),
    client,
    config,
    limit: pLimit(2),
    rateLimiter: createRateLimiter(),
    pause: new AccountPause(),
    now: () => now,
  };
}

describe('recovery of a batch cut off mid-request', () => {
  it('same China day as the request left: resent with the same reqId', async () => {
    const { db, fileId, batchId } = journalWithOneBatch();
    const reqId = getBatch(db, batchId).req_id;
    startAttempt(db, getBatch(db, batchId), reqId);
    sqliteOf(db)
      .prepare('UPDATE attempts SET started_at = ?')
      .run(Date.parse('2026-01-01T10:00:00.000Z')); // 18:00 in Shanghai
    const client = countingClient();
    const result = await sendFile(
      contextFor(db, client, Date.parse('2026-01-01T12:00:00Z')),
      fileId,
    );
    assert.equal(result.state, 'finished');
    assert.deepEqual(
      client.sent.map((r) => r.reqId),
      [reqId],
    );
    assert.equal(getBatch(db, batchId).first_doubt_at, '2026-01-01T10:00:00.000Z');
  });

  it('the request left before China midnight, the restart is after it: unknown, never resent', async () => {
    const { db, fileId, batchId } = journalWithOneBatch();
    startAttempt(db, getBatch(db, batchId), getBatch(db, batchId).req_id);
    sqliteOf(db)
      .prepare('UPDATE attempts SET started_at = ?')
      .run(Date.parse('2026-01-01T15:50:00.000Z')); // 23:50 in Shanghai
    const client = countingClient();
    const result = await sendFile(
      contextFor(db, client, Date.parse('2026-01-01T16:20:00Z')),
      fileId,
    ); // 00:20 next day
    assert.equal(result.state, 'finished');
    assert.equal(
      client.sent.length,
      0,
      'the provider no longer remembers the reqId: a resend could send twice',
    );
    assert.equal(getBatch(db, batchId).state, 'unknown');
    assert.equal(getBatch(db, batchId).first_doubt_at, '2026-01-01T15:50:00.000Z');
    assert.equal(countFile(db, fileId).unknown, 1);
  });

  it('reqId off: unknown at once, never resent', async () => {
    const { db, fileId, batchId } = journalWithOneBatch();
    startAttempt(db, getBatch(db, batchId), null);
    const client = countingClient();
    const ctx = contextFor(db, client, Date.now());
    ctx.config = { ...ctx.config, reqId: false };
    await sendFile(ctx, fileId);
    assert.equal(client.sent.length, 0);
    assert.equal(getBatch(db, batchId).state, 'unknown');
  });

  it('in doubt from a run with reqId on, now reqId off: unknown, never resent without its reqId', async () => {
    const { db, fileId, batchId } = journalWithOneBatch();
    startAttempt(db, getBatch(db, batchId), getBatch(db, batchId).req_id);
    const now = Date.parse('2026-01-01T12:00:00Z');
    recoverInterrupted(db, fileId, true); // the restart, still with reqId on: planned, in doubt
    sqliteOf(db)
      .prepare('UPDATE attempts SET started_at = ?')
      .run(Date.parse('2026-01-01T10:00:00.000Z'));
    sqliteOf(db).prepare("UPDATE batches SET first_doubt_at = '2026-01-01T10:00:00.000Z'").run();
    const client = countingClient();
    const ctx = contextFor(db, client, now);
    ctx.config = { ...ctx.config, reqId: false };
    await sendFile(ctx, fileId);
    assert.equal(
      client.sent.length,
      0,
      'without the reqId the provider cannot refuse a second send',
    );
    assert.equal(getBatch(db, batchId).state, 'unknown');
    assert.match(getBatch(db, batchId).status_msg ?? '', /reqId is off/);
  });

  it('cut off mid-request with reqId off, resumed with reqId on: unknown, never resent under a reqId the provider never saw', async () => {
    const { db, fileId, batchId } = journalWithOneBatch();
    startAttempt(db, getBatch(db, batchId), null);
    sqliteOf(db)
      .prepare('UPDATE attempts SET started_at = ?')
      .run(Date.parse('2026-01-01T10:00:00.000Z'));
    const client = countingClient();
    const result = await sendFile(
      contextFor(db, client, Date.parse('2026-01-01T12:00:00Z')),
      fileId,
    );
    assert.equal(result.state, 'finished');
    assert.equal(client.sent.length, 0);
    assert.equal(getBatch(db, batchId).state, 'unknown');
    assert.match(getBatch(db, batchId).status_msg ?? '', /went without this reqId/);
    assert.equal(countFile(db, fileId).unknown, 1);
  });

  it('a batch already claimed by another run is not sent again', () => {
    const { db, batchId } = journalWithOneBatch();
    assert.ok(startAttempt(db, getBatch(db, batchId), 'r1') !== undefined);
    assert.equal(startAttempt(db, getBatch(db, batchId), 'r1'), undefined);
  });

  it('a batch row that is no longer the batch picked (another req_id) is not claimed', () => {
    const { db, batchId } = journalWithOneBatch();
    assert.equal(startAttempt(db, { id: batchId, req_id: 'someone else' }, 'r1'), undefined);
    assert.equal(getBatch(db, batchId).state, 'planned');
  });
});

describe('a send loop that fails', () => {
  it('starts nothing more and waits for the requests in flight before it gives the file up', async () => {
    const db = openJournal(
      path.join(mkdtempSync(path.join(os.tmpdir(), 'smsdrop-fail-')), 'journal.sqlite'),
    );
    const file = createFile(db, {
      sha256: 'def',
      name: 'y.csv',
      path: '/y.csv',
      size: 1,
      encoding: 'utf-8',
    });
    const writer = planWriter(db, file.id, { maxPerRequest: 1 });
    writer.write(
      Array.from({ length: 20 }, (_, i) => ({
        line: i + 2,
        phoneRaw: `1380000${String(i).padStart(4, '0')}`,
        phone: `1380000${String(i).padStart(4, '0')}`,
        appId: 'app',
        templateId: '1',
        datas: [],
        extras: [],
      })),
    );
    writer.finish();
    let started = 0;
    let settled = 0;
    const client: ProviderClient = {
      send: async () => {
        const n = ++started;
        if (n === 3) throw new Error('journal or client broke');
        await new Promise((resolve) => setTimeout(resolve, 100));
        settled++;
        return {
          kind: 'accepted',
          statusCode: '000000',
          smsMessageSid: 'sid',
          dateCreated: '20260101000000',
        };
      },
      close: async () => {},
    };
    const ctx = contextFor(db, client, Date.now());
    await assert.rejects(sendFile(ctx, file.id), /broke/);
    const startedAtFailure = started;
    assert.equal(
      settled,
      started - 1,
      'every request in flight had finished before sendFile gave up',
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(started, startedAtFailure, 'no request started after the failure');
    assert.ok(started < 20);
  });
});
