// GET /healthz: 200 while the daemon can do its job (journal writable and answering, room on the
// data directory's volume, inbox watched, sending not paused, webhooks delivered), 503 with the
// reasons (and their codes) otherwise: a supervisor or a load balancer reads the status, a person
// the reasons. The disk is looked at on each request (statfs, and a small file written and
// removed next to the journal), and a PostgreSQL journal is asked a statement, so a volume filled
// up or freed, or a server gone or back, is seen at the next probe.
import { rmSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { errorCode, type ErrorCode } from '../errors.js';
import type { JournalHealth, ReadStore } from '../ports/index.js';

export interface HealthSource {
  journal: Pick<ReadStore, 'health'>;
  dataDir: string;
  /** Free bytes below which the data directory's volume counts as full (SMSDROP_DISK_FLOOR_MB). */
  diskFloorBytes: number;
  /** The inbox watcher is running. */
  watching(): boolean;
  /**
   * Why sending is paused for the account (an account problem, a provider outage), or undefined.
   */
  paused(): string | undefined;
  /** The pause's code (docs/errors.md), when sending is paused. */
  pausedCode?(): string | undefined;
  /** Webhook receivers that have failed for long, with why. */
  webhooksFailing(): string[];
}

export interface Health {
  ok: boolean;
  checks: { journal: string; disk: string; inbox: string; sending: string; webhooks: string };
  reasons: string[];
  /** The stable codes (docs/errors.md) of the failing checks that have one, for a machine. */
  codes: string[];
}

const JOURNAL_HEALTH: Record<JournalHealth, { text: string; code?: ErrorCode }> = {
  writable: { text: 'writable' },
  closed: { text: 'closed' },
  lost: { text: 'failed: it lost requests’ records (see the log)', code: 'E_JOURNAL_LOST' },
  unreachable: {
    text: 'unreachable (E_DATABASE_UNREACHABLE): its PostgreSQL server does not answer; sending waits for it',
    code: 'E_DATABASE_UNREACHABLE',
  },
};

export async function checkHealth(source: HealthSource): Promise<Health> {
  const reasons: string[] = [];
  const codes: string[] = [];
  const journal = JOURNAL_HEALTH[await source.journal.health()];
  if (journal.text !== 'writable') reasons.push(`journal ${journal.text}`);
  if (journal.code) codes.push(journal.code);
  const disk = checkDisk(source.dataDir, source.diskFloorBytes);
  if (!disk.ok) reasons.push(`data directory ${disk.text}`);
  if (/E_DISK_FULL/.test(disk.text)) codes.push('E_DISK_FULL');
  const inbox = source.watching() ? 'watched' : 'not watched';
  if (inbox !== 'watched') reasons.push(`inbox ${inbox}`);
  const paused = source.paused();
  if (paused) reasons.push(`sending paused: ${paused}`);
  const failing = source.webhooksFailing();
  reasons.push(...failing);
  const pausedCode = source.pausedCode?.();
  if (pausedCode) codes.push(pausedCode);
  return {
    ok: reasons.length === 0,
    codes,
    checks: {
      journal: journal.text,
      disk: disk.text,
      inbox,
      sending: paused ? `paused: ${paused}` : 'on',
      webhooks: failing.length > 0 ? failing.join('; ') : 'ok',
    },
    reasons,
  };
}

const MB = 1024 * 1024;
/** What the probe writes: a journal write appends a page of this size to the WAL. */
const PROBE = Buffer.alloc(4096);

/** Room on the data directory's volume, and whether a small file can be written there now. */
function checkDisk(dataDir: string, floorBytes: number): { ok: boolean; text: string } {
  let free: number;
  try {
    const fs = statfsSync(dataDir);
    free = fs.bavail * fs.bsize;
  } catch (err) {
    return { ok: false, text: `not readable (${errorCode(err) ?? String(err)})` };
  }
  const room = `${(free / MB).toFixed(1)} MB free`;
  if (free === 0) return { ok: false, text: `volume full (E_DISK_FULL): ${room}` };
  if (free < floorBytes)
    return {
      ok: false,
      text: `volume nearly full (E_DISK_FULL): ${room}, below SMSDROP_DISK_FLOOR_MB=${floorBytes / MB}`,
    };
  const probe = path.join(dataDir, '.healthz-probe');
  try {
    writeFileSync(probe, PROBE);
  } catch (err) {
    const code = errorCode(err);
    const named = code === 'ENOSPC' || code === 'EDQUOT' ? `E_DISK_FULL, ${code}` : code;
    return { ok: false, text: `not writable (${named ?? String(err)}): ${room}` };
  } finally {
    rmSync(probe, { force: true });
  }
  return { ok: true, text: `writable: ${room}` };
}
