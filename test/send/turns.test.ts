// How soon an answer becomes the next request: its outcome and the next attempt are journalled
// in one transaction, so with one request at a time each request costs two turns of the event
// loop (the answer's, the journal's), not three. Intake gives sending only a few turns per chunk,
// so each turn saved is a chunk less of waiting for every request sent while a file is read.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import pLimit from 'p-limit';
import { loadConfig } from '../../src/config/index.js';
import { openWriter } from '../../src/journals/index.js';
import { createRowWriter } from '../../src/plan/rowWriter.js';
import type { ProviderClient } from '../../src/provider/client.js';
import { sendFile } from '../../src/send/index.js';
import { AccountPause, createRateLimiter } from '../../src/send/rate.js';

const BATCHES = 20;

describe('turns of the event loop per request', () => {
  it('an answer and the next attempt are journalled in the same turn', async () => {
    // The SQLite journal: its writes answer at once, so the turns counted are the sender's own.
    const { handle: journal } = await openWriter(
      { dataDir: mkdtempSync(path.join(os.tmpdir(), 'smsdrop-turns-')) },
      { role: 'turns test', synchronous: 'normal', reqIdOn: false, onLost: () => {} },
    );
    after(() => journal.close());
    const file = await journal.files.create({
      sha256: 't',
      name: 't.csv',
      path: '/t.csv',
      size: 1,
      encoding: 'utf-8',
    });
    const writer = createRowWriter(journal.files.planStore(file.id), { maxPerRequest: 200 });
    await writer.write(
      Array.from({ length: BATCHES }, (_, i) => ({
        line: i + 2,
        phoneRaw: '13800000001',
        phone: '13800000001',
        appId: 'app',
        templateId: '1',
        datas: [`v${i}`],
        extras: [],
      })),
    );
    await writer.finish();

    let turns = 0;
    let counting = true;
    const tick = (): void => {
      turns++;
      if (counting) setImmediate(tick);
    };
    // Each answer arrives one turn after its request, as from a quick network.
    const client: ProviderClient = {
      send: () =>
        new Promise((resolve) =>
          setImmediate(() =>
            resolve({
              kind: 'accepted',
              statusCode: '000000',
              smsMessageSid: 'sid',
              dateCreated: '20260101000000',
            }),
          ),
        ),
      close: async () => {},
    };
    const config = loadConfig({
      configDir: mkdtempSync(path.join(os.tmpdir(), 'smsdrop-cfg-')),
      env: {},
    });
    setImmediate(tick);
    const result = await sendFile(
      {
        send: journal.send,
        client,
        config,
        limit: pLimit(1),
        rateLimiter: createRateLimiter(),
        pause: new AccountPause(),
      },
      file.id,
    );
    counting = false;

    assert.equal(result.state, 'finished');
    assert.equal((await journal.files.counts(file.id)).accepted, BATCHES);
    // Three turns a request when the outcome and the next attempt each had a transaction of their
    // own.
    assert.ok(turns <= 2.5 * BATCHES, `${turns} turns for ${BATCHES} requests`);
  });
});
