// The HTTP API's writes (src/http/control.ts) on each journal: the daemon's HTTP server, started
// in this process on a loopback port over a real journal, asked with fetch as a script or a page
// would. Approve (with a start time), pause, resume and cancel reach the journal and say so; each
// needs the token, a server without one refuses every write, a request from a page of another
// site is refused even with it, and nothing the server logs or answers holds the token.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { onEachJournal, type Subject } from '../conformance/journals.js';
import { seedBatch, seedFile } from '../conformance/seed.js';
import { serve, type Server } from './server.js';

const TOKEN = 'http-control-token-0123456789';
const JSON_TYPE = { 'Content-Type': 'application/json' };
const WITH_TOKEN = { ...JSON_TYPE, Authorization: `Bearer ${TOKEN}` };

async function post(
  server: Server,
  route: string,
  headers: Record<string, string> = WITH_TOKEN,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const r = await fetch(`${server.url}${route}`, {
    method: 'POST',
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // a plain-text answer (405)
  }
  return { status: r.status, body: parsed, text };
}

async function get(server: Server, route: string): Promise<Record<string, unknown>> {
  const r = await fetch(`${server.url}${route}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.equal(r.status, 200, route);
  return (await r.json()) as Record<string, unknown>;
}

async function controlOf(j: Subject, fileId: number) {
  return await j.handle.control.control(fileId);
}

onEachJournal('POST /api/files/ID/{approve,pause,resume,cancel}', ({ open }) => {
  it('approves a held file (now, or at a time), pauses, resumes and cancels, each logged', async () => {
    const j = await open();
    const server = await serve(j, TOKEN);
    try {
      const at = await seedFile(j);
      await seedBatch(j, at, 'planned', ['13800000001', '13800000002']);
      await seedBatch(j, at, 'planned', ['13800000003'], 4);
      await j.run("UPDATE files SET control = 'held' WHERE id = ?", at.fileId);
      const id = at.fileId;

      const held = await get(server, `/api/files/${id}`);
      assert.deepEqual([held.control, held.waiting, held.cancelled], ['held', 'held', 0]);

      const approved = await post(server, `/api/files/${id}/approve`, WITH_TOKEN, {
        at: '2099-01-02T09:00:00+08:00',
      });
      assert.equal(approved.status, 200, approved.text);
      assert.deepEqual(approved.body, {
        id,
        name: (await j.handle.reads.file(id))!.name,
        control: null,
        start_at: '2099-01-02T01:00:00.000Z',
        waiting: 'scheduled',
        changed: true,
        cancelled: 0,
      });
      const scheduled = await get(server, `/api/files/${id}`);
      assert.deepEqual(
        [scheduled.waiting, scheduled.start_at],
        ['scheduled', '2099-01-02T01:00:00.000Z'],
      );
      const listed = (await get(server, '/api/files')).files as Array<Record<string, unknown>>;
      assert.equal(listed.find((f) => f.id === id)?.waiting, 'scheduled');

      const paused = await post(server, `/api/files/${id}/pause`);
      assert.deepEqual(
        [paused.status, paused.body.control, paused.body.changed],
        [200, 'paused', true],
      );
      assert.equal((await controlOf(j, id))?.control, 'paused', 'in the journal');
      const again = await post(server, `/api/files/${id}/pause`);
      assert.deepEqual([again.status, again.body.changed], [200, false]);

      const resumed = await post(server, `/api/files/${id}/resume`, WITH_TOKEN, {});
      assert.deepEqual([resumed.status, resumed.body.control], [200, null]);

      const cancelled = await post(server, `/api/files/${id}/cancel`);
      assert.equal(cancelled.status, 200, cancelled.text);
      assert.deepEqual([cancelled.body.control, cancelled.body.cancelled], ['cancelled', 3]);
      const view = await get(server, `/api/files/${id}`);
      assert.deepEqual([view.control, view.cancelled, view.waiting], ['cancelled', 3, 'cancelled']);

      const lines = server.logged.join('\n');
      for (const action of ['approve', 'pause', 'resume', 'cancel'])
        assert.match(lines, new RegExp(`\\(id ${id}\\): ${action} by api from 127\\.0\\.0\\.1`));
      assert.match(lines, /cancel by api from 127\.0\.0\.1: cancelled, 3 numbers cancelled/);
      assert.doesNotMatch(lines, new RegExp(TOKEN));
    } finally {
      await server.close();
    }
  });

  it('says 409 with E_CONTROL_REFUSED to what the file’s state refuses, 404 to no file, 400 to a bad body', async () => {
    const j = await open();
    const server = await serve(j, TOKEN);
    try {
      const done = await seedFile(j, 'done');
      const refused = await post(server, `/api/files/${done.fileId}/pause`);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, 'E_CONTROL_REFUSED');
      assert.match(String(refused.body.message), /it is done: nothing is left to pause/);
      const going = await seedFile(j);
      const notHeld = await post(server, `/api/files/${going.fileId}/approve`);
      assert.deepEqual([notHeld.status, notHeld.body.code], [409, 'E_CONTROL_REFUSED']);

      const missing = await post(server, '/api/files/9999/cancel');
      assert.deepEqual(
        [missing.status, missing.body.message],
        [404, 'no file 9999 in the journal'],
      );

      for (const [route, body] of [
        [`/api/files/${going.fileId}/approve`, { at: 'tomorrow' }],
        [`/api/files/${going.fileId}/approve`, { at: '2099-01-02T09:00:00' }], // no offset
        [`/api/files/${going.fileId}/pause`, { at: '2099-01-02T09:00:00Z' }],
        [`/api/files/${going.fileId}/pause`, ['pause']],
      ] as const) {
        const bad = await post(server, route, WITH_TOKEN, body);
        assert.deepEqual([bad.status, bad.body.code], [400, 'E_USAGE'], JSON.stringify(body));
      }
      assert.equal((await controlOf(j, going.fileId))?.control, null, 'nothing written');
      const asGet = await fetch(`${server.url}/api/files/${going.fileId}/pause`, {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      assert.deepEqual([asGet.status, asGet.headers.get('allow')], [405, 'POST']);
      const postToRead = await post(server, '/api/files');
      assert.equal(postToRead.status, 405);
    } finally {
      await server.close();
    }
  });

  it('refuses a write without the token, with a wrong one, from another site, or as a form', async () => {
    const j = await open();
    const server = await serve(j, TOKEN);
    try {
      const { fileId } = await seedFile(j);
      const route = `/api/files/${fileId}/pause`;
      const host = new URL(server.url).host;
      const tries: Array<[string, Record<string, string>, number]> = [
        ['no token', JSON_TYPE, 401],
        ['a wrong token', { ...JSON_TYPE, Authorization: 'Bearer not-the-token' }, 401],
        ['a token in a cookie', { ...JSON_TYPE, Cookie: `token=${TOKEN}` }, 401],
        ['another origin', { ...WITH_TOKEN, Origin: 'http://attacker.example' }, 403],
        ['a null origin', { ...WITH_TOKEN, Origin: 'null' }, 403],
        [
          'another site, as the browser says',
          { ...WITH_TOKEN, 'Sec-Fetch-Site': 'cross-site' },
          403,
        ],
        ['a form', { ...WITH_TOKEN, 'Content-Type': 'application/x-www-form-urlencoded' }, 415],
        ['text', { ...WITH_TOKEN, 'Content-Type': 'text/plain' }, 415],
      ];
      for (const [what, headers, status] of tries) {
        const r = await post(server, route, headers);
        assert.equal(r.status, status, what);
        assert.doesNotMatch(r.text, new RegExp(TOKEN), what);
      }
      assert.equal((await controlOf(j, fileId))?.control, null, 'nothing written');
      const sameOrigin = await post(server, route, { ...WITH_TOKEN, Origin: `http://${host}` });
      assert.equal(sameOrigin.status, 200, 'the daemon’s own page may');
      assert.equal((await controlOf(j, fileId))?.control, 'paused');
    } finally {
      await server.close();
    }
  });

  it('takes a page served under a name of SMSDROP_HTTP_HOSTS (a reverse proxy), over HTTPS too', async () => {
    const j = await open();
    const server = await serve(j, TOKEN, ['sms.example.com']);
    try {
      const { fileId } = await seedFile(j);
      const route = `/api/files/${fileId}/pause`;
      const other = await post(server, route, { ...WITH_TOKEN, Origin: 'https://other.example' });
      assert.equal(other.status, 403);
      const proxied = await post(server, route, {
        ...WITH_TOKEN,
        Origin: 'https://sms.example.com',
      });
      assert.equal(proxied.status, 200, proxied.text);
      assert.equal((await controlOf(j, fileId))?.control, 'paused');
    } finally {
      await server.close();
    }
  });

  it('refuses every write when no token is set, while reads still answer', async () => {
    const j = await open();
    const server = await serve(j, undefined);
    try {
      const { fileId } = await seedFile(j);
      const r = await post(server, `/api/files/${fileId}/pause`, JSON_TYPE);
      assert.equal(r.status, 403);
      assert.match(String(r.body.error), /writes need SMSDROP_HTTP_TOKEN/);
      assert.equal((await controlOf(j, fileId))?.control, null);
      assert.equal((await fetch(`${server.url}/api/files/${fileId}`)).status, 200);
    } finally {
      await server.close();
    }
  });

  it('counts held, scheduled and paused files in /metrics', async () => {
    const j = await open();
    const server = await serve(j, TOKEN);
    try {
      const scrape = async () =>
        (
          await (
            await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })
          ).text()
        )
          .split('\n')
          .filter((l) => l.startsWith('smsdrop_files_waiting{'));
      assert.deepEqual(await scrape(), [
        'smsdrop_files_waiting{reason="held"} 0',
        'smsdrop_files_waiting{reason="scheduled"} 0',
        'smsdrop_files_waiting{reason="paused"} 0',
      ]);
      const held = await seedFile(j);
      await j.run("UPDATE files SET control = 'held' WHERE id = ?", held.fileId);
      const scheduled = await seedFile(j);
      await j.run("UPDATE files SET control = 'held' WHERE id = ?", scheduled.fileId);
      await post(server, `/api/files/${scheduled.fileId}/approve`, WITH_TOKEN, {
        at: '2099-01-01T00:00:00Z',
      });
      for (const _ of [1, 2]) {
        const { fileId } = await seedFile(j);
        await post(server, `/api/files/${fileId}/pause`);
      }
      assert.deepEqual(await scrape(), [
        'smsdrop_files_waiting{reason="held"} 1',
        'smsdrop_files_waiting{reason="scheduled"} 1',
        'smsdrop_files_waiting{reason="paused"} 2',
      ]);
    } finally {
      await server.close();
    }
  });
});
