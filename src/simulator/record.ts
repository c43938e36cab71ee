// The record of accepted requests: one JSON line each, appended synchronously so that every line is
// in the file as soon as the request is accepted (nothing to flush on close, nothing lost on a kill
// between requests). Tests that run the simulator as a process read it back with readRecordFile.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AcceptedRecord } from './types.js';

export function appendRecord(file: string, record: AcceptedRecord): void {
  appendFileSync(file, `${JSON.stringify(record)}\n`, 'utf8');
}

/**
 * Creates the record file's folder, so a bad path fails at start rather than on the first accept.
 */
export function prepareRecordFile(file: string): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  appendFileSync(file, '', 'utf8');
}

/** Every record in the file, in order; [] when the file does not exist. */
export function readRecordFile(file: string): AcceptedRecord[] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: AcceptedRecord[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line) as AcceptedRecord);
    } catch {
      // A process killed in the middle of a write leaves at most a torn last line.
      if (i !== lines.length - 1) throw new Error(`record file ${file}: line ${i + 1} is not JSON`);
    }
  });
  return out;
}
