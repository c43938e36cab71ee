// An idle daemon gives back the memory its last file grew. V8 keeps the heap a file grew (the young
// generation at its cap, the old generation well above what is live) until it judges a
// collection worth making, which an idle process may not for a long time, so the daemon would
// hold its largest file's memory all day. Full collections once no file is in progress give those
// pages back to the system; they cost tens of milliseconds once per file. V8 exposes gc() only with
// --expose-gc, a flag it also takes at run time.
import v8 from 'node:v8';
import vm from 'node:vm';

/** After the last file ends: a first collection, and a second for what the first left behind. */
const COLLECT_AFTER_MS = [1_000, 6_000];

let gc: (() => void) | undefined;

function fullCollection(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
}

/**
 * Schedules the collections; `busy` says whether a file is in progress by then (a file that
 * started meanwhile is not slowed by them). The timers never keep the process alive.
 */
export function releaseMemoryWhenIdle(busy: () => boolean): void {
  for (const ms of COLLECT_AFTER_MS)
    setTimeout(() => {
      if (!busy()) fullCollection();
    }, ms).unref();
}
