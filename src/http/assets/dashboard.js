// The dashboard's script, run by the browser as served (no build step): plain JavaScript whose
// types TypeScript checks from the JSDoc below (tsconfig.browser.json) and ESLint lints. It polls
// /api/status and /api/files every 2 s; with SMSDROP_HTTP_TOKEN it takes the token from the page
// address's #token=… fragment (a fragment is never sent to a server, nor logged) or from the token
// field (control.js, loaded first, which also makes each file's Approve, Pause, Resume and Cancel).
// @ts-check
'use strict';

/**
 * @typedef {{ status: 'failed' | 'unknown', status_code: string | null, class: string,
 *   count: number, what_to_do: string }} Failure
 * @typedef {{ id: number, name: string, status: string, progress: number | null,
 *   eta_seconds: number | null, accepted: number, failed: number, unknown: number,
 *   invalid: number, duplicates: number, pending: number, failures: Failure[],
 *   pruned: boolean, control: string | null, start_at: string | null,
 *   waiting: string | null, cancelled: number }} FileRow
 * @typedef {{ name: string, waiting_seconds: number }} WaitingInInbox
 * @typedef {{ id: string, started_at: string, seen_seconds_ago: number,
 *   batches_held: number }} SharingNode
 * @typedef {{ id: number, name: string, read_by?: string | null,
 *   batches_held_by?: { node: string, batches: number }[] }} FileAtWork
 * @typedef {{ paused: { reason: string } | null, waiting: string | null,
 *   in_flight: { requests: number }, files: FileAtWork[], inbox?: WaitingInInbox[],
 *   nodes?: SharingNode[], rate: { requests_per_second: number } }} Status
 * @typedef {{ ok: boolean, reasons: string[] }} Health
 * @typedef {{ minute: string, requests: number, accepted: number }} Minute
 * @typedef {{ status: Status, health: Health, rate: Minute[] }} StatusAnswer
 * @typedef {{ files: FileRow[] }} FilesAnswer
 */

/** @type {uPlot | undefined} */
let rateChart;
/** @type {uPlot | undefined} */
let failureChart;
/** @type {string[]} */
let failureCodes = [];

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
function byId(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error('the page has no #' + id);
  return found;
}

/**
 * @param {string} selector
 * @returns {HTMLElement}
 */
function one(selector) {
  const found = document.querySelector(selector);
  if (!(found instanceof HTMLElement)) throw new Error('the page has no ' + selector);
  return found;
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string>} [attrs]
 * @param {string | number} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = String(text);
  return e;
}

/** The daemon wants a token (SMSDROP_HTTP_TOKEN) that the page address lacks, or has wrong. */
class TokenNeeded extends Error {
  constructor() {
    super(
      token
        ? 'the daemon refused the token given: check SMSDROP_HTTP_TOKEN'
        : 'the daemon needs its token: open this page as ' +
            location.origin +
            '/#token=SMSDROP_HTTP_TOKEN, or enter it above',
    );
  }
}

/**
 * @param {string} url
 * @returns {Promise<unknown>}
 */
async function getJson(url) {
  const r = await fetch(url, { headers, cache: 'no-store' });
  if (r.status === 401) throw new TokenNeeded();
  if (!r.ok && r.status !== 503) throw new Error(url + ': ' + String(r.status));
  /** @type {unknown} */
  const body = await r.json();
  return body;
}

/** @param {number | null | undefined} s */
function duration(s) {
  if (s === null || s === undefined) return '-';
  if (s < 60) return String(Math.round(s)) + ' s';
  if (s < 3600) return String(Math.round(s / 60)) + ' min';
  return (s / 3600).toFixed(1) + ' h';
}

/**
 * A link to a download; with a token, the click fetches it with the token (a link cannot carry
 * a header) and hands the browser the file.
 * @param {HTMLAnchorElement} a
 * @param {string} url
 */
function download(a, url) {
  a.href = url;
  if (!token) return;
  a.addEventListener('click', (ev) => {
    ev.preventDefault();
    void fetch(url, { headers })
      .then((r) => r.blob())
      .then((b) => {
        const name = url.split('/').pop() ?? 'download.csv';
        el('a', { href: URL.createObjectURL(b), download: name }).click();
      });
  });
}

/**
 * @param {Status} status
 * @param {Health} health
 */
