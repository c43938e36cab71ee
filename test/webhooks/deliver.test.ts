// Delivery of the outbox to a receiver that is down: its events wait in the journal, the receiver
// is named unhealthy (what /healthz reports) once it has failed for alertAfterMs, said once in the
// log, and all is delivered once it is back. Real journal, real HTTP receiver on loopback.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import winston from 'winston';
import { openWriter } from '../../src/journals/index.js';
import { FILE_STATUS } from '../../src/ports/states.js';
import { startDelivery } from '../../src/webhooks/deliver.js';
import { webhookTargets } from '../../src/config/settings/webhookUrls.js';
import { waitUntil } from '../daemon/helpers.js';
import { startReceiver } from '../daemon/webhookReceiver.js';

const SECRET = 'hook-s3cret-never-shown';

/** A logger whose lines (as JSON objects) land in `lines`. */
function memoryLogger(lines: Array<{ level: string; message: string; event?: string }>) {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as (typeof lines)[number]);
      done();
    },
  });
  return winston.createLogger({
    level: 'debug',
    format: winston.format.json(),
    transports: [new winston.transports.Stream({ stream })],
  });
}

describe('webhook delivery to a receiver that is down', () => {
  it('names it failing after alertAfterMs, says so once, and delivers every event once back', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-deliver-'));
    const { handle: journal } = await openWriter(
      { dataDir: dir },
      {
        role: 'test',
        synchronous: 'normal',
        reqIdOn: false,
        onLost: () => {},
      },
    );
    const receiver = await startReceiver(SECRET, { down: true });
    // The URL's query is a secret as much as the signing key: neither may be shown.
    const targets = webhookTargets({ urls: [`${receiver.url}?key=${SECRET}`] });
    journal.outbox.setTargets(targets.map((t) => t.id));
    const backlog = async () => (await journal.outbox.undelivered(targets[0]!.id, 100)).length;
    const lines: Array<{ level: string; message: string; event?: string }> = [];
    const delivery = startDelivery({
      outbox: journal.outbox,
      targets,
      format: 'json',
      secret: SECRET,
      log: memoryLogger(lines),
      alertAfterMs: 300,
      pollMs: 20,
    });
    try {
      const file = await journal.files.create({
        sha256: 'b'.repeat(64),
        name: 'x.csv',
        path: path.join(dir, 'x.csv'),
        size: 10,
        encoding: 'utf-8',
      });
      await journal.files.status(file.id, FILE_STATUS.done);
      assert.deepEqual(delivery.failing(), [], 'not failing before anything was tried');

      await waitUntil(() => delivery.failing().length > 0, 15_000, 'the receiver named failing');
      const [failing] = delivery.failing();
      assert.match(
        failing!,
        /^webhook http:\/\/127\.0\.0\.1:\d+\/hook failing since .*: HTTP 503$/,
      );
      await waitUntil(
        () => lines.some((l) => l.event === 'webhook-failing'),
        15_000,
        'the log line',
      );
      assert.ok(receiver.refused >= 2, 'tried again');
      assert.equal(receiver.events.length, 0);
      assert.ok((await backlog()) > 0, 'the events wait in the journal');

      receiver.down = false;
      await waitUntil(async () => (await backlog()) === 0, 15_000, 'the events to arrive');
      assert.deepEqual(delivery.failing(), [], 'healthy again');
      assert.deepEqual(
        receiver.events.map((e) => e.event),
        ['file.taken', 'file.finished'],
        'each event once, in order',
      );
      assert.equal(lines.filter((l) => l.event === 'webhook-failing').length, 1, 'said once');
      assert.equal(lines.filter((l) => l.event === 'webhook-recovered').length, 1);
      assert.equal(receiver.badSignatures, 0);
      const said = JSON.stringify(lines) + failing!;
      assert.ok(!said.includes(SECRET), 'the key and the signing secret are never shown');
    } finally {
      await delivery.stop();
      await receiver.close();
      await journal.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
