// ResultReads on the PostgreSQL journal: the lines of NAME.result.csv and the rows of
// NAME.rejected.csv (src/journal/resultRows.ts on SQLite). A page is a keyset page of the file's
// rows (row_results, by id): nothing is held between pages but the last id and, while the next
// page waits for outcomes, the batches it waits for.
import type { ResultCursor, ResultFormat, ResultReads, ResultTuple } from '../ports/results.js';
import type { RejectedHeader, RejectedRow } from '../ports/results.js';
import { sqlList, UNSETTLED_STATES } from '../ports/states.js';
import { first, keysetPages, type Queryable } from './readsQuery.js';

/** Rows per page: a page of text of ~100 KB (resultRows.ts says why not more). */
const PAGE_ROWS = 1000;

/** A row as a page is written from: its result cells, its batch, and how intake took it. */
type PageRow = [id: number, batchId: number | null, intake: string, ...ResultTuple];

/** A page of a file's result rows by id: the file, the last id, the highest id, the page's size. */
export const RESULT_PAGE = `
  SELECT id, batch_id, intake, line::text, phone_raw, coalesce(phone, ''), status,
    coalesce(status_code, ''), coalesce(status_msg, ''), coalesce(sms_message_sid, ''),
    coalesce(date_created, '')
  FROM row_results WHERE file_id = $1 AND id > $2 AND id <= $3 ORDER BY id LIMIT $4`;

/** Digits Excel keeps as they are: no leading 0 (but "0" itself), fewer than 12 (resultRows.ts). */
const keptByExcel = (cell: string) =>
  /^\d+$/.test(cell) && cell.length < 12 && !(cell.length > 1 && cell.startsWith('0'));

/**
 * The page's lines. A valid row with plain phone cells is its cells and its batch's tail (made once
 * per batch of the page), as the SQLite journal writes it; every other row is format.oddRow's.
 */
function pageText(rows: PageRow[], format: ResultFormat): string {
  if (rows.length === 0) return '';
  const tails = new Map<number, string>();
  const lines = rows.map(([, batchId, intake, ...cells]) => {
    const [line, raw, phone, ...status] = cells;
    const plain = keptByExcel(phone) && (raw === phone || keptByExcel(raw));
    if (intake !== 'valid' || batchId === null || !plain) return format.oddRow(cells);
    let tail = tails.get(batchId);
    if (tail === undefined) tails.set(batchId, (tail = format.tail(status)));
    return `${line},${raw},${phone},${tail}`;
  });
  return `${lines.join('\r\n')}\r\n`;
}

function resultPages(
  db: Queryable,
  fileId: number,
  format: ResultFormat,
  pageRows: number,
): ResultCursor {
  let after = 0;
  /** The file's last row id when first asked: its rows are all in before sending starts. */
  let last: number | undefined;
  /** Batches of the next page still without an outcome at the last look. */
  let waitingFor: number[] = [];
  const nextPage = async (): Promise<PageRow[]> => {
    last ??=
      (await first<{ hi: number | null }>(db, 'SELECT max(id) AS hi FROM rows WHERE file_id = $1', [
        fileId,
      ]))!.hi ?? 0;
    const { rows } = await db.query({
      text: RESULT_PAGE,
      values: [fileId, after, last, pageRows],
      rowMode: 'array',
    });
    return rows as PageRow[];
  };
  const take = (rows: PageRow[]): string => {
    after = rows[rows.length - 1]![0];
    return pageText(rows, format);
  };
  const stillWaiting = async (): Promise<boolean> =>
    waitingFor.length > 0 && (waitingFor = await fromFirstUnsettled(db, waitingFor)).length > 0;
  return {
    async finalPages(deadline) {
      const pages: string[] = [];
      if (await stillWaiting()) return pages;
      for (;;) {
        const rows = await nextPage();
        if (rows.length === 0) return pages;
        const pending = rows.filter((r) => r[6] === 'pending');
        if (pending.length > 0) {
          const ids = new Set(pending.map((r) => r[1]).filter((id) => id !== null));
          waitingFor = [...ids].sort((a, b) => a - b);
          return pages;
        }
        pages.push(take(rows));
        if (performance.now() >= deadline) return pages;
      }
    },
    async *restPages() {
      for (let rows = await nextPage(); rows.length > 0; rows = await nextPage())
        yield [take(rows)];
    },
    close() {
      // Nothing is kept for the cursor in the database.
    },
  };
}

/**
 * These batches (ids ascending) from the first one still planned or being sent on; none when none
 * is. Asked every few ms while answers come in, for a page that may wait for hundreds of batches
 * (personalised rows): the statement stops at the first such batch by id, and the list it is
 * given shrinks as they settle. The page itself is read again once none is left.
 */
async function fromFirstUnsettled(db: Queryable, batchIds: number[]): Promise<number[]> {
  const row = await first<{ id: number | null }>(
    db,
    `SELECT min(id) AS id FROM batches WHERE id = ANY($1::bigint[]) AND state IN ${sqlList(UNSETTLED_STATES)}`,
    [batchIds],
  );
  const from = row?.id;
  return from == null ? [] : batchIds.slice(batchIds.indexOf(from));
}

/** ResultReads of the PostgreSQL journal on `db`. */
export function pgResultReads(db: Queryable, pageRows = PAGE_ROWS): ResultReads {
  return {
    resultPages: (fileId, format) => resultPages(db, fileId, format, pageRows),
    // As the SQLite journal's stamp, to the character: a batch added or changed changes it.
    resultsStamp: async (fileId) => {
      const { rows } = await db.query({
        text: `SELECT count(*), max(id), max(updated_at), coalesce(sum(ascii(state) * id), 0)::float8
               FROM batches WHERE file_id = $1`,
        values: [fileId],
        rowMode: 'array',
      });
      return JSON.stringify(rows[0]);
    },
    rejectedRows: (fileId) =>
      keysetPages<RejectedRow>(
        db,
        `SELECT r.id, r.line, r.error, r.phone_raw, g.app_id, g.template_id, g.datas, r.extras, c.cells
         FROM rows r LEFT JOIN groups g ON g.id = r.group_id LEFT JOIN invalid_cells c ON c.row_id = r.id
         WHERE r.file_id = $1 AND r.intake = 'invalid' AND r.id > $2 ORDER BY r.id LIMIT $3`,
        [fileId],
        'id',
        pageRows,
      ),
    rejectedHeader: async (fileId): Promise<RejectedHeader | undefined> => {
      const file = await first<{ invalid: number; header: string | null }>(
        db,
        'SELECT invalid, header FROM files WHERE id = $1',
        [fileId],
      );
      if (!file) return undefined;
      const parsed = file.header
        ? (JSON.parse(file.header) as { columns?: string[]; extras?: string[] })
        : {};
      return { invalid: file.invalid, columns: parsed.columns, extras: parsed.extras ?? [] };
    },
  };
}
