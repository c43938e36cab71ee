// Fault injection: the CLI syntax and what each kind does to a request and to the record.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Agent } from 'undici';
import {
  parseFaults,
  startSimulator,
  type FaultRule,
  type RunningSimulator,
} from '../../src/simulator/index.js';
import { baseOptions, call, start, until } from './helpers.js';

describe('parseFaults', () => {
  test('reads every kind, probabilities and every-Nth rates', () => {
    assert.deepEqual(
      parseFaults('http500@0.05,status=160000@/7,cut-after@/11,cut-before@/13,stall@0.01'),
      [
        { kind: 'http500', probability: 0.05 },
        { kind: 'status', statusCode: '160000', everyNth: 7 },
        { kind: 'cut-after-accept', everyNth: 11 },
        { kind: 'cut-before-accept', everyNth: 13 },
        { kind: 'stall', probability: 0.01 },
      ],
    );
    assert.deepEqual(parseFaults(' stall@1 , http500@.5 '), [
      { kind: 'stall', probability: 1 },
      { kind: 'http500', probability: 0.5 },
    ]);
    assert.deepEqual(parseFaults(''), []);
  });

  test('refuses a bad spec with a message naming the rule', () => {
    const bad: [string, RegExp][] = [
      ['http500', /"http500".*@RATE/],
      ['boom@0.1', /unknown kind "boom"/],
      ['status@/3', /status needs =CODE/],
      ['status=16@/3', /6-digit/],
      ['http500=160000@/3', /only allowed with status/],
      ['http500@0', /above 0 and at most 1/],
      ['http500@1.5', /above 0 and at most 1/],
      ['http500@abc', /probability/],
      ['http500@/0', /N >= 1/],
      ['http500@/2.5', /N >= 1/],
      ['http500@0.1,,stall@/2', /bad fault rule ""/],
    ];
    for (const [spec, message] of bad) assert.throws(() => parseFaults(spec), message, spec);
  });
});

async function withSim(
  faults: FaultRule[],
  run: (sim: RunningSimulator) => Promise<void>,
  seed = 1,
): Promise<void> {
  const sim = await start({ faults, seed });
  try {
    await run(sim);
  } finally {
    await sim.close();
  }
}

