// The client's last check before a request is written (SendOptions.mayStart): asked once the
// connection is ready, not when send is called, and a "no" writes nothing: `not-sent`, `fenced`.
// The real simulator on 127.0.0.1:0 counts what reached it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DEMO_CREDENTIALS } from '../../src/config/index.js';
import { createProviderClient } from '../../src/provider/client.js';
import { BUILT_IN_TEMPLATES } from '../../src/provider/connect.js';
import { startSimulator } from '../../src/simulator/index.js';

describe("the client's last check before writing a request", () => {
  async function clientAndSimulator() {
    const sim = await startSimulator({
      accountSid: DEMO_CREDENTIALS.accountSid,
      authToken: DEMO_CREDENTIALS.authToken,
      appIds: [DEMO_CREDENTIALS.appId],
      templates: BUILT_IN_TEMPLATES,
      latencyMs: [0, 0],
      keepRecords: true,
    });
    after(() => sim.close());
    const client = createProviderClient({
      baseUrl: sim.url,
      accountSid: DEMO_CREDENTIALS.accountSid,
      authToken: DEMO_CREDENTIALS.authToken,
      format: 'json',
      maxPerRequest: 200,
      connectTimeoutMs: 2_000,
      responseTimeoutMs: 5_000,
    });
    after(() => client.close());
    return { sim, client };
  }
  const request = (n: number) => ({
    to: [String(13_800_000_000 + n)],
    appId: DEMO_CREDENTIALS.appId,
    templateId: '1',
    datas: ['a', 'b'],
  });

  it('a "no" at the moment of writing sends nothing; a "yes" sends', async () => {
    const { sim, client } = await clientAndSimulator();
    let asked = 0;
    let holds = true;
    const refused = client.send(request(1), { mayStart: () => (asked++, holds) });
    // What counts is the answer once the connection is ready, not when send was called.
    holds = false;
    const outcome = await refused;
    assert.equal(asked, 1);
    assert.equal(outcome.kind, 'not-sent');
    assert.equal(outcome.kind === 'not-sent' && outcome.fenced, true);
    assert.equal(sim.records.length, 0, 'nothing reached the provider');
    const sent = await client.send(request(2), { mayStart: () => true });
    assert.equal(sent.kind, 'accepted');
    assert.equal(sim.records.length, 1);
  });
});
