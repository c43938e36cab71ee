// NAME.rejected.csv: the rows that were invalid, with the reason, in columns the intake accepts,
// so they can be fixed (in Excel: digits it would change are written as ="digits") and dropped
// back. It may be written while requests are out (`send` writes it once the file is read, the
// daemon while other files go): the event loop turns after each page, ~20 ms of work, so that
// their answers are read meanwhile.
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createCsvWriter } from '../csvio/index.js';
import type { RejectedHeader, RejectedRow, ResultReads } from '../ports/results.js';
import { beyondHeaderName, type ColumnMap, mapHeader } from '../intake/headers.js';
import { extrasByName } from '../journalRules/extras.js';

/** A rejected row's cells, in the rejected file's columns (without line and reason). */
export interface RejectedCells {
  phone: string;
  appId: string;
  templateId: string;
  datas: string[];
  extras: Record<string, string>;
  /** Cells past the header of the file it came from. */
  beyond: string[];
}

/** Writes NAME.rejected.csv when the file had invalid rows; returns its path, or undefined. */
export async function writeRejectedCsv(
  reads: ResultReads,
  fileId: number,
  outDir: string,
  baseName: string,
): Promise<string | undefined> {
  const recorded = await reads.rejectedHeader(fileId);
  if (!recorded || recorded.invalid === 0) return undefined;
  const cellsOf = rejectedCells(recorded);
  let maxData = 0;
  let maxBeyond = 0;
  for await (const page of reads.rejectedRows(fileId)) {
    for (const r of page) {
      const cells = cellsOf(r);
      maxData = Math.max(maxData, cells.datas.length);
      maxBeyond = Math.max(maxBeyond, cells.beyond.length);
    }
    await nextTurn();
  }
  const extraNames = extraColumnNames(recorded);
  const header = [
    'line',
    'reason',
    'phone',
    'appId',
    'templateId',
    ...Array.from({ length: maxData }, (_, i) => `data${i + 1}`),
    ...extraNames,
    ...Array.from({ length: maxBeyond }, (_, i) => beyondHeaderName(i + 1)),
  ];
  const file = path.join(outDir, `${baseName}.rejected.csv`);
  const writer = createCsvWriter(file, header, { digitsAsText: true });
  try {
    for await (const page of reads.rejectedRows(fileId)) {
      for (const r of page) {
        const cells = cellsOf(r);
        writer.write([
          String(r.line),
          r.error,
          cells.phone,
          cells.appId,
          cells.templateId,
          ...Array.from({ length: maxData }, (_, i) => cells.datas[i] ?? ''),
          ...extraNames.map((n) => cells.extras[n] ?? ''),
          ...Array.from({ length: maxBeyond }, (_, i) => cells.beyond[i] ?? ''),
        ]);
      }
      await nextTurn();
    }
  } finally {
    await writer.close();
  }
  return file;
}

/**
 * A rejected row's cells. From the journal's columns; or, when intake kept the row's cells, from
 * those, placed by the file's header: a row without a template id has no group to hold its
 * values, and the cells past the header have no column at all.
 */
export function rejectedCells(recorded: RejectedHeader): (r: RejectedRow) => RejectedCells {
  let map: ColumnMap | undefined;
  try {
    map = recorded.columns ? mapHeader(recorded.columns) : undefined;
  } catch {
    // a header refused now (never: it was accepted when read): the columns as recorded
    map = undefined;
  }
  const extraNames = recorded.extras;
  return (r) => {
    if (!r.cells || !map) return cellsFromColumns(r, extraNames);
    const cells = JSON.parse(r.cells) as string[];
    const at = (column: number | undefined, fallback: string): string =>
      column === undefined ? fallback : (cells[column] ?? '');
    const datas = map.datas.map((column) => cells[column] ?? '');
    while (datas.length > 0 && datas[datas.length - 1] === '') datas.pop();
    // A rejected file dropped back has such columns already: they stay first.
    const beyond = [
      ...map.beyond.map((column) => cells[column] ?? ''),
      ...cells.slice(map.header.length),
    ];
    while (beyond.length > 0 && beyond[beyond.length - 1]!.trim() === '') beyond.pop();
    return {
      phone: at(map.phone, r.phone_raw),
      // An id the row did not have came from the default (SMSDROP_APP_ID…): left empty, it is the
      // default again.
      appId: at(map.appId, r.app_id ?? ''),
      templateId: at(map.templateId, r.template_id ?? ''),
      datas,
      extras: Object.fromEntries(
        map.extras.map((column, i) => [
          extraNames[i] ?? `column ${column + 1}`,
          cells[column] ?? '',
        ]),
      ),
      beyond,
    };
  };
}

/** A rejected row's cells from the journal's columns. */
function cellsFromColumns(r: RejectedRow, extraNames: readonly string[]): RejectedCells {
  return {
    phone: r.phone_raw,
    appId: r.app_id ?? '',
    templateId: r.template_id ?? '',
    datas: r.datas ? (JSON.parse(r.datas) as string[]) : [],
    extras: extrasByName(r.extras, extraNames),
    beyond: [],
  };
}

/** Names of the columns the file had besides phone, app, template and values. */
export function extraColumnNames(recorded: RejectedHeader): string[] {
  return recorded.extras;
}