function showState(status, health) {
  const state = byId('state');
  let text = 'idle';
  let cls = 'idle';
  if (status.paused) {
    text = 'PAUSED: ' + status.paused.reason;
    cls = 'paused';
  } else if (status.waiting) {
    text = 'WAITING: ' + status.waiting;
    cls = 'waiting';
  } else if (status.in_flight.requests > 0 || status.files.length > 0) {
    text = 'sending: ' + String(status.rate.requests_per_second) + ' requests/s';
    cls = '';
  }
  state.textContent = text;
  state.className = 'state ' + cls;
  byId('health').textContent = health.ok ? 'healthy' : 'unhealthy: ' + health.reasons.join('; ');
}

/** @param {FileRow} f */
function progressCell(f) {
  const td = el('td');
  if (f.progress === null) {
    td.textContent = 'reading';
    return td;
  }
  const percent = f.progress * 100;
  const bar = el('span', {
    class: 'bar',
    role: 'progressbar',
    'aria-valuenow': String(Math.round(percent)),
  });
  const fill = el('span');
  fill.style.width = percent.toFixed(1) + '%';
  bar.appendChild(fill);
  td.appendChild(bar);
  td.appendChild(el('span', { class: 'pct' }, percent.toFixed(1) + '%'));
  return td;
}

/** @param {FileRow} f */
function linksCell(f) {
  const links = el('td');
  if (f.status !== 'done' && f.status !== 'refused') return links;
  if (f.pruned) {
    links.appendChild(el('span', { class: 'muted' }, 'pruned'));
    return links;
  }
  const result = el('a', {}, 'result.csv');
  download(result, '/files/' + String(f.id) + '/result.csv');
  links.appendChild(result);
  if (f.invalid > 0) {
    links.appendChild(document.createTextNode(' '));
    const rejected = el('a', {}, 'rejected.csv');
    download(rejected, '/files/' + String(f.id) + '/rejected.csv');
    links.appendChild(rejected);
  }
  return links;
}

/** @param {FileRow[]} files */
function showFiles(files) {
  const body = one('#files tbody');
  body.textContent = '';
  byId('nofiles').style.display = files.length ? 'none' : '';
  for (const f of files) {
    const tr = el('tr', { 'data-file': String(f.id) });
    tr.appendChild(el('td', { class: 'num' }, f.id));
    tr.appendChild(el('td', { class: 'name' }, f.name));
    tr.appendChild(el('td', {}, f.status));
    tr.appendChild(progressCell(f));
    for (const n of [f.accepted, f.failed, f.unknown, f.invalid, f.duplicates, f.pending])
      tr.appendChild(el('td', { class: 'num' }, n));
    tr.appendChild(el('td', { class: 'num' }, f.cancelled));
    tr.appendChild(el('td', {}, duration(f.eta_seconds)));
    tr.appendChild(controlCell(f));
    tr.appendChild(linksCell(f));
    body.appendChild(tr);
  }
}

/** @param {Minute[]} rate */
function showRate(rate) {
  const now = Math.floor(Date.now() / 60000) * 60;
  /** @type {number[]} */ const xs = [];
  /** @type {number[]} */ const requests = [];
  /** @type {number[]} */ const accepted = [];
  /** @type {Map<number, Minute>} */
  const byMinute = new Map(rate.map((m) => [Date.parse(m.minute + ':00Z') / 1000, m]));
  for (let t = now - 59 * 60; t <= now; t += 60) {
    xs.push(t);
    requests.push(byMinute.get(t)?.requests ?? 0);
    accepted.push(byMinute.get(t)?.accepted ?? 0);
  }
  /** @type {uPlot.AlignedData} */
  const data = [xs, accepted, requests];
  if (rateChart) return rateChart.setData(data);
  rateChart = new uPlot(
    {
      width: chartWidth('rate'),
      height: 220,
      series: [
        {},
        { label: 'numbers accepted', stroke: '#43a047', fill: 'rgba(67,160,71,.15)' },
        { label: 'requests', stroke: '#1e88e5' },
      ],
      axes: [{}, { label: 'per minute' }],
    },
    data,
    byId('rate'),
  );
}

/** @param {FileRow[]} files */
function failureRows(files) {
  /** @type {Map<string, number>} */
  const byCode = new Map();
  const rows = files.flatMap((f) =>
    f.failures.map((x) => {
      const code = x.status_code ?? x.class;
      byCode.set(code, (byCode.get(code) ?? 0) + x.count);
      return { file: f.name, code, status: x.status, count: x.count, what: x.what_to_do };
    }),
  );
  return { byCode, rows };
}

