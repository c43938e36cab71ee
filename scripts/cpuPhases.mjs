// node scripts/cpuPhases.mjs MAIN.cpuprofile [WORKER.cpuprofile ...] [--rows N] [--cpu-seconds S]
//   [--stacks PHASE|FUNCTION [--depth FRAMES]]
//
// Splits a V8 CPU profile of `smsdrop send` (node --cpu-prof; bench/profileSend.ts makes one) by
// phase and prints seconds per million rows for each.
//
// The rule: each sample's time (its timeDelta) goes to ONE phase, the phase of the first frame
// that matches a rule below, walking from the top of the sample's stack (the function running)
// down towards the root. Frames that match no rule (Node internals, better-sqlite3's wrappers,
// smsdrop's shared helpers such as journal/open.ts and journal/bulk.ts) are passed over, so their
// time goes to the smsdrop code that called them: a Buffer slice inside intake/index.ts is "read
// and decode", an SQLite statement run from journal/rowInserter.ts is "insert". Only when no frame
// matches do Node's stream files decide (a file read is intake's, a socket's the client's).
// V8's own pseudo-frames are their
// own phases: (garbage collector) is "GC", (idle) is "idle", (program) (V8 and native code outside
// any JS frame: compiling, the event loop) is "program". A sample no rule claims is "other
// smsdrop" when some frame is smsdrop's (src/ or dist/), else "other" (Node's task queues).
// Rules match a frame's script path (src/... or dist/..., .ts or .js alike); within a frame the
// first rule that matches wins, so the order below matters.
//
// Caveat: V8 samples on a wall-clock timer, so a sample's time is the time the main thread spent
// in that state, runnable or running: on a loaded machine, and in blocking calls (SQLite's fsync,
// fs.writeSync), it is more than CPU. --cpu-seconds S (the main thread's CPU seconds from /proc,
// which bench/profileSend.ts prints) adds a column scaled so the main thread's busy phases sum to
// S. Profiles of worker threads (node --cpu-prof writes one per thread) are split by the same rule
// and summed in a column of their own. --stacks prints the heaviest stacks of a phase or a
// function, to check where a rule puts them.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** [phase, test on (url, functionName)], first match wins. */
const RULES = [
  ['GC', (u, f) => f === '(garbage collector)'],
  ['idle', (u, f) => f === '(idle)'],
  ['program', (u, f) => f === '(program)'],
  ['parse (csv-parse)', (u) => u.includes('/node_modules/csv-parse/')],
  [
    'read and decode',
    (u) =>
      /\/(src|dist)\/intake\/(encodingParts|readings|quotes|quotedEmpty|inspect)\.[jt]s$/.test(u) ||
      u.includes('/node_modules/iconv-lite/'),
  ],
  [
    'normalise and check',
    (u) => /\/(src|dist)\/intake\/(row|phone|headers|errors)\.[jt]s$/.test(u),
  ],
  [
    'plan',
    (u) =>
      /\/(src|dist)\/plan\/(planner|groups|seenNumbers|closedBatches|doubts|rowWriter)\.[jt]s$/.test(
        u,
      ),
  ],
  [
    'insert (rows, groups, batches)',
    (u) =>
      /\/(src|dist)\/(journal\/(rowInserter|planStore|sentBefore|suppressed)|plan\/store)\.[jt]s$/.test(
        u,
      ),
  ],
  [
    'result spool',
    (u) =>
      /\/(src|dist)\/(journal\/(resultFiles|resultRows)|csvio\/[^/]+|results\/[^/]+)\.[jt]s$/.test(
        u,
      ),
  ],
  [
    'client and signing',
    (u) => /\/(src|dist)\/provider\//.test(u) || u.includes('/node_modules/undici/'),
  ],
  [
    'claim and record attempts',
    (u) =>
      /\/(src|dist)\/journal\/(batches|intents|outbox|retry|states|writeQueue)\.[jt]s$/.test(u),
  ],
  [
    'send loop (send/)',
    (u) => /\/(src|dist)\/send\//.test(u) || u.includes('/node_modules/p-limit/'),
  ],
  [
    'read and decode',
    (u) => /\/(src|dist)\/intake\/(index|groupCounts|thread|countWorker)\.[jt]s$/.test(u),
  ],
  [
    'pipeline, progress, log',
    (u) =>
      /\/(src|dist)\/(pipeline|cli|log|daemon)\//.test(u) || u.includes('/node_modules/winston'),
  ],
  // Node's own code, when no smsdrop frame above claimed the sample (a stream callback's stack
  // starts in Node): file reads are intake's, socket reads and writes the client's.
  ['read and decode', (u) => u === 'node:internal/fs/streams'],
  ['client and signing', (u) => u === 'node:internal/stream_base_commons' || u === 'node:net'],
  ['start-up (module loading)', (u) => u.startsWith('node:internal/modules/')],
];
/** For a sample no rule above claims, in any frame. */
const isOwn = (u) => /\/(src|dist)\//.test(u) && !u.includes('/node_modules/');
const ORDER = [
  'read and decode',
  'parse (csv-parse)',
  'normalise and check',
  'plan',
  'insert (rows, groups, batches)',
  'claim and record attempts',
  'client and signing',
  'send loop (send/)',
  'result spool',
  'pipeline, progress, log',
  'other smsdrop',
  'start-up (module loading)',
  'other',
  'program',
  'GC',
  'idle',
];

