// A journal whose groups hold 48-bit key hashes and whose accepted batches keep the provider's
// code (as every smsdrop wrote them before), opened by this smsdrop: each group's hash becomes the
// one intake makes now, so the repeat window still finds the messages it sent, in 4 bytes; the
// batch's code reads the same whether it is kept or not.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openJournal } from '../../src/journal/open.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { runRule, SQLITE_DIALECT } from '../../src/journal/rules.js';
import { groupsByHash, KEY_HASH_NARROWED } from '../../src/journalRules/sentBefore.js';
import { groupKeyOf } from '../../src/intake/row.js';
import { groupKey } from '../../src/plan/groups.js';
import { journalBefore } from './olderJournal.js';
import { sqliteOf } from './sqliteOf.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-key-hash-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const NARROWED_VERSION = MIGRATIONS.find((m) => m.sql === KEY_HASH_NARROWED)!.version;
const MESSAGES = [
  ['APP', '2', ['订单100000000', '1元']],
  ['APP', '2', ['订单100000001', '80.19元']],
  ['APP', '7', []],
] as const;

/** The key hash a journal kept before: 48 bits, the first 12 hex digits of the key's MD5. */
const hashOf48Bits = (app: string, template: string, datas: readonly string[]) =>
  parseInt(
    createHash('md5')
      .update(groupKeyOf(app, template, datas))
      .digest('hex')
      .slice(0, 12),
    16,
  );

/** A journal as the migrations before the narrowing leave it: one file's messages, accepted. */
function journalWithOldHashes(file: string): void {
  const db = journalBefore(file, NARROWED_VERSION);
  db.exec(`
    INSERT INTO files (id, sha256, name, size, encoding, status, header, created_at)
      VALUES (1, 'a', 'list.csv', 1, 'utf8', 'done', '{"columns":["phone"],"extras":[]}', 't');
    INSERT INTO apps (id, app_id) VALUES (1, 'APP');`);
  MESSAGES.forEach(([app, template, datas], i) => {
    db.prepare(
      "INSERT INTO groups (id, file_id, key_hash, app_id, app, template_id, datas) VALUES (?, 1, ?, '', 1, ?, ?)",
    ).run(i + 1, hashOf48Bits(app, template, datas), template, JSON.stringify(datas));
    db.prepare(
      `INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, status_code, created_at, updated_at)
       VALUES (?, 1, ?, 'AAAAAAAAAAAAAAA${i}', 1, 'accepted', '000000', 0, 0)`,
    ).run(i + 1, i + 1);
    db.prepare(
      "INSERT INTO rows (file_id, line, phone_raw, phone, group_id, intake, batch_id) VALUES (1, ?, '', '13800000001', ?, 'valid', ?)",
    ).run(i + 2, i + 1, i + 1);
  });
  db.close();
}

describe("a group's key hash in 28 bits, an accepted batch's code", () => {
  it('an old journal migrates in place: its groups are found by the hash intake makes now', () => {
    const file = path.join(dir, 'journal.sqlite');
    journalWithOldHashes(file);
    const journal = openJournal(file);
    try {
      const db = sqliteOf(journal);
      const hashes = MESSAGES.map(
        ([app, template, datas]) => groupKey(app, template, datas).keyHash,
      );
      for (const h of hashes) assert.ok(h >= 0 && h < 2 ** 28, `${h} in 28 bits`);
      assert.deepEqual(db.prepare('SELECT key_hash FROM groups ORDER BY id').pluck().all(), hashes);
      const found = runRule(journal, groupsByHash(SQLITE_DIALECT, 2, hashes));
      assert.deepEqual(
        found.map((g) => [g.id, g.app_id, g.template_id, g.datas]),
        MESSAGES.map(([app, template, datas], i) => [i + 1, app, template, JSON.stringify(datas)]),
      );
      assert.deepEqual(
        db.prepare('SELECT DISTINCT status_code FROM v_recipients').pluck().all(),
        ['000000'],
        'the code an older smsdrop kept reads the same',
      );
    } finally {
      journal.close();
    }
  });
});
