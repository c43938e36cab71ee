// Reads a V8 CPU profile (node --cpu-prof) and says where the time went: self time by function,
// and by area (an smsdrop module, a dependency, Node internals, GC), plus total (inclusive) time
// of smsdrop's own functions, counted once per sample even when a function recurses.
// Also runs alone: `node --import tsx bench/profile.ts FILE.cpuprofile [TOP]`.
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Share {
  name: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  byArea: Share[];
  bySelf: Share[];
  /** Inclusive time of functions in smsdrop's own code (src or dist). */
  byTotal: Share[];
  /**
   * Per named time window (e.g. the phases of a run): CPU busy and the top functions by self time.
   */
  byWindow?: Record<string, { busyMs: number; top: Share[] }>;
}

/**
 * Windows in seconds after `originNs`, a process.hrtime reading: V8 stamps samples with the same
 * monotonic clock (CLOCK_MONOTONIC on Linux), so a profile lines up with times taken outside it.
 */
export interface ProfileWindows {
  originNs: bigint;
  windows: Record<string, { startS: number; endS: number }>;
}

/** dist/plan/planner.js -> smsdrop plan/planner; node_modules/x/... -> x; node:internal -> node. */
export function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : 'node (native)';
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (mod) return mod[1]!;
  const own = /\/(?:dist|src)\/(.+?)\.[jt]s$/.exec(url);
  if (own) return `smsdrop ${own[1]}`;
  if (url.startsWith('node:')) return 'node internals';
  return path.basename(url);
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url
    ? `${url.replace(/^.*\/(dist|src|node_modules)\//, '$1/')}:${lineNumber + 1}`
    : '';
  return `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
}

function top(map: Map<string, number>, totalMs: number, n: number): Share[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, ms]) => ({ name, ms: Math.round(ms), share: ms / totalMs }));
}

const add = (map: Map<string, number>, key: string, ms: number) =>
  map.set(key, (map.get(key) ?? 0) + ms);

/** Self time per function within each window. */
function windowShares(
  profile: CpuProfile,
  byId: Map<number, ProfileNode>,
  w: ProfileWindows,
  n: number,
): ProfileSummary['byWindow'] {
  const names = Object.keys(w.windows);
  const maps = new Map(names.map((name) => [name, new Map<string, number>()]));
  let at = profile.startTime; // microseconds
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    at += profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === '(idle)') return;
    const t = (at * 1000 - Number(w.originNs)) / 1e9;
    for (const name of names) {
      const win = w.windows[name]!;
      if (t >= win.startS && t < win.endS) add(maps.get(name)!, frameName(node), ms);
    }
  });
  const out: NonNullable<ProfileSummary['byWindow']> = {};
  for (const name of names) {
    const map = maps.get(name)!;
    const busyMs = [...map.values()].reduce((a, b) => a + b, 0);
    out[name] = { busyMs: Math.round(busyMs), top: top(map, Math.max(busyMs, 1e-9), n) };
  }
  return out;
}

export function summariseProfile(file: string, n = 25, windows?: ProfileWindows): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const area = new Map<string, number>();
  const total = new Map<string, number>();
  let totalMs = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === '(idle)') return;
    totalMs += ms;
    add(self, frameName(node), ms);
    add(area, areaOf(node.callFrame.url, node.callFrame.functionName), ms);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!;
      if (!/\/(dist|src)\//.test(frame.callFrame.url) || /node_modules/.test(frame.callFrame.url))
        continue;
      const name = frameName(frame);
      if (!seen.has(name)) add(total, name, ms);
      seen.add(name);
    }
  });
  const summary: ProfileSummary = {
    totalMs: Math.round(totalMs),
    byArea: top(area, totalMs, n),
    bySelf: top(self, totalMs, n),
    byTotal: top(total, totalMs, n),
  };
  if (windows) summary.byWindow = windowShares(profile, byId, windows, 8);
  return summary;
}

export function formatSummary(s: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  const block = (title: string, rows: Share[]) =>
    [title, ...rows.map((r) => `  ${pct(r.share)} ${String(r.ms).padStart(7)} ms  ${r.name}`)].join(
      '\n',
    );
  return [
    `CPU profile: ${(s.totalMs / 1000).toFixed(1)} s of samples (idle excluded)`,
    block('self time by area:', s.byArea),
    block('self time by function:', s.bySelf),
    block("total time of smsdrop's functions:", s.byTotal),
    ...Object.entries(s.byWindow ?? {}).map(([name, w]) =>
      block(
        `${name}: ${(w.busyMs / 1000).toFixed(1)} s of CPU, top functions (share of the phase):`,
        w.top,
      ),
    ),
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const [file, n] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node --import tsx bench/profile.ts FILE.cpuprofile [TOP]\n');
    process.exit(2);
  }
  process.stdout.write(`${formatSummary(summariseProfile(file, n ? Number(n) : 25))}\n`);
}
