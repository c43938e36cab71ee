// The daemon's HTTP server (src/http/server.ts) started in the test's process on a loopback port
// over a conformance subject's journal, as the daemon starts it (src/daemon/surface.ts), with its
// log lines kept for the test to read.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { createMetrics } from '../../src/http/metrics.js';
import { type HttpSurface, startHttpSurface } from '../../src/http/server.js';
import type { Subject } from '../conformance/journals.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

export interface Server {
  url: string;
  logged: string[];
  close(): Promise<void>;
}

/**
 * The HTTP server over the subject's journal; `token`: SMSDROP_HTTP_TOKEN (none: unset), `hosts`:
 * SMSDROP_HTTP_HOSTS.
 */
export async function serve(
  j: Subject,
  token: string | undefined,
  hosts: readonly string[] = [],
): Promise<Server> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-control-'));
  dirs.push(dataDir);
  fs.mkdirSync(path.join(dataDir, 'inbox'));
  const logged: string[] = [];
  const reads = j.handle.reads;
  const surface: HttpSurface = await startHttpSurface(
    { text: '127.0.0.1:0', host: '127.0.0.1', port: 0 },
    {
      reads,
      control: j.handle.control,
      log: { info: (message, meta) => logged.push(`${message} ${JSON.stringify(meta)}`) },
      busy: () => false,
      dataDir,
      token,
      hosts,
      healthzOpen: false,
      metrics: createMetrics({ reads, inProgress: new Set(), pausedCode: () => undefined }),
      health: {
        journal: reads,
        dataDir,
        diskFloorBytes: 0,
        watching: () => true,
        paused: () => undefined,
        webhooksFailing: () => [],
      },
    },
  );
  return { url: surface.url, logged, close: () => surface.close() };
}