/** @param {FileRow[]} files */
function showFailures(files) {
  const { byCode, rows } = failureRows(files);
  const count = (/** @type {string} */ code) => byCode.get(code) ?? 0;
  failureCodes = [...byCode.keys()].sort((a, b) => count(b) - count(a));
  byId('nofailures').style.display = failureCodes.length ? 'none' : '';
  const body = one('#failure-table tbody');
  body.textContent = '';
  for (const x of rows) {
    const tr = el('tr', { 'data-code': x.code });
    tr.appendChild(el('td', {}, x.code));
    tr.appendChild(el('td', {}, x.status));
    tr.appendChild(el('td', { class: 'num' }, x.count));
    tr.appendChild(el('td', { class: 'advice' }, x.file + ': ' + x.what));
    body.appendChild(tr);
  }
  /** @type {uPlot.AlignedData} */
  const data = [failureCodes.map((_, i) => i), failureCodes.map(count)];
  if (failureChart) return failureChart.setData(data);
  failureChart = new uPlot(failureChartOptions(), data, byId('failures'));
}

/** @returns {uPlot.Options} */
function failureChartOptions() {
  const bars = uPlot.paths.bars?.({ size: [0.6, 80] });
  return {
    width: chartWidth('failures'),
    height: 220,
    scales: {
      x: { time: false, range: (_u, min, max) => [min - 0.6, max + 0.6] },
      y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.15] },
    },
    series: [
      { label: 'code', value: (_u, i) => (i === null ? '' : (failureCodes[i] ?? '')) },
      {
        label: 'numbers',
        fill: '#e53935',
        stroke: '#c62828',
        paths: bars,
        points: { show: false },
      },
    ],
    axes: [
      {
        splits: () => failureCodes.map((_, i) => i),
        values: (_u, splits) => splits.map((i) => failureCodes[i] ?? ''),
      },
      {},
    ],
  };
}

/**
 * Files in inbox/ not taken yet (still being written, or unseen by the watcher), and how long.
 * @param {WaitingInInbox[]} waiting
 */
function showInbox(waiting) {
  const names = waiting.map((f) => f.name + ' (' + duration(f.waiting_seconds) + ')');
  byId('inbox').textContent = names.length ? 'Waiting in inbox/: ' + names.join(', ') : '';
}

/**
 * The daemons sharing a PostgreSQL journal (none with SQLite: the section stays hidden).
 * @param {SharingNode[]} nodes
 */
function showNodes(nodes) {
  byId('nodes-section').hidden = nodes.length === 0;
  const body = one('#nodes tbody');
  body.replaceChildren();
  for (const n of nodes) {
    const tr = el('tr', {});
    tr.appendChild(el('td', {}, n.id));
    tr.appendChild(el('td', {}, new Date(n.started_at).toLocaleString()));
    tr.appendChild(el('td', {}, duration(n.seen_seconds_ago) + ' ago'));
    tr.appendChild(el('td', { class: 'num' }, String(n.batches_held)));
    body.appendChild(tr);
  }
}

/**
 * Which node reads each file in progress and which hold its batches (PostgreSQL: the journal
 * knows; the section is hidden with SQLite).
 * @param {FileAtWork[]} files
 */
function showFileNodes(files) {
  const body = one('#file-nodes tbody');
  body.replaceChildren();
  for (const f of files) {
    if (f.read_by === undefined) continue;
    const held = (f.batches_held_by ?? []).map((h) => h.node + ' ' + h.batches).join(', ');
    const tr = el('tr', {});
    tr.appendChild(el('td', {}, f.name + ' (id ' + f.id + ')'));
    tr.appendChild(el('td', {}, f.read_by ?? 'none now'));
    tr.appendChild(el('td', {}, held || 'none'));
    body.appendChild(tr);
  }
}

/** @param {string} id */
function chartWidth(id) {
  return Math.max(320, (byId(id).parentElement?.clientWidth ?? 344) - 24);
}

async function refresh() {
  try {
    const [status, files] = /** @type {[StatusAnswer, FilesAnswer]} */ (
      await Promise.all([getJson('/api/status'), getJson('/api/files')])
    );
    showState(status.status, status.health);
    showFiles(files.files);
    showInbox(status.status.inbox ?? []);
    showNodes(status.status.nodes ?? []);
    showFileNodes(status.status.files);
    showRate(status.rate);
    showFailures(files.files);
    byId('updated').textContent = 'Last update ' + new Date().toLocaleTimeString() + '.';
    document.body.setAttribute('data-loaded', 'true');
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    byId('state').textContent =
      err instanceof TokenNeeded ? message : 'no answer from the daemon: ' + message;
    byId('state').className = 'state paused';
    if (err instanceof TokenNeeded) {
      byId('nofiles').textContent = 'Files are shown once the page has the token.';
      document.body.setAttribute('data-token-needed', 'true');
    }
  }
}

watchTokenForm();
void refresh();
setInterval(() => void refresh(), 2000);
