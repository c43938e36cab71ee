// The daemon's folders under the data directory, and moving files between them without ever
// overwriting anything: the same name dropped twice keeps both ("a.csv", then "a (2).csv"), and a
// name is only used when neither it nor any of its companion files (NAME.result.csv...) exists in
// processing/, done/ or failed/, so a file and its results always share one name.
import {
  existsSync,
  linkSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { checkDataFolder, checkLogDir } from '../datadir/dataDir.js';
import { isIgnoredName } from '../datadir/inbox.js';
import { COMPANIONS, stemOf } from '../datadir/names.js';
import { logDirOf } from '../log/logger.js';

export interface Folders {
  root: string;
  inbox: string;
  processing: string;
  done: string;
  failed: string;
  logs: string;
}

/** Creates whatever is missing; returns absolute paths. */
export function prepareFolders(dataDir: string): Folders {
  const root = path.resolve(dataDir);
  const folders: Folders = {
    root,
    inbox: path.join(root, 'inbox'),
    processing: path.join(root, 'processing'),
    done: path.join(root, 'done'),
    failed: path.join(root, 'failed'),
    logs: path.resolve(logDirOf(root)),
  };
  // Checked, not only made: a file in a folder's place, or one smsdrop may not write, is one line
  // with its code.
  for (const dir of [root, folders.inbox, folders.processing, folders.done, folders.failed])
    checkDataFolder(dir);
  checkLogDir(folders.logs);
  return folders;
}

function namesOf(name: string): string[] {
  const stem = stemOf(name);
  return [name, ...COMPANIONS.map((suffix) => stem + suffix)];
}

/** "a.csv", 2 -> "a (2).csv"; "notes", 3 -> "notes (3)". */
function numbered(name: string, n: number): string {
  const ext = path.extname(name);
  const stem = ext ? name.slice(0, -ext.length) : name;
  return `${stem} (${n})${ext}`;
}

/** The first of name, "name (2)", "name (3)"... free in every folder given. */
export function freeName(name: string, dirs: string[]): string {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? name : numbered(name, n);
    if (!namesOf(candidate).some((c) => dirs.some((dir) => existsSync(path.join(dir, c)))))
      return candidate;
  }
}

/**
 * Moves `from` to `to` unless `to` exists (then throws EEXIST). link + unlink is an atomic "rename
 * unless the target exists" on one file system; where hard links are not supported it falls back
 * to a rename after an existence check.
 */
export function moveExact(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV')
      throw err;
    if (existsSync(to)) throw Object.assign(new Error(`${to} exists`), { code: 'EEXIST' });
    renameSync(from, to);
    return;
  }
  unlinkSync(from);
}

/**
 * Writes a note (NAME.error.txt…) whole: under a hidden draft name first, then renamed to `file`,
 * so that whoever lists done/ or failed/ never reads it empty or half written.
 */
export function writeWhole(file: string, text: string): void {
  const draft = path.join(path.dirname(file), `.${path.basename(file)}.draft-${process.pid}`);
  writeFileSync(draft, text);
  try {
    renameSync(draft, file);
  } catch (err) {
    try {
      unlinkSync(draft);
    } catch {
      // already gone
    }
    throw err;
  }
}

/** Moves `from` into `dir` under a name free there and in `reserved`; returns that name. */
export function moveUnique(from: string, dir: string, name: string, reserved: string[]): string {
  for (;;) {
    const target = freeName(name, [dir, ...reserved]);
    try {
      moveExact(from, path.join(dir, target));
      return target;
    } catch (err) {
      // Taken between the check and the move: try the next number.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** Plain files of a folder in the order they were moved there (a move changes ctime, not mtime). */
export function filesOldestFirst(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && !isIgnoredName(entry.name))
    .map((entry) => ({ name: entry.name, changed: statSync(path.join(dir, entry.name)).ctimeMs }))
    .sort((a, b) => a.changed - b.changed || a.name.localeCompare(b.name))
    .map((entry) => entry.name);
}

// report/status.ts imports these from here until it takes them from datadir/inbox.js.
export { filesWaitingIn, type WaitingFile } from '../datadir/inbox.js';
