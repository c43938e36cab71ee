// An empty config file for the smsdrop processes the tests start (SMSDROP_CONFIG), so a developer's
// own config/local.json cannot change what the tests see.
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
