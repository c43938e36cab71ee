// A provider that fails a third of all requests in ways that leave them in doubt (500s, answers
// cut off after it took the request): batches that run out of SMSDROP_MAX_ATTEMPTS while every
// attempt carried their reqId are not left `unknown` for a person to retry: the provider still
// remembers the reqId, so the sender goes on under it until 160054 or an acceptance settles them.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { clearOfDayChange } from '../dayChange.js';
import { parseFaults } from '../../src/simulator/index.js';
import {
  CREDS,
  deliveries,
  envFor,
  messageKey,
  runCli,
  startSim,
  tempDir,
  writeCsv,
} from './helpers.js';

const ROWS = 90;
const phones = Array.from({ length: ROWS }, (_, i) => `136${String(i).padStart(8, '0')}`);
// Personalised: every row its own message, so one request per row.
const csv = `phone,template,data1,data2\n${phones.map((p, i) => `${p},1,code${i},5`).join('\n')}\n`;

describe('a provider failing a third of all requests, in doubt', () => {
  it('ends every row accepted, each message once, none unknown, with only two attempts allowed per batch', async () => {
    await clearOfDayChange(60_000); // a reqId is remembered for the provider's day only
    const sim = await startSim({ faults: parseFaults('http500@0.2,cut-after@0.13'), seed: 11 });
    try {
      const dir = tempDir();
      const env = envFor(sim, path.join(dir, 'data'), {
        SMSDROP_MAX_ATTEMPTS: '2',
        SMSDROP_RETRY_MAX_MS: '20',
        SMSDROP_PAUSE_AFTER_FAILURES: '0',
        SMSDROP_CONCURRENCY: '4',
      });
      const sent = await runCli(['send', writeCsv(dir, 'personal.csv', csv), '--json'], env);
      const json = sent.json!;
      assert.deepEqual(
        [json.accepted, json.unknown, json.failed, json.pending],
        [ROWS, 0, 0, 0],
        `${sent.stdout}${sent.stderr}`,
      );
      const counts = deliveries(sim);
      phones.forEach((p, i) =>
        assert.equal(
          counts.get(messageKey(CREDS.appId, '1', [`code${i}`, '5'], p)),
          1,
          `${p} once`,
        ),
      );
    } finally {
      await sim.close();
    }
  });
});
