// A node started while its PostgreSQL server does not answer: it waits for it, its health check
// answering 503 E_DATABASE_UNREACHABLE meanwhile (and 200 once the journal answers), and a
// `smsdrop drain` sent during the wait is remembered, not the end of the process. The server
// "comes back" when a relay starts listening on the port the node was given: nothing listens
// there until the test says so.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import { daemonEnv, httpUrlOf, type Proc, startProcess, tempDir } from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Passes connections on `port` to the cluster's port, from now on. */
async function relay(port: number, target: number): Promise<net.Server> {
  const server = net.createServer((socket) => {
    const upstream = net.connect(target, '127.0.0.1');
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('a node waiting for its PostgreSQL at the start', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const work = tempDir('pg-start-wait');
  const procs: Proc[] = [];
  const servers: net.Server[] = [];
  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    for (const s of servers) s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  /** A daemon whose journal is on a port nothing listens on yet. */
  async function waitingNode(name: string): Promise<{ node: Proc; comeBack: () => Promise<void> }> {
    const port = await freePort();
    const url = (await pg15.cluster.freshDatabase()).replace(`:${pg15.cluster.port}/`, `:${port}/`);
    const node = startProcess(
      ['run'],
      daemonEnv({ dataDir: path.join(work, name), env: { SMSDROP_DATABASE_URL: url } }),
    );
    procs.push(node);
    await node.waitFor(/waiting up to 60 s for the journal's server/);
    return {
      node,
      comeBack: async () => {
        servers.push(await relay(port, pg15.cluster.port));
      },
    };
  }

  test('/healthz answers 503 E_DATABASE_UNREACHABLE during the wait, 200 once open', async () => {
    const { node, comeBack } = await waitingNode('health');
    await node.waitFor(/health check on http/);
    const base = httpUrlOf(node);
    const waiting = await get(`${base}/healthz`);
    assert.equal(waiting.status, 503, JSON.stringify(waiting.body));
    assert.deepEqual(waiting.body.codes, ['E_DATABASE_UNREACHABLE']);
    assert.equal(waiting.body.ok, false);
    assert.match(String((waiting.body.checks as { journal: string }).journal), /unreachable/);
    const status = await get(`${base}/api/status`);
    assert.equal(status.status, 503);
    assert.equal(status.body.code, 'E_DATABASE_UNREACHABLE');

    await comeBack();
    await node.waitFor(/watching .*inbox/, 60_000);
    // the same address: a load balancer's check needs no new port
    assert.equal((await get(`${base}/healthz`)).status, 200, node.output());
    assert.equal((await get(`${base}/api/status`)).status, 200);
  });

  test('a drain asked for during the wait: the node starts, drains and exits 0', async () => {
    const { node, comeBack } = await waitingNode('drain');
    node.kill('SIGUSR2');
    // Killed by it, the node would be gone before the server is back.
    await comeBack();
    assert.deepEqual(await node.exited, { code: 0, signal: null }, node.output());
    assert.match(node.output(), /SIGUSR2 came while the daemon was starting: it drains now/);
    assert.match(node.output(), /drained: nothing in flight/);
  });
});
