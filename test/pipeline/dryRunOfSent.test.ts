// `send --dry-run` of bytes the real journal already holds: it reads that journal (openReader)
// and says which earlier run has them and what a real send would do, while it plans in a journal
// of its own and sends nothing.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, it } from 'node:test';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { envFor, runCli, startSim, tempDir, writeCsv } from './helpers.js';

let sim: RunningSimulator;
before(async () => (sim = await startSim()));
after(() => sim.close());

it('a dry run of a file already sent names its journal record and sends nothing', async () => {
  const dir = tempDir();
  const env = envFor(sim, path.join(dir, 'data'));
  const file = writeCsv(dir, 'once.csv', 'phone,template,data1,data2\n13800000001,1,a,b\n');
  const sent = await runCli(['send', file], env);
  assert.equal(sent.status, 0, sent.stderr);
  const requests = sim.records.length;
  const dry = await runCli(['send', file, '--dry-run', '--json'], env);
  assert.equal(dry.status, 0, dry.stderr);
  assert.equal(dry.json!.status, 'dry-run');
  assert.match(
    dry.stderr,
    /these bytes are already in the journal as once\.csv \(status done\); a real send would report "already sent" unless --resend/,
  );
  assert.equal(sim.records.length, requests, 'the dry run sent nothing');
});
