// ExportReads on the PostgreSQL journal, but the result files' (resultRows.ts): the export's
// recipients, the dry run's message preview, the records of a file's bytes and the suppression
// list (src/journal/exportReads.ts on SQLite). Rows come a page at a time by keyset.
import type { ExportReads } from '../ports/reads.js';
import type { GroupToSend, RecipientRow, SuppressedNumber } from '../ports/records.js';
import type { ResultReads } from '../ports/results.js';
import { sqlList, UNSETTLED_STATES } from '../ports/states.js';
import { all, BYTES, keysetPages, type Queryable, value } from './readsQuery.js';

/** Rows per page of the row iterators (as the SQLite ReadStore's pages). */
const PAGE_ROWS = 500;

/** ExportReads of the PostgreSQL journal on `db`, with the result files' reads given. */
export function pgExportReads(
  db: Queryable,
  results: ResultReads,
  pageRows = PAGE_ROWS,
): ExportReads {
  return {
    ...results,
    recipients: (fileId, statuses) =>
      keysetPages<RecipientRow>(
        db,
        `SELECT row_id, line, phone_raw, app_id, template_id, datas, extras, status, status_code, status_msg
         FROM v_recipients WHERE file_id = $1 AND (cardinality($2::text[]) = 0 OR status = ANY($2::text[]))
           AND row_id > $3 ORDER BY row_id LIMIT $4`,
        [fileId, statuses],
        'row_id',
        pageRows,
      ),
    mostValues: async (fileId) =>
      (await value<number | null>(
        db,
        'SELECT max(json_array_length(datas::json)) FROM groups WHERE file_id = $1',
        [fileId],
      )) ?? 0,
    groupsToSend: (fileId) =>
      keysetPages<GroupToSend>(
        db,
        `SELECT g.id, g.template_id AS "templateId", g.datas, sum(b.numbers) AS numbers
         FROM batches b JOIN groups g ON g.id = b.group_id
         WHERE b.file_id = $1 AND b.state IN ${sqlList(UNSETTLED_STATES)} AND g.id > $2
         GROUP BY g.id ORDER BY g.id LIMIT $3`,
        [fileId],
        'id',
        pageRows,
      ),
    recordsOfBytes: (sha256) =>
      all<{ id: number; pruned: boolean }>(
        db,
        'SELECT id, pruned_at IS NOT NULL AS pruned FROM files WHERE sha256 = $1 ORDER BY id',
        [sha256],
      ),
    suppressedNumbers: () =>
      all<SuppressedNumber>(
        db,
        `SELECT phone, reason, source, added_at AS "addedAt" FROM suppressed
         ORDER BY added_at ${BYTES}, phone ${BYTES}`,
      ),
  };
}
