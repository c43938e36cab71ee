// The dashboard's operator buttons in a real headless browser (Debian's chromium driven by
// playwright-core) against a real daemon, whose sending window is closed so that a dropped file is
// read and planned and then waits, unfinished. With SMSDROP_HTTP_TOKEN the page asks for the
// token, takes it in its token field, and then Pause, Resume and Cancel (confirmed, naming the file
// and its unsent rows) reach the journal; without a token set, the daemon refuses the buttons and
// the page says why. What a click did is read from the journal file itself.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
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
import { withSqliteFile } from '../sqliteFile.js';

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
const TOKEN = 'dashboard-control-token-0123456789';
const ROWS = 30;

/** In CI a missing browser is a failure; on a developer's machine, a skip that says why. */
function browserMissing(): string | false {
  if (fs.existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true') assert.fail(`${CHROMIUM} is missing: install Debian's chromium`);
  return `${CHROMIUM} is missing (apt-get install -y chromium): the buttons are not tested`;
}

interface FileControlRow {
  control: string | null;
  cancelled: number;
  pending: number;
}

function journalFile(dataDir: string): FileControlRow | undefined {
  return withSqliteFile(
    dataDir,
    (db) =>
      db
        .prepare("SELECT control, cancelled, pending FROM v_files WHERE name = 'autumn.csv'")
        .get() as FileControlRow | undefined,
  );
}

describe('the dashboard’s Approve, Pause, Resume and Cancel in Chromium', () => {
  let dir: string;
  let sim: Simulator;
  const daemons: Proc[] = [];
  let browser: BrowserContext | undefined;
  let failed = false;

  before(async () => {
    dir = tempDir('daemon-dashboard-control');
    sim = await startSimulatorProcess(dir, ['--latency-ms', '1-3']);
  });

  after(async () => {
    await browser?.close();
    for (const d of daemons) d.kill('SIGKILL');
    await Promise.all(daemons.map((d) => d.exited));
    await sim?.stop();
    if (!failed) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function openPage(): Promise<Page> {
    browser ??= await chromium.launchPersistentContext(path.join(dir, 'chromium-profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1400, height: 820 },
    });
    return await browser.newPage();
  }

  /** A daemon outside its sending window with autumn.csv read and planned, waiting. */
  async function daemonWithWaitingFile(name: string, env: Record<string, string>) {
    const dataDir = path.join(dir, name);
    const d = await startDaemon({
      dataDir,
      simulator: sim,
      env: { SMSDROP_SEND_WINDOW: closedWindow(), ...env },
    });
    daemons.push(d);
    fs.writeFileSync(path.join(dataDir, 'inbox', 'autumn.csv'), contactsCsv(ROWS));
    await waitUntil(
      () =>
        fs.existsSync(path.join(dataDir, 'journal.sqlite')) &&
        journalFile(dataDir)?.pending === ROWS,
      30_000,
      'autumn.csv planned',
      d.output,
    );
    return { dataDir, d, url: httpUrlOf(d) };
  }

  async function kept<T>(page: Page, name: string, test: () => Promise<T>): Promise<T> {
    try {
      return await test();
    } catch (err) {
      failed = true;
      await page.screenshot({ path: path.join(dir, `${name}-failure.png`), fullPage: true });
      throw err;
    }
  }

  it(
    'with the token entered in the page, pauses, resumes and cancels the file in the journal',
    { skip: browserMissing() },
    async () => {
      const { dataDir, d, url } = await daemonWithWaitingFile('token', {
        SMSDROP_HTTP_TOKEN: TOKEN,
      });
      const page = await openPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await kept(page, 'token', async () => {
        await page.goto(`${url}/`);
        await page.waitForSelector('body[data-token-needed="true"]', { timeout: 30_000 });
        assert.equal(await page.locator('button[data-action]').count(), 0, 'no button yet');

        await page.fill('#token', TOKEN);
        await page.click('#token-form button[type=submit]');
        const row = page.locator('#files tbody tr', { hasText: 'autumn.csv' });
        await row.locator('button[data-action="pause"]').waitFor({ timeout: 30_000 });
        assert.equal(await row.locator('button[data-action="approve"]').count(), 0, 'not held');
        assert.equal(await row.locator('button[data-action="resume"]').count(), 0, 'not paused');

        await row.locator('button[data-action="pause"]').click();
        await waitUntil(() => journalFile(dataDir)?.control === 'paused', 10_000, 'paused');
        await row.locator('button[data-action="resume"]').waitFor({ timeout: 10_000 });
        assert.match(await row.locator('td.control').innerText(), /paused/);
        assert.match(await page.locator('#action').innerText(), /autumn\.csv: pause done/);

        await row.locator('button[data-action="resume"]').click();
        await waitUntil(() => journalFile(dataDir)?.control === null, 10_000, 'resumed');
        await row.locator('button[data-action="pause"]').waitFor({ timeout: 10_000 });

        const asked: string[] = [];
        let answer = false;
        page.on('dialog', (dialog) => {
          asked.push(dialog.message());
          void (answer ? dialog.accept() : dialog.dismiss());
        });
        await row.locator('button[data-action="cancel"]').click();
        await waitUntil(() => asked.length === 1, 10_000, 'the confirmation');
        assert.match(asked[0]!, new RegExp(`Cancel autumn\\.csv\\? Its ${ROWS} unsent rows`));
        assert.equal(journalFile(dataDir)?.control, null, 'dismissed: nothing cancelled');

        answer = true;
        await row.locator('button[data-action="cancel"]').click();
        await waitUntil(() => journalFile(dataDir)?.control === 'cancelled', 10_000, 'cancelled');
        assert.equal(journalFile(dataDir)?.cancelled, ROWS, 'every unsent row cancelled');
        await waitUntil(
          async () => (await row.locator('td.control').innerText()).trim() === 'cancelled',
          10_000,
          'the row showing cancelled, with no button',
        );
        assert.deepEqual(errors, [], 'no script error');
        assert.match(d.output(), /autumn\.csv \(id 1\): pause by api from 127\.0\.0\.1/);
        assert.doesNotMatch(d.output(), new RegExp(TOKEN), 'the token is in no log line');
      });
    },
  );

  it(
    'without a token set, the daemon refuses the buttons and the page says why',
    { skip: browserMissing() },
    async () => {
      const { dataDir, url } = await daemonWithWaitingFile('no-token', {});
      const page = await openPage();
      await kept(page, 'no-token', async () => {
        await page.goto(`${url}/`);
        const row = page.locator('#files tbody tr', { hasText: 'autumn.csv' });
        await row.locator('button[data-action="pause"]').waitFor({ timeout: 30_000 });
        await row.locator('button[data-action="pause"]').click();
        await page.locator('#action.refused').waitFor({ timeout: 10_000 });
        assert.match(
          await page.locator('#action').innerText(),
          /autumn\.csv: pause refused: writes need SMSDROP_HTTP_TOKEN/,
        );
        assert.equal(journalFile(dataDir)?.control, null, 'not paused');
      });
    },
  );
});