describe('simulator faults', () => {
  test('http500: HTTP 500, nothing processed', async () => {
    await withSim([{ kind: 'http500', everyNth: 1 }], async (sim) => {
      const answer = await call(sim);
      assert.equal(answer.status, 500);
      assert.equal(answer.code, '');
      assert.equal(sim.records.length, 0);
    });
  });

  test('status: the chosen business error on every Nth request, others processed', async () => {
    await withSim([{ kind: 'status', statusCode: '160000', everyNth: 2 }], async (sim) => {
      const codes = [];
      for (let i = 0; i < 4; i++)
        codes.push((await call(sim, { payload: { to: `1380000000${i}` } })).code);
      assert.deepEqual(codes, ['000000', '160000', '000000', '160000']);
      assert.equal(sim.records.length, 2);
      assert.equal(sim.requestCount, 4);
      assert.match((await call(sim, { format: 'xml' })).text, /^<\?xml/);
    });
  });

  test('cut-before-accept: the connection drops, nothing accepted', async () => {
    await withSim([{ kind: 'cut-before-accept', everyNth: 1 }], async (sim) => {
      await assert.rejects(call(sim));
      assert.equal(sim.records.length, 0);
    });
  });

  test('cut-after-accept: the connection drops after the request was accepted and recorded', async () => {
    await withSim([{ kind: 'cut-after-accept', everyNth: 1 }], async (sim) => {
      await assert.rejects(call(sim));
      assert.equal(sim.records.length, 1);
    });
  });

  test('cut-after-accept on a refused request: dropped, nothing recorded', async () => {
    await withSim([{ kind: 'cut-after-accept', everyNth: 1 }], async (sim) => {
      await assert.rejects(call(sim, { sig: 'WRONG' }));
      assert.equal(sim.records.length, 0);
    });
  });

  test('stall: accepted and recorded, never answered; close() does not wait for it', async () => {
    await withSim([{ kind: 'stall', everyNth: 1 }], async (sim) => {
      const pending = call(sim);
      pending.catch(() => undefined);
      await until(() => sim.records.length === 1);
      await sim.close();
      await assert.rejects(pending);
    });
  });

  test('stall: a client that gives up gets no answer', async () => {
    await withSim([{ kind: 'stall', everyNth: 1 }], async (sim) => {
      const impatient = new Agent({ headersTimeout: 200 });
      await assert.rejects(call(sim, { dispatcher: impatient }), {
        code: 'UND_ERR_HEADERS_TIMEOUT',
      });
      // The client may give up before the server has read the request (a stalled test process).
      await until(() => sim.records.length >= 1);
      assert.equal(sim.records.length, 1);
      await impatient.close();
    });
  });

  test('probabilities follow the seed: same seed, same requests hit', async () => {
    const pattern = async (seed: number) => {
      let hits = '';
      await withSim(
        [{ kind: 'http500', probability: 0.5 }],
        async (sim) => {
          for (let i = 0; i < 24; i++)
            hits +=
              (await call(sim, { payload: { to: '13800000001' } })).status === 500 ? 'x' : '.';
        },
        seed,
      );
      return hits;
    };
    const first = await pattern(42);
    assert.equal(await pattern(42), first);
    assert.match(first, /x/);
    assert.match(first, /\./);
  });

  test('the first matching rule wins', async () => {
    await withSim(
      [
        { kind: 'status', statusCode: '111111', everyNth: 3 },
        { kind: 'http500', everyNth: 2 },
      ],
      async (sim) => {
        const seen = [];
        for (let i = 0; i < 6; i++) {
          const a = await call(sim, { payload: { to: `1380000000${i}` } });
          seen.push(a.status === 500 ? '500' : a.code);
        }
        assert.deepEqual(seen, ['000000', '500', '111111', '500', '000000', '111111']);
      },
    );
  });

  test('latency delays the answer; close() during the delay does not hang', async () => {
    const sim = await start({ latencyMs: [60_000, 60_000] });
    const pending = call(sim);
    pending.catch(() => undefined);
    await until(() => sim.records.length === 1);
    await sim.close();
    await assert.rejects(pending);
  });

  test('counts the most requests in flight at once, stalled and cut ones too', async () => {
    const sim = await start({ latencyMs: [300, 300] });
    try {
      await Promise.all(Array.from({ length: 5 }, () => call(sim)));
      assert.equal(sim.peakInFlight, 5);
      await call(sim);
      await call(sim);
      assert.equal(sim.peakInFlight, 5, 'one at a time afterwards');
    } finally {
      await sim.close();
    }
  });

  test('names the requests in flight at the peak: when each came, its reqId (JSON or XML), its fault', async () => {
    const sim = await start({
      latencyMs: [300, 300],
      faults: [{ kind: 'stall', everyNth: 3 }],
    });
    try {
      const answered = [
        call(sim, { payload: { to: '13800000001', reqId: 'r1' } }),
        call(sim, { format: 'xml', payload: { to: '13800000002', reqId: 'r2' } }),
      ];
      await until(() => sim.requestCount === 2);
      // the third is stalled, while the other two wait out their latency
      const stalled = call(sim, { payload: { to: '13800000003', reqId: 'r3' } });
      stalled.catch(() => undefined);
      await Promise.all(answered);
      assert.equal(sim.peakInFlight, 3);
      const named = sim.peakRequests.map((r) => [r.reqId, r.fault]).sort();
      assert.deepEqual(named, [
        ['r1', null],
        ['r2', null],
        ['r3', 'stall'],
      ]);
      assert.ok(sim.peakRequests.every((r) => !Number.isNaN(Date.parse(r.since))));
    } finally {
      await sim.close();
    }
  });

  test('a stall with --stall-ms ends in a 504 after that long, as a gateway would end it', async () => {
    const sim = await start({ faults: [{ kind: 'stall', everyNth: 1 }], stallMs: 300 });
    try {
      const began = Date.now();
      const answer = await call(sim);
      assert.equal(answer.status, 504);
      assert.ok(Date.now() - began >= 290, 'held for the stall first');
      assert.equal(sim.acceptedCount, 1, 'the service had taken it: the gateway gave up on it');
    } finally {
      await sim.close();
    }
  });

  test('bad rules given in code are refused at start', async () => {
    await assert.rejects(
      startSimulator(baseOptions({ faults: [{ kind: 'status', everyNth: 2 }] })),
      /6-digit statusCode/,
    );
    await assert.rejects(
      startSimulator(baseOptions({ faults: [{ kind: 'http500' }] })),
      /exactly one of probability and everyNth/,
    );
  });
});

describe('simulate --answer', () => {
  const flags = { port: '0', host: '127.0.0.1', caFile: 'x', templates: '1:2', maxNumbers: '200' };
  test('reads NUMBER=CODE pairs into numberCodes, and refuses anything else', async () => {
    const { simulatorOptionsFromFlags } = await import('../../src/simulator/command.js');
    assert.deepEqual(
      simulatorOptionsFromFlags({ ...flags, answer: '13800000077=111115, 13800000078=160071' }, {})
        .numberCodes,
      { '13800000077': '111115', '13800000078': '160071' },
    );
    for (const bad of ['13800000077', '13800000077=11111', '13800000077=000000', 'x=111115']) {
      assert.throws(
        () => simulatorOptionsFromFlags({ ...flags, answer: bad }, {}),
        /--answer expects NUMBER=CODE/,
        bad,
      );
    }
  });
});
