// The chaos suite (chaos/), short: ~10 kills in each mode (send, daemon, and cluster: three daemons
// on one PostgreSQL) on small files of the same shapes, run
// on every `npm test`. It fails when any expected message was delivered twice or never, when a
// message no file asked for was delivered, or when a file did not end done with its statuses
// adding up; the failure lists what went wrong and the command that replays the run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { countFaults, formatFigures, runChaos } from '../../chaos/chaos.js';
import { expectedMessages, generateRound } from '../../chaos/files.js';
import { validateConfig } from '../../src/config/index.js';
import { normalisePhone } from '../../src/intake/phone.js';
import { postgresMissing } from '../pg/cluster.js';

const CHAOS = path.resolve('chaos/chaos.ts');

/**
 * Holds the daemon's default HTTP address, as another daemon on the machine would (or does, when
 * it is taken already): the run's daemons must not need it. Resolves with how to let it go.
 */
async function holdDefaultHttpAddress(): Promise<() => Promise<void>> {
  const { host, port } = validateConfig({}).http;
  const server = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
  } catch {
    return () => Promise.resolve(); // in use already
  }
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}

test('chaos: a bad argument is a usage error, exit 2, with the usage', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHAOS, '--mode', 'sideways'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--mode expects send, daemon, both, cluster, got "sideways"/);
  assert.match(r.stderr, /usage: npm run chaos --/);
});

test('chaos: the files are the same for the same seed, and say what they must deliver', () => {
  const round = (seed: number) =>
    generateRound({ seed, round: 0, scale: 'small', appId: 'APP1', tag: 't' });
  const [a, b] = [round(7), round(7)];
  assert.deepEqual(
    a.map((f) => f.bytes),
    b.map((f) => f.bytes),
  );
  assert.notDeepEqual(round(8)[0]!.bytes, a[0]!.bytes);
  const byName = Object.fromEntries(a.map((f) => [f.name.replace(/^t-r0-/, ''), f]));
  // repeat.csv holds rows of groups.csv, and big.csv numbers groups.csv sends the same message to.
  const groups = new Set(byName['groups.csv']!.messages);
  assert.ok(byName['repeat.csv']!.messages.filter((m) => groups.has(m)).length > 10);
  assert.ok(byName['big.csv']!.messages.some((m) => groups.has(m)));
  // The big group has duplicates inside it; every file's expected phones are normalised numbers.
  assert.ok(new Set(byName['big.csv']!.messages).size < byName['big.csv']!.messages.length);
  for (const key of expectedMessages(a)) {
    const phone = (JSON.parse(key) as [string, string, string[], string])[3];
    assert.deepEqual(normalisePhone(phone, false), { ok: true, phone });
  }
  assert.deepEqual(
    a.map((f) => f.invalid),
    [0, 0, 0, 2, 3],
  );
});

test("chaos: the faults counted are the simulator's own choice for its seed", () => {
  const counts = countFaults('http500@0.5,status=160000@/4', 3, 100);
  assert.equal(
    counts['status=160000']! + counts.http500!,
    Object.values(counts).reduce((x, y) => x + y, 0),
  );
  assert.ok(counts.http500! > 20 && counts.http500! < 80, JSON.stringify(counts));
  assert.deepEqual(countFaults('http500@0.5,status=160000@/4', 3, 100), counts);
});

test(
  'chaos: 10 kills of send and 10 of the daemon, with faults: every message exactly once, every file done',
  // no timeout of its own: scripts/run-tests.mjs bounds the file
  async () => {
    const release = await holdDefaultHttpAddress();
    const figures = await runChaos({
      kills: 10,
      mode: 'both',
      seed: 1126,
      scale: 'small',
      faults: 'http500@0.05,cut-after@0.03,cut-before@0.03,status=160000@0.03,stall@0.01',
      killWindowMs: [50, 2000],
      keep: false,
    }).finally(release);
    const report = formatFigures(figures);
    for (const mode of figures.modes) {
      assert.deepEqual(mode.failures, [], report);
      assert.equal(mode.kills.total, 10, report);
      assert.equal(mode.duplicates, 0, report);
      assert.equal(mode.missing, 0, report);
      assert.equal(mode.unexpected, 0, report);
      assert.equal(mode.deliveries, mode.expected, report);
      assert.equal(mode.filesDone, mode.files, report);
      assert.ok(mode.faultsTotal > 0 && mode.requests > mode.acceptedRequests, report);
    }
    assert.equal(figures.ok, true, report);
  },
);

test(
  'chaos, cluster: 3 daemons on one PostgreSQL, 10 kills and a PostgreSQL crash: every message once, the account limit held',
  { skip: postgresMissing() },
  async () => {
    const release = await holdDefaultHttpAddress();
    const figures = await runChaos({
      kills: 10,
      mode: 'cluster',
      nodes: 3,
      seed: 1127,
      scale: 'small',
      faults: 'http500@0.05,cut-after@0.03,cut-before@0.03,status=160000@0.03,stall@0.01',
      killWindowMs: [50, 2000],
      keep: false,
    }).finally(release);
    const report = formatFigures(figures);
    const [cluster] = figures.modes;
    assert.ok(cluster, report);
    assert.deepEqual(cluster.failures, [], report);
    assert.equal(cluster.kills.total, 10, report);
    assert.equal(cluster.duplicates, 0, report);
    assert.equal(cluster.missing, 0, report);
    assert.equal(cluster.deliveries, cluster.expected, report);
    assert.equal(cluster.filesDone, cluster.files, report);
    assert.ok(cluster.peakInFlight <= 4, report);
    assert.ok(
      cluster.notes.some((n) => /PostgreSQL crashed and restarted/.test(n)),
      report,
    );
    assert.equal(figures.ok, true, report);
  },
);
