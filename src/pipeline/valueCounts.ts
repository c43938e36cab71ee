// Rows of one template sent with different numbers of values: a template takes a fixed number,
// so the provider refuses the messages of some of them (160052), found only after sending. Without
// a templates file smsdrop cannot tell which number is right, but it can tell the numbers differ:
// the dry run and `send`'s summary say so (docs/input.md, "Template values").
import type { ReadStore, ValueCount } from '../ports/index.js';

/** One template given different numbers of values: how many rows gave each, most first. */
export interface UnevenValues {
  templateId: string;
  counts: Array<{ values: number; rows: number; firstLine: number }>;
}

export async function unevenValues(
  reads: Pick<ReadStore, 'unevenValueCounts'>,
  fileId: number,
): Promise<UnevenValues[]> {
  const byTemplate = new Map<string, UnevenValues>();
  for (const c of await reads.unevenValueCounts(fileId)) {
    let entry = byTemplate.get(c.templateId);
    if (!entry) byTemplate.set(c.templateId, (entry = { templateId: c.templateId, counts: [] }));
    entry.counts.push(countOf(c));
  }
  return [...byTemplate.values()];
}

function countOf({ values, rows, firstLine }: ValueCount): UnevenValues['counts'][number] {
  return { values, rows, firstLine };
}

/** The summary's lines: one per template. */
export function unevenValuesLines(uneven: readonly UnevenValues[]): string[] {
  return uneven.map((u) => {
    const counts = u.counts
      .map((c) => `${c.values} value(s) in ${c.rows} row(s) (first at line ${c.firstLine})`)
      .join(', ');
    return `uneven values: template ${u.templateId} is given ${counts}: a template takes a fixed number of values, so the provider refuses the messages of some of these rows (160052); fix the rows, or write an empty value as "" (trailing empty cells are dropped)`;
  });
}
