// The README is a user guide and must stay true: at most 300 lines, one settings table that
// matches src/config (every setting once, with its JSON key and default), no dated change notes or
// test-file citations, and links (to docs/ too) that lead somewhere.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SETTINGS } from '../../src/config/index.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');

/**
 * The default as the table writes it: `on`/`off`, the number, the text; undefined is free prose.
 */
function shownDefault(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'boolean') return value ? '`on`' : '`off`';
  if (typeof value === 'object' && value !== null && 'text' in value)
    return `\`${String((value as { text: string }).text)}\``;
  if (typeof value === 'string' || typeof value === 'number') return `\`${value}\``;
  assert.fail(`a default the table has no way to show: ${JSON.stringify(value)}`);
}

/** GitHub's anchor for a heading. */
const slug = (heading: string) =>
  heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');

describe('the README', () => {
  it('is at most 300 lines', () => {
    assert.ok(readme.split('\n').length - 1 <= 300, `${readme.split('\n').length - 1} lines`);
  });

  it('has one settings table: every setting once, with its key and default', () => {
    const rows = [...readme.matchAll(/^\| `(SMSDROP_[A-Z_]+)` \| `(\w+)` \| ([^|]+) \|/gm)];
    assert.deepEqual(
      rows.map((r) => r[1]),
      Object.values(SETTINGS).map((s) => s.env),
      'the rows, in the order of src/config',
    );
    for (const [, env, key, shown] of rows) {
      const [name, setting] = Object.entries(SETTINGS).find(([, s]) => s.env === env)!;
      assert.equal(key, name, `${env}'s key`);
      const expected = shownDefault(
        (setting.schema as { parse(v: unknown): unknown }).parse(undefined),
      );
      if (expected === undefined)
        assert.match(shown!.trim(), /^(none|the host's)/, `${env} has no default`);
      else assert.equal(shown!.trim(), expected, `${env}'s default`);
    }
  });

  it('has no dated change notes and cites no test files', () => {
    assert.doesNotMatch(readme, /\b(Until|until|since|Since|as of) \d{4}-\d{2}-\d{2}/);
    assert.doesNotMatch(readme, /test\/[\w/]+\.test\.ts/);
  });

  it('links lead to files and headings that exist', () => {
    const docs = readdirSync(path.join(repo, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => path.join('docs', f));
    const anchors = new Map<string, Set<string>>();
    for (const file of ['README.md', ...docs]) {
      const text = readFileSync(path.join(repo, file), 'utf8');
      anchors.set(file, new Set([...text.matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1]!))));
    }
    for (const file of ['README.md', ...docs]) {
      const text = readFileSync(path.join(repo, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^https?:/.test(target!)) continue;
        const [where, anchor] = target!.split('#');
        const resolved = where ? path.normalize(path.join(path.dirname(file), where)) : file;
        assert.ok(existsSync(path.join(repo, resolved)), `${file}: ${target} leads nowhere`);
        if (anchor && resolved.endsWith('.md'))
          assert.ok(anchors.get(resolved)?.has(anchor), `${file}: no heading for ${target}`);
      }
    }
  });
});
