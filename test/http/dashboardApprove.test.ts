// The dashboard's Approve button in a real headless browser (Debian's chromium driven by
// playwright-core), on each journal: the HTTP server over a journal holding a file held for
// approval. The page opened with its token in the address shows the file as held with Approve
// (and no Pause); the click approves it in the journal, and the row then offers Pause.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { chromium, type BrowserContext } from 'playwright-core';
import { onEachJournal } from '../conformance/journals.js';
import { seedBatch, seedFile } from '../conformance/seed.js';
import { serve } from './server.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'];
const TOKEN = 'dashboard-approve-token-0123456789';

function browserMissing(): string | false {
  if (fs.existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true') assert.fail(`${CHROMIUM} is missing: install Debian's chromium`);
  return `${CHROMIUM} is missing (apt-get install -y chromium): Approve is not tested`;
}

let browser: BrowserContext | undefined;
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-approve-'));
after(async () => {
  await browser?.close();
  fs.rmSync(profile, { recursive: true, force: true });
});

onEachJournal('the dashboard’s Approve', ({ open }) => {
  it('approves a held file from the page', { skip: browserMissing() }, async () => {
    const j = await open();
    const at = await seedFile(j);
    await seedBatch(j, at, 'planned', ['13800000001', '13800000002']);
    await j.run("UPDATE files SET control = 'held' WHERE id = ?", at.fileId);
    const server = await serve(j, TOKEN);
    browser ??= await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
    });
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url}/#token=${TOKEN}`);
      const row = page.locator(`#files tbody tr[data-file="${at.fileId}"]`);
      await row.locator('button[data-action="approve"]').waitFor({ timeout: 30_000 });
      assert.match(await row.locator('td.control').innerText(), /^held/);
      assert.equal(await row.locator('button[data-action="pause"]').count(), 0, 'held: no pause');
      await row.locator('button[data-action="approve"]').click();
      await row.locator('button[data-action="pause"]').waitFor({ timeout: 10_000 });
      assert.equal((await j.handle.control.control(at.fileId))?.control, null, 'approved');
      assert.match(server.logged.join('\n'), /approve by api from 127\.0\.0\.1/);
    } finally {
      await page.close();
      await server.close();
    }
  });
});
