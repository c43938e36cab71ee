// Shared by the intake tests: temp files and reading every row of a file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { readRows, type IntakeOptions, type IntakeRow } from '../../src/intake/index.js';

export const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures');

/** A fresh temp dir per test file (each runs in its own process), removed after its tests. */
export const TEMP_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-intake-'));
after(() => fs.rmSync(TEMP_DIR, { recursive: true, force: true }));

/** Writes content to a new file in the temp dir. */
export function tempFile(name: string, content: string | Buffer): string {
  const file = path.join(TEMP_DIR, name);
  fs.writeFileSync(file, content);
  return file;
}

export const DEFAULTS: IntakeOptions = {
  encoding: 'utf-8',
  allowInternational: false,
  defaultAppId: 'app-default',
  defaultTemplateId: 'tpl-default',
};

/** Every row of the file, chunks flattened. */
export async function allRows(
  file: string,
  options: Partial<IntakeOptions> = {},
): Promise<IntakeRow[]> {
  const rows: IntakeRow[] = [];
  for await (const chunk of readRows(file, { ...DEFAULTS, ...options })) rows.push(...chunk);
  return rows;
}
