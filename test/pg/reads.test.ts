// The PostgreSQL ReadStore (src/pgjournal/readStore.ts) against the SQLite one, on the same
// journal: a real journal made by `smsdrop send` against the simulator with faults
// (sentJournal.ts), copied into PostgreSQL by copy.ts; then every read verb answers the same on
// both. The SQLite journal is opened through src/journals/, as `smsdrop report` opens it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import type { JournalReader, ReadStore } from '../../src/ports/index.js';
import { openReader, openTableDump } from '../../src/journals/index.js';
import { copyJournal } from '../../src/pgjournal/copy.js';
import { pgReadStore } from '../../src/pgjournal/readStore.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import type { Pages } from '../../src/ports/awaitable.js';
import type { SentBefore, SentBeforeLookup } from '../../src/ports/records.js';
import { RESULT_FORMAT } from '../../src/results/format.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { type SentJournal, sentJournal } from './sentJournal.js';

const EPOCH = '1970-01-01T00:00:00.000Z';
const DAY = { ms: 86_400_000, text: '24h' };

async function collect<T>(pages: Pages<T>): Promise<T[]> {
  const rows: T[] = [];
  for await (const page of pages) rows.push(...page);
  return rows;
}

/** Every answer of the per-file verbs, by verb name. */
async function fileAnswers(store: ReadStore, fileId: number) {
  const file = (await store.file(fileId))!;
  const cursor = store.resultPages(fileId, RESULT_FORMAT);
  const finalText = (await cursor.finalPages(performance.now() + 60_000)).join('');
  const restText = (await collect(cursor.restPages())).join('');
  cursor.close();
  return {
    file,
    fileLine: await store.fileLine(fileId),
    repeatsOf: await store.repeatsOf(fileId),
    failureCounts: await store.failureCounts(fileId),
    invalidReasons: await store.invalidReasons(fileId),
    invalidReasons1: await store.invalidReasons(fileId, 1),
    invalidRows: await store.invalidRows(fileId, 100),
    requestTiming: await store.requestTiming(fileId),
    unevenValueCounts: await store.unevenValueCounts(fileId),
    numbersSettledSince: await store.numbersSettledSince(fileId, EPOCH),
    inFlight: await store.inFlight(fileId),
    mostValues: await store.mostValues(fileId),
    recipients: await collect(store.recipients(fileId, [])),
    recipientsSome: await collect(store.recipients(fileId, ['accepted', 'invalid'])),
    groupsToSend: await collect(store.groupsToSend(fileId)),
    recordsOfBytes: await store.recordsOfBytes(file.sha256),
    filesByShaPrefix: await store.filesByShaPrefix(file.sha256.slice(0, 7).toUpperCase()),
    filesNamed: await store.filesNamed(file.name),
    resultsStamp: await store.resultsStamp(fileId),
    resultText: finalText + restText,
    rejectedHeader: await store.rejectedHeader(fileId),
    rejectedRows: await collect(store.rejectedRows(fileId)),
    numbersToSendOf: await store.numbersToSend([file.sha256]),
  };
}

/** Every answer of the verbs about the whole journal. */
async function journalAnswers(store: ReadStore) {
  return {
    listFiles: await store.listFiles(),
    prunedFileIds: [...(await store.prunedFileIds())],
    unfinishedFileLines: await store.unfinishedFileLines(),
    requestsFinishedSince: await store.requestsFinishedSince(EPOCH),
    answersWithCodesSince: await store.answersWithCodesSince(['000000', '160000', '160034'], EPOCH),
    noCodes: await store.answersWithCodesSince([], EPOCH),
    lastAnswer: await store.lastAnswer(),
    oldestHeldFile: await store.oldestHeldFile(),
    prunedFileCount: await store.prunedFileCount(),
    daemonState: await store.daemonState(),
    filesByStatus: await store.filesByStatus(),
    rowsByStatus: await store.rowsByStatus(),
    numbersByOutcome: await store.numbersByOutcome(),
    requestsByOutcome: await store.requestsByOutcome(),
    sendRateByMinute: await store.sendRateByMinute(EPOCH),
    numbersToSend: await store.numbersToSend(),
    numbersToSendNone: await store.numbersToSend([]),
    suppressedNumbers: await store.suppressedNumbers(),
    missingFile: await store.file(999_999),
    missingHeader: await store.rejectedHeader(999_999),
  };
}

