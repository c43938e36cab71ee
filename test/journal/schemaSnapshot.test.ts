// The SQLite journal's schema snapshot (src/journal/schema.snapshot.sql) is what its migrations
// make: a migration that changes the schema without the snapshot regenerated fails here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SQLITE_SNAPSHOT, sqliteSchemaText, staleSnapshot } from '../schemaText.js';

test('the SQLite schema snapshot is what the migrations make', () => {
  assert.equal(staleSnapshot(SQLITE_SNAPSHOT, sqliteSchemaText()), undefined);
});
