// The dashboard in a real headless browser: Debian's chromium driven by playwright-core, against a
// real daemon and simulator. A dropped file's name, progress and failures by code must show. The
// machine has no network: the flags keep Chromium from reaching out, and every asset comes from
// the daemon. A failure keeps a screenshot (its path is printed). DASHBOARD_SCREENSHOT=FILE also
// saves one there (docs/dashboard.png is made so).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext } from 'playwright-core';
import {
  closedWindow,
  contactsCsv,
  httpUrlOf,
  type Proc,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';
import { postgresMissing, startPostgres } from '../pg/cluster.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** In CI a missing browser is a failure; on a developer's machine, a skip that says why. */
function browserMissing(): string | false {
  if (fs.existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true')
    assert.fail(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does)`,
    );
  return `${CHROMIUM} is missing (apt-get install -y chromium): the dashboard is not tested in a browser`;
}

describe('the dashboard in Chromium', () => {
  let dir: string;
  let sim: Simulator;
  let daemon: Proc | undefined;
  let browser: BrowserContext | undefined;
  let failed = false;

  before(async () => {
    dir = tempDir('daemon-dashboard');
    sim = await startSimulatorProcess(dir, [
      '--latency-ms',
      '1-3',
      '--faults',
      'status=160032@/7,status=160042@/11',
    ]);
  });

  async function openPage() {
    browser ??= await chromium.launchPersistentContext(path.join(dir, 'chromium-profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1280, height: 820 },
    });
    return browser.pages()[0] ?? (await browser.newPage());
  }

  after(async () => {
    await browser?.close();
    daemon?.kill('SIGKILL');
    await daemon?.exited;
    await sim?.stop();
    if (!failed) fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    'shows a dropped file with its progress and its failures by code',
    { skip: browserMissing() },
    async () => {
      const data = path.join(dir, 'data');
      daemon = await startDaemon({
        dataDir: data,
        simulator: sim,
        env: { SMSDROP_CONCURRENCY: '2' },
      });
      const d = daemon;
      fs.writeFileSync(
        path.join(data, 'inbox', 'spring-campaign.csv'),
        contactsCsv(120, { bad: 3 }),
      );
      await waitUntil(
        () => fs.existsSync(path.join(data, 'done', 'spring-campaign.result.csv')),
        60_000,
        'the file done',
        d.output,
      );

      const page = await openPage();
      const outside: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(httpUrlOf(d))) outside.push(r.url());
      });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      try {
        await page.goto(`${httpUrlOf(d)}/`);
        await page.waitForSelector('body[data-loaded="true"]', { timeout: 30_000 });
        const row = page.locator('#files tbody tr', { hasText: 'spring-campaign.csv' });
        assert.equal(await row.count(), 1, 'the file is listed');
        assert.match(await row.innerText(), /done/);
        assert.equal(await row.locator('[role=progressbar]').getAttribute('aria-valuenow'), '100');
        assert.match(await row.innerText(), /100\.0%/);
        assert.equal(
          await row.locator('a', { hasText: 'result.csv' }).getAttribute('href'),
          '/files/1/result.csv',
        );
        const failures = await page.locator('#failure-table tbody').innerText();
        assert.match(failures, /160032/);
        assert.match(failures, /160042/);
        assert.equal(
          await page.locator('#failures canvas').count(),
          1,
          'the failure chart is drawn',
        );
        assert.equal(await page.locator('#rate canvas').count(), 1, 'the send-rate chart is drawn');
        assert.deepEqual(errors, [], 'no script error');
        assert.deepEqual(outside, [], 'nothing asked of another host');
        if (process.env.DASHBOARD_SCREENSHOT)
          await page.screenshot({ path: process.env.DASHBOARD_SCREENSHOT, fullPage: true });
      } catch (err) {
        failed = true;
        const shot = path.join(dir, 'dashboard-failure.png');
        await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
        console.error(`dashboard test failed; screenshot kept: ${shot}`);
        throw err;
      }
    },
  );

  it(
    'with a PostgreSQL journal, lists the daemons sharing it; with SQLite, no such section',
    { skip: browserMissing() || postgresMissing() },
    async () => {
      const postgres = await startPostgres();
      const node = await startDaemon({
        dataDir: path.join(dir, 'node'),
        simulator: sim,
        env: {
          SMSDROP_DATABASE_URL: await postgres.freshDatabase(),
          SMSDROP_NODE_ID: 'node-a',
          // the file stays in progress, read by node-a, its batches waiting for the window
          SMSDROP_SEND_WINDOW: closedWindow(),
        },
      });
      fs.writeFileSync(path.join(dir, 'node', 'inbox', 'autumn.csv'), contactsCsv(5));
      const page = await openPage();
      try {
        await page.goto(`${httpUrlOf(node)}/`);
        await page.waitForSelector('#nodes tbody tr', { timeout: 30_000 });
        assert.ok(await page.locator('#nodes-section').isVisible());
        const rows = await page.locator('#nodes tbody tr').allInnerTexts();
        assert.equal(rows.length, 1);
        assert.match(rows[0]!, /^node-a\t.+\t\d+ s ago\t\d+$/);
        await page.waitForSelector('#file-nodes tbody tr', { timeout: 30_000 });
        const files = await page.locator('#file-nodes tbody tr').allInnerTexts();
        assert.equal(files.length, 1);
        assert.match(files[0]!, /^autumn\.csv \(id \d+\)\tnode-a\t(none|node-a \d+)$/);
        if (daemon) {
          await page.goto(`${httpUrlOf(daemon)}/`);
          await page.waitForSelector('body[data-loaded="true"]', { timeout: 30_000 });
          assert.equal(await page.locator('#nodes-section').isVisible(), false, 'SQLite: no nodes');
        }
      } catch (err) {
        failed = true;
        await page.screenshot({ path: path.join(dir, 'nodes-failure.png') }).catch(() => {});
        throw err;
      } finally {
        node.kill('SIGTERM');
        await node.exited;
        await postgres.stop();
      }
    },
  );

  it(
    'opened without its token, says it needs one; with it in the address, shows the files',
    { skip: browserMissing() },
    async () => {
      const token = 'dashboard-token-0123456789';
      const d = await startDaemon({
        dataDir: path.join(dir, 'token'),
        env: { SMSDROP_HTTP_TOKEN: token },
      });
      const page = await openPage();
      try {
        await page.goto(`${httpUrlOf(d)}/`);
        await page.waitForSelector('body[data-token-needed="true"]', { timeout: 30_000 });
        assert.match(
          await page.locator('#state').innerText(),
          /needs its token: open this page as http:\/\/127\.0\.0\.1:\d+\/#token=SMSDROP_HTTP_TOKEN/,
        );
        assert.doesNotMatch(await page.locator('body').innerText(), /no answer|No file yet/);
        await page.goto(`${httpUrlOf(d)}/#token=${token}`);
        await page.reload();
        await page.waitForSelector('body[data-loaded="true"]', { timeout: 30_000 });
        assert.match(await page.locator('#nofiles').innerText(), /No file yet/);
      } catch (err) {
        failed = true;
        await page.screenshot({ path: path.join(dir, 'token-failure.png') }).catch(() => {});
        throw err;
      } finally {
        d.kill('SIGTERM');
        await d.exited;
      }
    },
  );
});
