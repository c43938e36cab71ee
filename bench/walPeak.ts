// `node --import tsx bench/walPeak.ts [ROWS] [PERSONALISED]`: the disk a send needs (issue 32).
// Generates the bench's CSV of ROWS rows (PERSONALISED: the share of rows with values of their
// own, 0 to 0.99), sends it with `smsdrop send` to the simulator (both separate processes, as a
// user runs them), and samples the size of the journal's files every 10 ms meanwhile. Prints the
// peaks of the write-ahead logs (journal and intents file), the journal's size at the end, and
// bytes per row. Quote the numbers of one run on one machine.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateCsv, SIMULATOR_TEMPLATES } from './generate.js';
import { childEnv, runSend, startSimulatorProcess } from './processes.js';

const ROWS = Number(process.argv[2] ?? 20_000);
const PERSONALISED = Number(process.argv[3] ?? 0.99);
const CREDS = {
  accountSid: 'ACwalpeak00000000000000000000001',
  authToken: 'walpeaktoken0000000000000000001',
  appId: 'APPwalpeak0000000000000000000001',
};
const sizeOf = (file: string): number => statSync(file, { throwIfNoEntry: false })?.size ?? 0;

const workDir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-wal-peak-'));
try {
  const csv = path.join(workDir, 'list.csv');
  const mix = await generateCsv(csv, ROWS, 1, PERSONALISED);
  const dataDir = path.join(workDir, 'data');
  const files = {
    journal: path.join(dataDir, 'journal.sqlite'),
    wal: path.join(dataDir, 'journal.sqlite-wal'),
    intents: path.join(dataDir, 'journal.intents.sqlite'),
    intentsWal: path.join(dataDir, 'journal.intents.sqlite-wal'),
  };
  const peak = { wal: 0, intentsWal: 0, total: 0 };
  const sample = () => {
    const wal = sizeOf(files.wal);
    const intentsWal = sizeOf(files.intentsWal);
    peak.wal = Math.max(peak.wal, wal);
    peak.intentsWal = Math.max(peak.intentsWal, intentsWal);
    peak.total = Math.max(
      peak.total,
      sizeOf(files.journal) + wal + sizeOf(files.intents) + intentsWal,
    );
  };
  const sim = await startSimulatorProcess(
    'src',
    childEnv(workDir, CREDS, {}),
    0,
    SIMULATOR_TEMPLATES,
  );
  const timer = setInterval(sample, 10);
  try {
    const run = await runSend(
      'src',
      csv,
      childEnv(workDir, CREDS, { SMSDROP_BASE_URL: sim.url, SMSDROP_DATA_DIR: dataDir }),
    );
    sample();
    const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
    const end = sizeOf(files.journal);
    console.log(
      JSON.stringify({
        rows: ROWS,
        csvBytes: mix.bytes,
        personalised: PERSONALISED,
        exitCode: run.exitCode,
        seconds: Math.round(run.seconds * 10) / 10,
        walPeak: mb(peak.wal),
        intentsWalPeak: mb(peak.intentsWal),
        filesPeak: mb(peak.total),
        journalAtEnd: mb(end),
        walAtEnd: mb(sizeOf(files.wal)),
        journalBytesPerRow: Math.round(end / ROWS),
        peakBytesPerRow: Math.round(peak.total / ROWS),
      }),
    );
  } finally {
    clearInterval(timer);
    await sim.stop();
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