function phaseOf(stack) {
  for (const frame of stack) {
    const { url, functionName } = frame.callFrame;
    for (const [phase, test] of RULES) if (test(url, functionName)) return phase;
  }
  return stack.some((frame) => isOwn(frame.callFrame.url)) ? 'other smsdrop' : 'other';
}

const name = (n) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(src|dist|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;

/** Milliseconds per phase in one profile, and the stacks of the samples `stacks` names. */
function phasesOf(file, stacksOf, depth) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = (id) => {
    const out = [];
    for (let at = id; at !== undefined; at = parent.get(at)) out.push(byId.get(at));
    return out;
  };
  const phaseOfNode = new Map();
  const ms = new Map(ORDER.map((p) => [p, 0]));
  const stacks = new Map();
  profile.samples.forEach((id, i) => {
    if (!phaseOfNode.has(id)) phaseOfNode.set(id, phaseOf(stackOf(id)));
    const phase = phaseOfNode.get(id);
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    ms.set(phase, ms.get(phase) + dt);
    const leaf = byId.get(id).callFrame.functionName;
    if (stacksOf && (stacksOf === phase || stacksOf === leaf)) {
      const key = stackOf(id).slice(0, depth).map(name).join(' < ');
      stacks.set(key, (stacks.get(key) ?? 0) + dt);
    }
  });
  const busy = [...ms].filter(([p]) => p !== 'idle').reduce((s, [, v]) => s + v, 0);
  return { ms, busy, stacks };
}

const USAGE =
  'usage: node scripts/cpuPhases.mjs MAIN.cpuprofile [WORKER.cpuprofile ...] [--rows N]\n' +
  '       [--cpu-seconds S] [--stacks PHASE|FUNCTION [--depth FRAMES]]\n';

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      rows: { type: 'string', default: '1000000' },
      'cpu-seconds': { type: 'string' },
      stacks: { type: 'string' },
      depth: { type: 'string', default: '8' },
    },
  });
  if (positionals.length === 0) {
    process.stderr.write(USAGE);
    process.exit(2);
  }
  const depth = Number(values.depth);
  const [main, ...workers] = positionals.map((f) => phasesOf(f, values.stacks, depth));
  const perM = 1e6 / Number(values.rows.replaceAll('_', ''));
  const cpu = values['cpu-seconds'] === undefined ? undefined : Number(values['cpu-seconds']);
  const scale = cpu === undefined ? undefined : (cpu * 1000) / main.busy;
  const s = (ms) => ((ms * perM) / 1000).toFixed(2);
  const cols = ['phase', 'main thread, profile s / 1M rows', 'share of busy'];
  if (scale) cols.push('main thread, CPU s / 1M rows (scaled)');
  if (workers.length) cols.push('other threads, profile s / 1M rows');
  const lines = [
    `| ${cols.join(' | ')} |`,
    `|---|${cols
      .slice(1)
      .map(() => '---:')
      .join('|')}|`,
  ];
  const row = (label, pick, share) => {
    const cells = [label, s(pick(main)), share];
    if (scale) cells.push(label === 'idle' ? '' : s(pick(main) * scale));
    if (workers.length) cells.push(s(workers.reduce((t, w) => t + pick(w), 0)));
    lines.push(`| ${cells.join(' | ')} |`);
  };
  for (const p of ORDER) {
    const v = main.ms.get(p);
    row(p, (t) => t.ms.get(p), p === 'idle' ? '' : `${((100 * v) / main.busy).toFixed(1)}%`);
  }
  row('busy (all but idle)', (t) => t.busy, '100%');
  process.stdout.write(`${lines.join('\n')}\n`);
  if (values.stacks) {
    const all = new Map();
    for (const t of [main, ...workers])
      for (const [k, v] of t.stacks) all.set(k, (all.get(k) ?? 0) + v);
    process.stdout.write(`\nstacks (top ${depth} frames) for ${values.stacks}:\n`);
    for (const [k, v] of [...all].sort((a, b) => b[1] - a[1]).slice(0, 40))
      process.stdout.write(`${v.toFixed(0).padStart(7)} ms  ${k}\n`);
  }
}

main();
