// FileReads on the PostgreSQL journal: a file's record, its line of v_files and what its report
// says, as src/journal/{fileReads,reportReads}.ts answer them on SQLite (the same statements, in
// PostgreSQL's words: `json_array_length(datas::json)`, bigint sums cast back from numeric, text
// sorted by bytes). The repeat window's look-up (sentBefore) is in sentBefore.ts.
import type { FileReads } from '../ports/reads.js';
import type { FailureCount, FileLine, FileRecord, ValueCount } from '../ports/records.js';
import { all, BYTES, first, type Queryable, value } from './readsQuery.js';
import { sentBeforeOf } from './sentBefore.js';
import type { CheckTurnPasses } from './intakeTurn.js';

type Timing = { requests: number; first_send: string | null; last_send: string | null };

/** A file's report: the SQLite journal's statements (reportReads.ts) in PostgreSQL's words. */
function reportReads(db: Queryable) {
  return {
    failureCounts: (fileId: number) =>
      all<FailureCount>(
        db,
        `SELECT status, status_code, count, sample_message FROM v_failures WHERE file_id = $1
         ORDER BY count DESC, status ${BYTES}, status_code ${BYTES}`,
        [fileId],
      ),
    invalidReasons: (fileId: number, limit = 10) =>
      all<{ reason: string; count: number }>(
        db,
        `SELECT error AS reason, count(*) AS count FROM rows WHERE file_id = $1 AND intake = 'invalid'
         GROUP BY error ORDER BY count DESC, error ${BYTES} LIMIT $2`,
        [fileId, limit],
      ),
    invalidRows: (fileId: number, limit: number) =>
      all<{ line: number; reason: string }>(
        db,
        "SELECT line, error AS reason FROM rows WHERE file_id = $1 AND intake = 'invalid' ORDER BY line LIMIT $2",
        [fileId, limit],
      ),
    requestTiming: async (fileId: number): Promise<Timing> =>
      // A pruned file's attempts are gone: their count and times were kept on its row.
      (await first<Timing>(
        db,
        'SELECT kept_requests AS requests, kept_first_send AS first_send, kept_last_send AS last_send FROM files WHERE id = $1 AND pruned_at IS NOT NULL',
        [fileId],
      )) ??
      (await first<Timing>(
        db,
        `SELECT count(*) AS requests, min(a.started_at) AS first_send, max(a.finished_at) AS last_send
         FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = $1`,
        [fileId],
      ))!,
    unevenValueCounts: (fileId: number) => unevenValueCounts(db, fileId),
  };
}

/** As reportReads.ts's unevenValueCounts: templates given more than one number of values. */
async function unevenValueCounts(db: Queryable, fileId: number): Promise<ValueCount[]> {
  const templates = await all<{ template_id: string }>(
    db,
    `SELECT template_id FROM groups WHERE file_id = $1 GROUP BY template_id
     HAVING count(DISTINCT json_array_length(datas::json)) > 1 ORDER BY template_id ${BYTES}`,
    [fileId],
  );
  const counts: ValueCount[] = [];
  for (const { template_id } of templates)
    counts.push(
      ...(await all<ValueCount>(
        db,
        `SELECT g.template_id AS "templateId", json_array_length(g.datas::json) AS "values",
           count(*) AS rows, min(r.line) AS "firstLine"
         FROM groups g JOIN rows r ON r.group_id = g.id AND r.intake = 'valid' AND r.file_id = $1
         WHERE g.file_id = $1 AND g.template_id = $2
         GROUP BY g.template_id, json_array_length(g.datas::json) ORDER BY rows DESC, "values"`,
        [fileId, template_id],
      )),
    );
  return counts;
}

/** FileReads of the PostgreSQL journal on `db`. */
export function pgFileReads(db: Queryable, passes: CheckTurnPasses = { count: 0 }): FileReads {
  return {
    ...reportReads(db),
    file: (id) => first<FileRecord>(db, 'SELECT * FROM files WHERE id = $1', [id]),
    filesNamed: (name) =>
      all<FileRecord>(db, 'SELECT * FROM files WHERE name = $1 ORDER BY id', [name]),
    filesByShaPrefix: (prefix) =>
      all<FileRecord>(db, 'SELECT * FROM files WHERE substr(sha256, 1, $1) = $2 ORDER BY id', [
        prefix.length,
        prefix.toLowerCase(),
      ]),
    listFiles: () => all<FileLine>(db, 'SELECT * FROM v_files ORDER BY id'),
    prunedFileIds: async () =>
      new Set(
        (await all<{ id: number }>(db, 'SELECT id FROM files WHERE pruned_at IS NOT NULL')).map(
          (r) => r.id,
        ),
      ),
    fileLine: async (fileId) =>
      (await first<FileLine>(db, 'SELECT * FROM v_files WHERE id = $1', [fileId]))!,
    repeatsOf: async (fileId) =>
      (await value<number>(db, 'SELECT repeats FROM files WHERE id = $1', [fileId]))!,
    sentBefore: (fileId, window) => sentBeforeOf(db, fileId, window, passes),
  };
}
