// `smsdrop report`'s file list fits a 100-column terminal, whatever the names and counts, and
// shows times in the configured zone; the rest of a file is in `report FILE`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columns, fileListTable, LIST_WIDTH } from '../../src/report/render.js';
import type { FileLine } from '../../src/report/summary.js';

function line(id: number, name: string, rows: number, started: string | null): FileLine {
  return {
    id,
    name,
    sha256: 'ab'.repeat(32),
    status: 'sending',
    rows,
    invalid: 7,
    duplicates: 3,
    accepted: rows - 20,
    failed: 4,
    unknown: 2,
    pending: 4,
    requests: 5,
    started_at: started,
    finished_at: null,
  } as FileLine;
}

describe('report: the file list', () => {
  it('fits 100 columns: long names are cut in the middle, counts stay whole', () => {
    const files = [
      line(1, 'short.csv', 20, '2026-11-25T16:05:00.000Z'),
      line(
        12345,
        `客户名单-${'很长的名字'.repeat(6)}-2026-11-25-final-v2.csv`,
        4_000_000,
        '2026-11-25T01:00:00.000Z',
      ),
      line(3, 'x'.repeat(200), 1_000_000, null),
    ];
    const out = fileListTable(files, 'Asia/Shanghai');
    for (const l of out.split('\n'))
      assert.ok(columns(l) <= LIST_WIDTH, `${columns(l)} columns: ${l}`);
    assert.equal(columns('客户a'), 5, 'a Chinese character takes two columns');
    assert.equal(LIST_WIDTH, 100);
    assert.match(
      out,
      /^ +id {2}name +status +rows +accepted +failed +unknown +invalid +pending +started\n/,
    );
    assert.match(
      out,
      /\n {4}1 {2}short\.csv +sending +20 +0 +4 +2 +7 +4 {2}2026-11-26 00:05\n/,
      'times in the zone asked for',
    );
    assert.match(
      out,
      /\n12345 {2}客户名…2\.csv {2}sending +4000000 +3999980 /,
      'a long name keeps its start and its end, in 12 columns at least',
    );
    assert.match(out, /\n {4}3 {2}x{6}…x{5} {2}sending +1000000 .* -\n/);
    assert.match(out, /started: in Asia\/Shanghai\. .*smsdrop report ID/);
    assert.doesNotMatch(out, /abab/, 'the sha256 is in report FILE');
  });

  it('without a zone, times are in the host zone, named', () => {
    const out = fileListTable([line(1, 'a.csv', 20, '2026-11-25T16:05:00.000Z')]);
    assert.match(
      out,
      new RegExp(
        `started: in ${Intl.DateTimeFormat().resolvedOptions().timeZone.replace('/', '\\/')}\\.`,
      ),
    );
  });
});
