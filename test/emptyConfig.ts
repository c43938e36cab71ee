// Settings for the smsdrop processes the tests start, so that what a developer keeps in the
// checkout's config/ (local.json, templates.json: the processes run in the checkout) cannot change
// what the tests see: an empty config file (SMSDROP_CONFIG) and no templates check.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let emptyConfig: string | undefined;

/**
 * `{}`, one file per test process, in a folder anyone may read: some tests run the daemon as
 * another user.
 */
export function emptyConfigFile(): string {
  if (emptyConfig === undefined) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-config-'));
    fs.chmodSync(dir, 0o755);
    emptyConfig = path.join(dir, 'local.json');
    fs.writeFileSync(emptyConfig, '{}', { mode: 0o644 });
  }
  return emptyConfig;
}

/** The environment that keeps a developer's config/ out of a test's smsdrop process. */
export function isolatedSettings(): { SMSDROP_CONFIG: string; SMSDROP_TEMPLATES_FILE: string } {
  return { SMSDROP_CONFIG: emptyConfigFile(), SMSDROP_TEMPLATES_FILE: 'off' };
}
