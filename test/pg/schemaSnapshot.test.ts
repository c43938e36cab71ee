// The PostgreSQL journal's schema snapshot (src/pgjournal/schema.snapshot.sql) is what its
// migrations make: a migration that changes the schema without the snapshot regenerated fails here.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { POSTGRES_SNAPSHOT, postgresSchemaText, staleSnapshot } from '../schemaText.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe('the PostgreSQL schema snapshot', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('is what the migrations make', async () => {
    const pool = pg15.cluster.pool(await pg15.cluster.freshDatabase());
    assert.equal(staleSnapshot(POSTGRES_SNAPSHOT, await postgresSchemaText(pool)), undefined);
  });
});
