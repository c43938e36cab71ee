// Writes each journal's schema snapshot (test/schemaText.ts says what they hold): the SQLite
// journal's from a fresh file in a temporary folder, the PostgreSQL journal's from a fresh
// database of a throwaway cluster (test/pg/cluster.ts), stopped and removed after. Run it after
// changing a migration: `npm run schema:snapshot`, then commit the snapshots with the migration.
import { startPostgres } from '../test/pg/cluster.js';
import {
  POSTGRES_SNAPSHOT,
  SQLITE_SNAPSHOT,
  postgresSchemaText,
  sqliteSchemaText,
  writeSnapshot,
} from '../test/schemaText.js';

writeSnapshot(SQLITE_SNAPSHOT, sqliteSchemaText());
console.log(`wrote ${SQLITE_SNAPSHOT}`);

const cluster = await startPostgres();
try {
  const pool = cluster.pool(await cluster.freshDatabase());
  writeSnapshot(POSTGRES_SNAPSHOT, await postgresSchemaText(pool));
  console.log(`wrote ${POSTGRES_SNAPSHOT}`);
} finally {
  await cluster.stop();
}
