#!/usr/bin/env node
// Runs the test suite with the node test runner. Node 20 does not expand globs in `--test`
// arguments, so this collects test/**/*.test.ts itself. Arguments narrow the run to files whose
// path contains one of them: `npm test -- daemon intake`.
//
// The tests make their folders (journals, data directories, CSV files: ~2 GB over a whole run)
// under os.tmpdir(). This points TMPDIR, for the tests and every process they start, at a folder
// of this run's own, removed when every test passed and kept, with its path printed, when one
// failed (the journals and logs of a failure are worth reading).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function collect(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : collect(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const filters = process.argv.slice(2);
const files = collect('test')
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
const tmp = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-tests-'));
chmodSync(tmp, 0o1777); // as /tmp: some tests run the daemon as another user
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', ...files],
  {
    stdio: 'inherit',
    env: { ...process.env, TMPDIR: tmp },
  },
);
if (result.status === 0) rmSync(tmp, { recursive: true, force: true });
else console.error(`test folders kept in ${tmp}`);
process.exit(result.status ?? 1);
