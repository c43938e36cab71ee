// V8's young generation (where new objects are made) grows by doubling while much of what it
// holds survives, up to 32 MB on Node 20 and 128 MB on Node 24, and all of it stays resident. A
// large file's intake fills it, with little of it in use. Past 16 MB it saves no CPU a run can
// show; below, the CPU grows (docs/benchmark-history.md, "Checkpoints on a thread, and the young
// generation capped").
//
// Node takes --max-semi-space-size only on its command line, which `smsdrop` cannot choose for
// every way it is started (pm2, npm start, node dist/cli.js, the bin). The growth factor, though,
// V8 reads each time it grows the space: after each collection, growth is off while the space is
// at the cap, and on again if V8 shrank it (an idle daemon). The cap is kept at the next turn of
// the event loop, where collections are reported: a long stretch of work without one could let
// the space grow a step past it. Node 20's V8 grows the space only by this factor; Node 22 and
// later size it by other rules too, and there the cap is a hint: the space may grow past it with
// the factor at 1 (docs/benchmark.md, "Memory on Node 24 and 26"); only Node's command line
// (--max-semi-space-size) holds it there.
import v8 from 'node:v8';
import { PerformanceObserver } from 'node:perf_hooks';

/** The young generation's size (both semi-spaces) at which it stops growing. */
export const YOUNG_GENERATION_CAP_BYTES = 16 * 1024 * 1024;
/** V8's own factor (semi_space_growth_factor), put back below the cap. */
const GROWTH_FACTOR = 2;

/** Bytes the young generation takes now (V8's new space). */
export function youngGenerationBytes(): number {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return space?.space_size ?? 0;
}

/** Keeps this process's young generation at YOUNG_GENERATION_CAP_BYTES or less, from now on. */
export function capYoungGeneration(): void {
  // Set after every collection, not once: V8 raises the factor back to 2 whenever it makes a heap,
  // so starting a worker thread undoes a factor of 1 (seen on Node 20-26).
  const observer = new PerformanceObserver(() => {
    const grow = youngGenerationBytes() < YOUNG_GENERATION_CAP_BYTES;
    v8.setFlagsFromString(`--semi-space-growth-factor=${grow ? GROWTH_FACTOR : 1}`);
  });
  observer.observe({ entryTypes: ['gc'] });
}
