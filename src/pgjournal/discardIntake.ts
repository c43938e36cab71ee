// What an intake that never sent a request leaves behind, taken away so the file is read again.
import type pg from 'pg';

/** A file's counts back to nothing, before it is read again. */
export const ZEROED =
  'UPDATE files SET rows = 0, invalid = 0, duplicates = 0, repeats = 0 WHERE id = $1';

/** As SQLite's discardIntake: the file's rows, batches and attempts go; its groups stay. */
export async function discardIntake(db: pg.ClientBase, fileId: number): Promise<void> {
  const ofFile = 'SELECT id FROM batches WHERE file_id = $1';
  await db.query(`DELETE FROM attempts WHERE batch_id IN (${ofFile})`, [fileId]);
  await db.query(`DELETE FROM batch_numbers WHERE batch_id IN (${ofFile})`, [fileId]);
  await db.query('DELETE FROM batches WHERE file_id = $1', [fileId]);
  await db.query('DELETE FROM rows WHERE file_id = $1', [fileId]);
  await db.query('DELETE FROM invalid_cells WHERE file_id = $1', [fileId]);
  await db.query(ZEROED, [fileId]);
}
