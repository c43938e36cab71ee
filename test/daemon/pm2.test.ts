// The daemon under a real pm2 (the npm package, with a private PM2_HOME so no other pm2 is
// touched), started from ecosystem.config.js as the README says: it processes a dropped file, its
// info lines land in pm2-out.log and its warnings in pm2-error.log, and it stops cleanly with
// `pm2 stop`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import {
  assertEachOnce,
  cleanEnv,
  contactsCsv,
  CREDENTIALS,
  numbersOf,
  readLogLines,
  REPO,
  resultRows,
  type Simulator,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

const run = promisify(execFile);
const PM2 = path.join(REPO, 'node_modules', '.bin', 'pm2');

interface Pm2Process {
  name: string;
  pid: number;
  pm2_env: {
    status: string;
    exec_mode: string;
    kill_timeout: number;
    restart_time: number;
    instances: number;
  };
}

describe('smsdrop under pm2', () => {
  let dir: string;
  let data: string;
  let sim: Simulator;
  let env: NodeJS.ProcessEnv;
  const pm2 = (...args: string[]) => run(PM2, args, { cwd: REPO, env, timeout: 60_000 });
  const list = async () => JSON.parse((await pm2('jlist')).stdout) as Pm2Process[];
  const logLines = () => readLogLines<{ message: string }>(path.join(data, 'logs'));
  const showLogs = () =>
    logLines()
      .map((l) => l.message)
      .join('\n');

  before(async () => {
    dir = tempDir('daemon-pm2');
    data = path.join(dir, 'data');
    sim = await startSimulatorProcess(dir, ['--latency-ms', '0-3']);
    env = cleanEnv({
      ...CREDENTIALS,
      PM2_HOME: path.join(dir, 'pm2'),
      SMSDROP_BASE_URL: sim.url,
      SMSDROP_DATA_DIR: data,
      SMSDROP_FROM_SOURCE: '1',
      SMSDROP_STABILITY_MS: '300',
      SMSDROP_GRACE_MS: '5000',
    });
  });

  after(async () => {
    await pm2('kill').catch(() => undefined); // ends this test's pm2 daemon and anything it runs
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts from ecosystem.config.js, processes a dropped file, and stops cleanly with pm2 stop', async () => {
    await pm2('start', 'ecosystem.config.js');
    await waitUntil(
      () => logLines().some((l) => l.message.startsWith('watching ')),
      30_000,
      'the daemon to watch inbox/',
      showLogs,
    );
    const [app] = await list();
    assert.equal(app?.name, 'smsdrop');
    assert.equal(app.pm2_env.status, 'online');
    assert.equal(app.pm2_env.exec_mode, 'fork_mode');
    assert.equal(app.pm2_env.kill_timeout, 15_000, 'grace period + 10 s');

    fs.writeFileSync(path.join(data, 'inbox', 'pm2.csv'), contactsCsv(5));
    await waitUntil(
      () => fs.existsSync(path.join(data, 'done', 'pm2.result.csv')),
      30_000,
      'done/pm2.result.csv',
      showLogs,
    );
    assert.equal(
      resultRows(path.join(data, 'done', 'pm2.result.csv')).filter((r) => r.status === 'accepted')
        .length,
      5,
    );
    assertEachOnce(sim.records(), numbersOf(5));

    // Info lines in pm2-out.log, warnings in pm2-error.log (a file that is no list is one).
    fs.writeFileSync(path.join(data, 'inbox', 'notes.pdf'), 'not a list\n');
    const pm2Log = (name: string) =>
      fs.readFileSync(path.join(data, 'logs', `pm2-${name}.log`), 'utf8');
    await waitUntil(
      () => /warn failed notes\.pdf: E_FILE_NOT_CSV/.test(pm2Log('error')),
      30_000,
      'the warning in pm2-error.log',
      () => pm2Log('error'),
    );
    assert.match(pm2Log('out'), /info taken pm2\.csv/);
    assert.doesNotMatch(pm2Log('out'), / (warn|error) /);
    assert.doesNotMatch(pm2Log('error'), / (info|debug) /);

    await pm2('stop', 'smsdrop');
    const [stopped] = await list();
    assert.equal(stopped?.pm2_env.status, 'stopped');
    assert.equal(stopped.pm2_env.restart_time, 0, 'never restarted');
    assert.match(
      logLines().at(-1)?.message ?? '',
      /stopped cleanly/,
      'drained and closed, not killed',
    );
    assert.throws(() => process.kill(app.pid, 0), { code: 'ESRCH' }, 'the daemon process is gone');
    assert.ok(!fs.existsSync(path.join(data, 'smsdrop.lock')), 'lock released');
  });
});
