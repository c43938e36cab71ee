// Who may read what smsdrop writes: nearly every file it makes holds phone numbers and message
// texts (the journal and its WAL, the intents file, result, rejected and error files, the spool,
// the logs, backups and exports). One mechanism covers them all, whoever creates the file (Node,
// SQLite, winston's rotation): the process's umask, set before anything is opened, so that new
// files and folders grant nothing to other users, and their group only reads, when
// SMSDROP_SHARE_WITH_GROUP says so. SQLite gives a journal's -wal and -shm files the journal's own
// mode, so a journal made here keeps them closed too. What an older version (or a person) left
// open is not changed behind the operator's back: it is reported, with the command that fixes it.
import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { SmsdropError } from '../errors.js';

export interface AccessSettings {
  dataDir: string;
  /** The owner's group may read (not write) what smsdrop writes. */
  shareWithGroup: boolean;
  /** A data directory or journal others may reach refuses to start instead of a warning. */
  strictPermissions: boolean;
}

/** What a new file or folder never grants: anything to others; to the group, anything or write. */
export function umaskFor(shareWithGroup: boolean): number {
  return shareWithGroup ? 0o027 : 0o077;
}

/**
 * Sets the process's umask for what this command writes, then reports (through `warn`) or refuses
 * (E_DATA_DIR_OPEN) a data directory or journal that grants anything to others.
 */
export function guardDataDir(settings: AccessSettings, warn: (message: string) => void): void {
  process.umask(umaskFor(settings.shareWithGroup));
  const open = openToOthers(settings.dataDir);
  if (open.length === 0) return;
  const root = path.resolve(settings.dataDir);
  const fix = `chmod -R ${settings.shareWithGroup ? 'o' : 'go'}-rwx ${shellQuoted(root)}`;
  const shown = open.map((p) => (p === root ? `${p}/` : path.relative(root, p))).join(', ');
  const message = `other users of this machine may read the phone numbers and messages in ${shown}: run \`${fix}\` (then give a drop group its inbox/ again: docs/operations.md#who-can-read-what)`;
  if (settings.strictPermissions)
    throw new SmsdropError('E_DATA_DIR_OPEN', `${message}; SMSDROP_STRICT_PERMISSIONS is on`);
  warn(`E_DATA_DIR_OPEN: ${message}`);
}

/**
 * The data directory itself and its journal files (journal.sqlite, the intents file and their -wal
 * and -shm), where any of them grants anything to others. A folder others may only enter (o+x)
 * counts: the journal's name is known. No folder there (yet), or one that cannot be listed: none.
 */
export function openToOthers(dataDir: string): string[] {
  const root = path.resolve(dataDir);
  let names: string[];
  try {
    names = readdirSync(root)
      .filter((name) => name.startsWith('journal.'))
      .sort();
  } catch {
    // Not made yet, or not a folder: the command says what is wrong with it, if anything.
    return [];
  }
  const candidates = [root, ...names.map((name) => path.join(root, name))];
  return candidates.filter((p) => ((modeOf(p) ?? 0) & 0o007) !== 0);
}

/**
 * A file someone dropped in inbox/, once smsdrop took it: its mode loses what the umask would not
 * have given it. Not smsdrop's own (another account dropped it): left as it is, the folders around
 * it (processing/, done/, failed/) keep others out.
 */
export function tightenTaken(file: string, shareWithGroup: boolean): void {
  const mode = modeOf(file);
  if (mode === undefined) return;
  const kept = mode & ~umaskFor(shareWithGroup);
  if (kept === mode) return;
  try {
    chmodSync(file, kept);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'EACCES' && code !== 'ENOENT') throw err;
  }
}

function modeOf(file: string): number | undefined {
  try {
    return lstatSync(file).mode & 0o7777;
  } catch {
    return undefined;
  }
}

function shellQuoted(p: string): string {
  return /^[\w./+-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`;
}
