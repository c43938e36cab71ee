// What the daemon tells other processes (status, the dashboard): paused and why, what it waits for.
import type { Awaitable } from './awaitable.js';
import type { DaemonStateUpdate } from './records.js';

export interface DaemonStateStore {
  setPause(update: DaemonStateUpdate): Awaitable<void>;
  setWaiting(text: string | null, pid?: number): Awaitable<void>;
}