describe('the PostgreSQL ReadStore answers as the SQLite one', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  let made: SentJournal;
  let sqlite: JournalReader;
  let pool: pg.Pool;
  let store: ReadStore;

  before(async () => {
    made = await sentJournal();
    pool = openPool(await pg15.cluster.freshDatabase(), 4);
    pool.on('error', () => undefined);
    await migratePostgres(pool);
    const dump = openTableDump(made.dataDir)!;
    try {
      await copyJournal(dump, pool, { pageRows: 7 }); // pages of 7 rows: many pages per table
    } finally {
      dump.close();
    }
    sqlite = (await openReader({ dataDir: made.dataDir }))!;
    store = pgReadStore(pool, { pageRows: 7 }); // many pages of each file's rows
  });
  after(async () => {
    sqlite?.close();
    await pool?.end();
    await made?.simulator.stop();
  });

  test('the journal has what the parity is about', async () => {
    const rows = await sqlite.rowsByStatus();
    for (const status of ['accepted', 'failed', 'invalid', 'duplicate'] as const)
      assert.ok(rows[status] > 0, `rows ${status}: ${JSON.stringify(rows)}`);
    assert.equal((await sqlite.listFiles()).length, 3);
    assert.equal((await sqlite.daemonState())?.pid === undefined, false);
    assert.ok(
      (await sqlite.suppressedNumbers()).length >= 2,
      'a number suppressed by hand and one by the provider',
    );
  });

  test('the verbs about the whole journal', async () => {
    assert.deepEqual(await journalAnswers(store), await journalAnswers(sqlite));
  });

  test("each file's report, exports, result and rejected pages", async () => {
    for (const { id } of await sqlite.listFiles()) {
      const want = await fileAnswers(sqlite, id);
      assert.equal(want.resultText.split('\r\n').length - 1, want.fileLine.rows, 'a line a row');
      assert.deepEqual(await fileAnswers(store, id), want, `file ${id}`);
    }
  });

  test('the repeat window look-up finds the same rows', async () => {
    const groups = (
      await pool.query<{ key_hash: number; app_id: string; template_id: string; datas: string }>(
        'SELECT key_hash, app_id, template_id, datas FROM groups ORDER BY id',
      )
    ).rows;
    const phones = (
      await pool.query<{ phone: string }>('SELECT DISTINCT phone FROM rows WHERE phone IS NOT NULL')
    ).rows.map((r) => r.phone);
    const [mine, theirs]: Array<SentBeforeLookup | undefined> = [
      await store.sentBefore(999_999, DAY),
      await sqlite.sentBefore(999_999, DAY),
    ];
    assert.ok(mine && theirs);
    assert.throws(() => mine(groups[0]!.key_hash, 'a', 't', '[]'), /not prepared/);
    await mine.prepare?.(
      groups.map((g) => ({
        keyHash: g.key_hash,
        appId: g.app_id,
        templateId: g.template_id,
        datasJson: g.datas,
      })),
    );
    let found = 0;
    for (const g of groups) {
      const a: SentBefore | undefined = mine(g.key_hash, g.app_id, g.template_id, g.datas);
      const b: SentBefore | undefined = theirs(g.key_hash, g.app_id, g.template_id, g.datas);
      assert.equal(a === undefined, b === undefined);
      if (a) await mine.prepareNumbers?.(phones.map((p) => [a, p] as const));
      for (const phone of phones) {
        assert.equal(a?.rowOf(phone), b?.rowOf(phone), phone);
        if (a?.rowOf(phone) !== undefined) found++;
      }
    }
    assert.ok(found > 10, `numbers found: ${found}`);
    assert.equal(await store.sentBefore(1, { ms: 0, text: 'off' }), undefined);
  });

  test('health and size', async () => {
    assert.equal(await store.health(), 'writable');
    assert.ok((await store.size()).bytes > 0);
  });
});
