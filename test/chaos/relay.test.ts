// The chaos suite's cluster faults: the relay that cuts a node off (nothing passes while it is
// held, no socket closes, what waited arrives in order at the release) and the fault plan (the
// same for the same seed).
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { test } from 'node:test';
import { planFaults } from '../../chaos/clusterFaults.js';
import { startRelay } from '../../chaos/relay.js';

/** A server that echoes what it gets, upper-cased, and remembers it. */
async function startEcho(): Promise<{ server: net.Server; port: number; got: string[] }> {
  const got: string[] = [];
  const server = net.createServer((socket) => {
    socket.on('data', (d: Buffer) => {
      got.push(d.toString());
      socket.write(d.toString().toUpperCase());
    });
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port, got };
}

function readUntil(socket: net.Socket, text: string): Promise<string> {
  let seen = '';
  return new Promise((resolve) => {
    const onData = (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(text)) {
        socket.off('data', onData);
        resolve(seen);
      }
    };
    socket.on('data', onData);
  });
}

test('relay: passes bytes; held, passes none and closes nothing; released, delivers them in order', async () => {
  const echo = await startEcho();
  const relay = await startRelay({ host: '127.0.0.1', port: echo.port });
  const client = net.connect({ host: '127.0.0.1', port: relay.port });
  await once(client, 'connect');
  client.write('one');
  assert.equal(await readUntil(client, 'ONE'), 'ONE');
  relay.hold();
  let closed = false;
  client.on('close', () => (closed = true));
  client.write('two');
  client.write('three');
  while (relay.waiting() < 1) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual(echo.got, ['one']);
  assert.equal(closed, false);
  const answer = readUntil(client, 'THREE');
  relay.release();
  assert.equal(await answer, 'TWOTHREE');
  assert.equal(echo.got.join(''), 'onetwothree');
  client.destroy();
  await relay.close();
  echo.server.close();
});

test('relay: a connection its node closed while held is dropped at the release, with dropClosedWhileHeld', async () => {
  const echo = await startEcho();
  const relay = await startRelay({ host: '127.0.0.1', port: echo.port, dropClosedWhileHeld: true });
  const client = net.connect({ host: '127.0.0.1', port: relay.port });
  await once(client, 'connect');
  client.write('one');
  await readUntil(client, 'ONE');
  relay.hold();
  client.end('given up');
  while (relay.waiting() < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  relay.release();
  await once(client, 'close');
  const kept = net.connect({ host: '127.0.0.1', port: relay.port });
  kept.write('next');
  assert.equal(await readUntil(kept, 'NEXT'), 'NEXT');
  assert.deepEqual(echo.got, ['one', 'next']);
  kept.destroy();
  await relay.close();
  echo.server.close();
});

test('chaos faults: the plan is the same for the same seed, due within the kills, one provider partition in three', () => {
  const plan = (seed: number) =>
    planFaults({ seed, kills: 10, pauses: 4, partitions: 5, nodes: 3, leaseMs: 3000 });
  assert.deepEqual(plan(1), plan(1));
  assert.notDeepEqual(plan(1), plan(2));
  const faults = plan(1);
  assert.equal(faults.filter((f) => f.kind === 'pause').length, 4);
  assert.equal(faults.filter((f) => f.kind === 'provider').length, 2);
  assert.equal(faults.filter((f) => f.kind === 'postgres').length, 3);
  for (const f of faults) {
    assert.ok(f.atKill >= 0 && f.atKill < 10 && f.node >= 0 && f.node < 3, JSON.stringify(f));
    assert.ok(f.durationMs > 3000, `longer than the lease: ${JSON.stringify(f)}`);
  }
  assert.deepEqual(
    faults.map((f) => f.atKill),
    [...faults.map((f) => f.atKill)].sort((a, b) => a - b),
  );
});
