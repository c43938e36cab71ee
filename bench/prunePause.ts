// `node --import tsx bench/prunePause.ts [ROWS]`: how long pruning holds up sending (issue 27).
// In one process, as in the daemon: a journal holding an old file of ROWS rows, sent to the
// built-in simulator over loopback, then ended long ago; a second file of ROWS rows is sent, once
// alone and once while the old file is pruned. Prints the longest prune step (a write of the
// journal's queue: what requests wait for at most), the event loop's longest stall in both runs,
// the journal's size before and after, and the one-time VACUUM that sets auto_vacuum on a copy of
// the journal made without it. Quote the numbers of one run on one machine.
import Database from '../src/journal/sqlite.js';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pLimit from 'p-limit';
import { loadConfig } from '../src/config/index.js';
import { journalPath } from '../src/journal/paths.js';
import { openJournal } from '../src/journal/open.js';
import { pruneJournal } from '../src/journal/prune.js';
import { journalSize } from '../src/journal/storage.js';
import { formatBytes } from '../src/log/duration.js';
import { processFile, type PipelineContext } from '../src/pipeline/index.js';
import { FilesInProgress } from '../src/pipeline/inProgress.js';
import { IntakeTurns } from '../src/pipeline/turns.js';
import { handleOf } from '../src/journal/handle.js';
import { connectProvider } from '../src/provider/connect.js';
import { AccountPause, createRateLimiter } from '../src/send/rate.js';
import { startSimulator } from '../src/simulator/index.js';
import { connectionOf as sqliteOf } from '../src/journal/connection.js';

const ROWS = Number(process.argv[2] ?? 200_000);
const CREDS = {
  accountSid: 'ACprune000000000000000000000001',
  authToken: 'prunetoken00000000000000000001',
  appId: 'APPprune00000000000000000000001',
};

function csv(dir: string, name: string, from: number): string {
  const file = path.join(dir, name);
  const lines = ['phone,template,data1,data2'];
  for (let i = 0; i < ROWS; i++) lines.push(`${13_000_000_000 + from + i},1,v${i % 50},5`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-prune-pause-'));
const sim = await startSimulator({
  ...CREDS,
  appIds: [CREDS.appId],
  templates: { '1': 2 },
  keepRecords: false,
});
const config = loadConfig({
  configDir: path.join(dir, 'none'),
  env: {},
  flags: {
    dataDir: dir,
    baseUrl: sim.url,
    accountSid: CREDS.accountSid,
    authToken: CREDS.authToken,
    appId: CREDS.appId,
    repeatWindow: 'off',
    concurrency: 16,
  },
});
const provider = await connectProvider(config);
const db = openJournal(journalPath(dir));
const ports = handleOf(db);
const ctx: PipelineContext = {
  send: ports.send,
  files: ports.files,
  reads: ports.reads,
  client: provider.client,
  config,
  limit: pLimit(config.concurrency),
  rateLimiter: createRateLimiter(),
  pause: new AccountPause(),
  defaultAppId: provider.defaultAppId,
  turns: new IntakeTurns(ports.files),
  inProgress: new FilesInProgress(),
};

/**
 * Sends `file`, measuring the event loop's longest stall meanwhile; `alongside` runs at the same
 * time.
 */
async function send(
  file: string,
  alongside?: () => Promise<unknown>,
): Promise<{ seconds: number; stallMs: number }> {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  await Promise.all([processFile(ctx, file), alongside?.()]);
  loop.disable();
  return { seconds: (performance.now() - started) / 1000, stallMs: loop.max / 1e6 };
}

await send(csv(dir, 'old.csv', 0));
new Database(journalPath(dir))
  .prepare("UPDATE files SET finished_at = '2000-01-01T00:00:00.000Z'")
  .run();
const vacuumCopy = path.join(dir, 'copy.sqlite');
sqliteOf(db).pragma('wal_checkpoint(TRUNCATE)');
copyFileSync(journalPath(dir), vacuumCopy);

const alone = await send(csv(dir, 'alone.csv', 1_000_000));
const sizeBefore = journalSize(db);
const steps: number[] = [];
let pruneSeconds = 0;
const withPrune = await send(csv(dir, 'during.csv', 2_000_000), async () => {
  await new Promise((resolve) => setTimeout(resolve, 500)); // requests under way first
  const started = performance.now();
  const result = await pruneJournal(
    db,
    {
      endedBefore: new Date(Date.now() - 60_000).toISOString(),
      onStep: (what, ownMs, committedMs) => {
        steps.push(ownMs);
        if (committedMs > 50)
          console.log(
            `  step ${what}: own statements ${ownMs.toFixed(1)} ms, committed after ${committedMs.toFixed(1)} ms`,
          );
      },
    },
    ctx.inProgress,
  );
  pruneSeconds = (performance.now() - started) / 1000;
  console.log(
    `pruned ${result.files.length} file(s): ${result.records.rows} rows, ${result.records.batches} batches, ${result.records.attempts} attempts; checkpointed: ${result.checkpointed}`,
  );
});
const sizeAfter = journalSize(db);
steps.sort((a, b) => a - b);
console.log(`rows per file: ${ROWS}`);
console.log(
  `send alone: ${alone.seconds.toFixed(1)} s, longest event-loop stall ${alone.stallMs.toFixed(1)} ms`,
);
console.log(
  `send while pruning: ${withPrune.seconds.toFixed(1)} s, longest event-loop stall ${withPrune.stallMs.toFixed(1)} ms`,
);
console.log(
  `prune: ${pruneSeconds.toFixed(1)} s, ${steps.length} steps; step's own statements: median ${steps[steps.length >> 1]!.toFixed(1)} ms, p99 ${steps[Math.floor(steps.length * 0.99)]!.toFixed(1)} ms, longest ${steps.at(-1)!.toFixed(1)} ms`,
);
console.log(
  `journal: ${formatBytes(sizeBefore.bytes)} before pruning (with 3 files), ${formatBytes(sizeAfter.bytes)} after (free inside ${formatBytes(sizeAfter.free)})`,
);
db.close();
await provider.close();
await sim.close();

// The one-time conversion of a journal made before auto_vacuum: the copy of the journal holding
// the old file, set back to no auto_vacuum, then opened as smsdrop opens it.
const plain = new Database(vacuumCopy);
plain.pragma('auto_vacuum = NONE');
plain.exec('VACUUM');
plain.close();
const copySize = journalSize({ name: vacuumCopy, pragma: () => 0 } as never).database;
const opened = performance.now();
openJournal(vacuumCopy).close();
console.log(
  `one-time VACUUM at open of a ${formatBytes(copySize)} journal (${ROWS} rows): ${((performance.now() - opened) / 1000).toFixed(1)} s`,
);
rmSync(dir, { recursive: true, force: true });
