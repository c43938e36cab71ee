// Suppressed numbers, end to end with the real CLI and simulator: a number the provider refuses as
// blacklisted is never sent again, by any later file; people add and remove their own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { envFor, runCli, startSim, tempDir, writeCsv } from './helpers.js';

const BLOCKED = '13800000002';

describe('smsdrop suppress', () => {
  let sim: RunningSimulator;
  before(async () => (sim = await startSim({ blocked: [BLOCKED] })));
  after(() => sim.close());

  const sentTo = (phone: string) => sim.records.filter((r) => r.to.includes(phone)).length;

  it('a number the provider refused as blacklisted is rejected, with why, in later files, and costs no request', async () => {
    const dir = tempDir();
    const env = envFor(sim, path.join(dir, 'data'));
    const first = await runCli(
      [
        'send',
        writeCsv(
          dir,
          'first.csv',
          `phone,template,data1\n13800000001,2,a\n${BLOCKED},2,a\n13800000003,2,a\n`,
        ),
        '--json',
      ],
      env,
    );
    assert.equal(first.json!.failed, 1, first.stdout);
    assert.equal(first.json!.accepted, 2);
    const listed = await runCli(['suppress', 'list', '--json'], env);
    const list = JSON.parse(listed.stdout) as Array<{
      phone: string;
      reason: string;
      source: string;
    }>;
    assert.deepEqual(
      list.map((n) => [n.phone, n.source]),
      [[BLOCKED, 'provider']],
    );
    assert.match(list[0]!.reason, /^160034: /);

    // The same number, with other values, in a later file: one request for the other number only
    // (sent with it, the batch would be refused and split: three requests).
    const second = await runCli(
      [
        'send',
        writeCsv(dir, 'second.csv', `phone,template,data1\n${BLOCKED},2,b\n13800000004,2,b\n`),
        '--json',
      ],
      env,
    );
    assert.equal(second.status, 3, second.stderr); // not every row was sent
    assert.deepEqual(
      [second.json!.invalid, second.json!.accepted, second.json!.failed, second.json!.requests],
      [1, 1, 0, 1],
    );
    const rejected = readFileSync(path.join(dir, 'second.rejected.csv'), 'utf8');
    assert.match(
      rejected,
      new RegExp(
        `^2,"suppressed \\(provider, \\d{4}-\\d\\d-\\d\\d\\): 160034: [^"]+",${BLOCKED},`,
        'm',
      ),
    );
  });

  it('adds numbers as written in a sheet, with a reason; a later file skips them; remove sends to them again', async () => {
    const dir = tempDir();
    const env = envFor(sim, path.join(dir, 'data'));
    const listFile = writeCsv(dir, 'optouts.csv', 'phone\n+86 139 0000 0002\nn/a\n');
    const added = await runCli(
      [
        'suppress',
        'add',
        '１３９０００００００１',
        '--file',
        listFile,
        '--reason',
        'asked to stop (ticket 42)',
      ],
      env,
    );
    assert.equal(added.status, 0, added.stderr);
    assert.match(added.stdout, /^2 number\(s\) suppressed/);
    assert.match(
      added.stderr,
      /1 line\(s\) of .*optouts\.csv are not phone numbers and were skipped:\n {2}.*optouts\.csv:3: "n\/a": /,
    );
    const bad = await runCli(['suppress', 'add', '13900000003', '1.39E+10'], env);
    assert.equal(bad.status, 2);
    assert.match(
      bad.stderr,
      /"1\.39E\+10": a spreadsheet turned this number into scientific notation/,
    );

    const csv = 'phone,template,data1\n13900000001,2,x\n13900000002,2,x\n13900000003,2,x\n';
    const planned = await runCli(
      ['send', writeCsv(dir, 'plan.csv', csv), '--dry-run', '--json'],
      env,
    );
    assert.deepEqual(
      [planned.json!.invalid, (planned.json!.plan as { numbers: number }).numbers],
      [2, 1],
      'the dry run leaves them out too',
    );
    const before = sentTo('13900000003');
    const sent = await runCli(['send', writeCsv(dir, 'campaign.csv', csv), '--json'], env);
    assert.deepEqual([sent.json!.invalid, sent.json!.accepted], [2, 1]);
    assert.equal(sentTo('13900000001') + sentTo('13900000002'), 0);
    assert.equal(
      sentTo('13900000003'),
      before + 1,
      'the number given with a bad one was not added',
    );
    assert.match(
      readFileSync(path.join(dir, 'campaign.rejected.csv'), 'utf8'),
      /suppressed \(list, [^)]+\): asked to stop \(ticket 42\)/,
    );

    const removed = await runCli(['suppress', 'remove', '13900000001', '13900000009'], env);
    assert.match(removed.stdout, /^1 number\(s\) removed, 1 were not suppressed/);
    const again = await runCli(
      ['send', writeCsv(dir, 'campaign2.csv', csv.replaceAll(',x', ',y')), '--json'],
      env,
    );
    assert.deepEqual([again.json!.invalid, again.json!.accepted], [1, 2]);
    assert.equal(sentTo('13900000001'), 1);
  });
});
