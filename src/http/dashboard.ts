// The dashboard's page, style and script, and the chart library (uPlot), all served by the daemon
// so that the page works with no internet. uPlot is read once at start from node_modules (a
// dependency, so `npm install && npm start` has it; `npm run build` copies nothing). The page
// polls /api/status and /api/files every 2 s; with SMSDROP_HTTP_TOKEN it takes the token from its
// address's #token=… fragment (a fragment is never sent to a server, nor logged).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

interface Asset {
  type: string;
  body: string;
}

/** Route -> asset. */
export function dashboardAssets(): Map<string, Asset> {
  const require = createRequire(import.meta.url);
  const uplot = (file: string) => readFileSync(require.resolve(`uplot/dist/${file}`), 'utf8');
  return new Map([
    ['/', { type: 'text/html; charset=utf-8', body: PAGE }],
    ['/assets/dashboard.js', { type: 'text/javascript; charset=utf-8', body: SCRIPT }],
    ['/assets/dashboard.css', { type: 'text/css; charset=utf-8', body: STYLE }],
    [
      '/assets/uPlot.min.js',
      { type: 'text/javascript; charset=utf-8', body: uplot('uPlot.iife.min.js') },
    ],
    ['/assets/uPlot.min.css', { type: 'text/css; charset=utf-8', body: uplot('uPlot.min.css') }],
  ]);
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>smsdrop</title>
<link rel="stylesheet" href="/assets/uPlot.min.css">
<link rel="stylesheet" href="/assets/dashboard.css">
</head>
<body>
<header>
  <h1>smsdrop</h1>
  <div id="state" class="state">connecting…</div>
  <div id="health" class="health"></div>
</header>
<main>
  <section>
    <h2>Files</h2>
    <table id="files">
      <thead><tr><th>id</th><th>file</th><th>status</th><th>progress</th><th>accepted</th><th>failed</th><th>unknown</th><th>invalid</th><th>duplicates</th><th>to send</th><th>ETA</th><th>results</th></tr></thead>
      <tbody></tbody>
    </table>
    <p id="nofiles" class="muted">No file yet: drop a CSV file into inbox/.</p>
    <p id="inbox" class="muted"></p>
  </section>
  <section class="charts">
    <div>
      <h2>Send rate, last hour <span class="muted">(per minute)</span></h2>
      <div id="rate"></div>
    </div>
    <div>
      <h2>Failures by code</h2>
      <div id="failures"></div>
      <table id="failure-table">
        <thead><tr><th>code</th><th>status</th><th>numbers</th><th>what to do</th></tr></thead>
        <tbody></tbody>
      </table>
      <p id="nofailures" class="muted">No failures.</p>
    </div>
  </section>
</main>
<footer class="muted">Read-only. Updated every 2 s. <span id="updated"></span></footer>
<script src="/assets/uPlot.min.js"></script>
<script src="/assets/dashboard.js"></script>
</body>
</html>
`;

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d232a; background: #f6f7f9; }
header { display: flex; gap: 16px; align-items: center; padding: 10px 20px; background: #1d232a; color: #fff; }
header h1 { font-size: 18px; margin: 0; }
main { padding: 10px 20px; }
h2 { font-size: 15px; margin: 14px 0 6px; }
.state { padding: 3px 10px; border-radius: 4px; background: #2e7d32; }
.state.paused { background: #c62828; }
.state.waiting { background: #ef6c00; }
.state.idle { background: #546e7a; }
.health { font-size: 12px; opacity: .85; }
table { border-collapse: collapse; background: #fff; width: 100%; }
th, td { padding: 4px 8px; border-bottom: 1px solid #e3e6ea; text-align: left; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.advice { white-space: normal; font-size: 12px; }
.bar { position: relative; width: 160px; height: 14px; background: #e3e6ea; border-radius: 3px; overflow: hidden; display: inline-block; vertical-align: middle; }
.bar > span { position: absolute; left: 0; top: 0; bottom: 0; background: #43a047; }
.pct { margin-left: 6px; font-variant-numeric: tabular-nums; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 20px; }
.charts > div { background: #fff; padding: 8px 12px; }
.muted { color: #6b7580; }
footer { padding: 10px 20px; font-size: 12px; }
`;

// Plain script, no build step: it runs as served. (No backquotes in it: it lives in one here.)
const SCRIPT = `
'use strict';
var token = (/[#&]token=([^&]+)/.exec(location.hash) || [])[1];
var headers = token ? { Authorization: 'Bearer ' + decodeURIComponent(token) } : {};
var rateChart, failureChart, failureCodes = [];

function el(tag, attrs, text) {
  var e = document.createElement(tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = String(text);
  return e;
}
function getJson(url) {
  return fetch(url, { headers: headers, cache: 'no-store' }).then(function (r) {
    if (!r.ok && r.status !== 503) throw new Error(url + ': ' + r.status);
    return r.json();
  });
}
function duration(s) {
  if (s === null || s === undefined) return '-';
  if (s < 60) return Math.round(s) + ' s';
  if (s < 3600) return Math.round(s / 60) + ' min';
  return (s / 3600).toFixed(1) + ' h';
}
function download(a, url) {
  a.href = url;
  if (!token) return;
  a.addEventListener('click', function (ev) {
    ev.preventDefault();
    fetch(url, { headers: headers }).then(function (r) { return r.blob(); }).then(function (b) {
      var link = el('a', { href: URL.createObjectURL(b), download: url.split('/').pop() });
      link.click();
    });
  });
}

function showState(status, health) {
  var state = document.getElementById('state');
  var text, cls;
  if (status.paused) { text = 'PAUSED: ' + status.paused.reason; cls = 'paused'; }
  else if (status.waiting) { text = 'WAITING: ' + status.waiting; cls = 'waiting'; }
  else if (status.in_flight.requests > 0 || status.files.length > 0) { text = 'sending: ' + status.rate.requests_per_second + ' requests/s'; cls = ''; }
  else { text = 'idle'; cls = 'idle'; }
  state.textContent = text;
  state.className = 'state ' + cls;
  document.getElementById('health').textContent = health.ok ? 'healthy' : 'unhealthy: ' + health.reasons.join('; ');
}

function showInbox(waiting) {
  var names = (waiting || []).map(function (f) { return f.name + ' (' + duration(f.waiting_seconds) + ')'; });
  document.getElementById('inbox').textContent = names.length ? 'Waiting in inbox/: ' + names.join(', ') : '';
}

function progressCell(f) {
  var td = el('td');
  if (f.progress === null) { td.textContent = 'reading'; return td; }
  var bar = el('span', { class: 'bar', role: 'progressbar', 'aria-valuenow': String(Math.round(f.progress * 100)) });
  var fill = el('span');
  fill.style.width = (f.progress * 100).toFixed(1) + '%';
  bar.appendChild(fill);
  td.appendChild(bar);
  td.appendChild(el('span', { class: 'pct' }, (f.progress * 100).toFixed(1) + '%'));
  return td;
}

function showFiles(files) {
  var body = document.querySelector('#files tbody');
  body.textContent = '';
  document.getElementById('nofiles').style.display = files.length ? 'none' : '';
  files.forEach(function (f) {
    var tr = el('tr', { 'data-file': String(f.id) });
    tr.appendChild(el('td', { class: 'num' }, f.id));
    tr.appendChild(el('td', { class: 'name' }, f.name));
    tr.appendChild(el('td', {}, f.status));
    tr.appendChild(progressCell(f));
    [f.accepted, f.failed, f.unknown, f.invalid, f.duplicates, f.pending].forEach(function (n) { tr.appendChild(el('td', { class: 'num' }, n)); });
    tr.appendChild(el('td', {}, duration(f.eta_seconds)));
    var links = el('td');
    if (f.status === 'done' || f.status === 'refused') {
      var r = el('a', {}, 'result.csv');
      download(r, '/files/' + f.id + '/result.csv');
      links.appendChild(r);
      if (f.invalid > 0) {
        links.appendChild(document.createTextNode(' '));
        var j = el('a', {}, 'rejected.csv');
        download(j, '/files/' + f.id + '/rejected.csv');
        links.appendChild(j);
      }
    }
    tr.appendChild(links);
    body.appendChild(tr);
  });
}

function showRate(rate) {
  var now = Math.floor(Date.now() / 60000) * 60;
  var xs = [], requests = [], accepted = [], byMinute = {};
  rate.forEach(function (m) { byMinute[Date.parse(m.minute + ':00Z') / 1000] = m; });
  for (var t = now - 59 * 60; t <= now; t += 60) {
    xs.push(t);
    requests.push(byMinute[t] ? byMinute[t].requests : 0);
    accepted.push(byMinute[t] ? byMinute[t].accepted : 0);
  }
  var data = [xs, accepted, requests];
  if (rateChart) { rateChart.setData(data); return; }
  rateChart = new uPlot({
    width: chartWidth('rate'), height: 220,
    series: [{}, { label: 'numbers accepted', stroke: '#43a047', fill: 'rgba(67,160,71,.15)' }, { label: 'requests', stroke: '#1e88e5' }],
    axes: [{}, { label: 'per minute' }],
  }, data, document.getElementById('rate'));
}

function showFailures(files) {
  var byCode = {};
  var rows = [];
  files.forEach(function (f) {
    f.failures.forEach(function (x) {
      var code = x.status_code || x.class;
      byCode[code] = (byCode[code] || 0) + x.count;
      rows.push({ file: f.name, code: code, status: x.status, count: x.count, what: x.what_to_do });
    });
  });
  failureCodes = Object.keys(byCode).sort(function (a, b) { return byCode[b] - byCode[a]; });
  document.getElementById('nofailures').style.display = failureCodes.length ? 'none' : '';
  var body = document.querySelector('#failure-table tbody');
  body.textContent = '';
  rows.forEach(function (x) {
    var tr = el('tr', { 'data-code': x.code });
    tr.appendChild(el('td', {}, x.code));
    tr.appendChild(el('td', {}, x.status));
    tr.appendChild(el('td', { class: 'num' }, x.count));
    tr.appendChild(el('td', { class: 'advice' }, x.file + ': ' + x.what));
    body.appendChild(tr);
  });
  var data = [failureCodes.map(function (_, i) { return i; }), failureCodes.map(function (c) { return byCode[c]; })];
  if (failureChart) { failureChart.setData(data); return; }
  failureChart = new uPlot({
    width: chartWidth('failures'), height: 220,
    scales: { x: { time: false, range: function (u, min, max) { return [min - 0.6, max + 0.6]; } },
      y: { range: function (u, min, max) { return [0, Math.max(1, max) * 1.15]; } } },
    series: [{ label: 'code', value: function (u, i) { return i === null ? '' : failureCodes[i]; } },
      { label: 'numbers', fill: '#e53935', stroke: '#c62828', paths: uPlot.paths.bars({ size: [0.6, 80] }), points: { show: false } }],
    axes: [{ splits: function () { return failureCodes.map(function (_, i) { return i; }); }, values: function (u, splits) { return splits.map(function (i) { return failureCodes[i] || ''; }); } }, {}],
  }, data, document.getElementById('failures'));
}

function chartWidth(id) {
  return Math.max(320, document.getElementById(id).parentElement.clientWidth - 24);
}

function refresh() {
  Promise.all([getJson('/api/status'), getJson('/api/files')]).then(function (got) {
    showState(got[0].status, got[0].health);
    showFiles(got[1].files);
    showInbox(got[0].status.inbox);
    showRate(got[0].rate);
    showFailures(got[1].files);
    document.getElementById('updated').textContent = 'Last update ' + new Date().toLocaleTimeString() + '.';
    document.body.setAttribute('data-loaded', 'true');
  }).catch(function (err) {
    document.getElementById('state').textContent = 'no answer from the daemon: ' + err.message;
    document.getElementById('state').className = 'state paused';
  });
}
refresh();
setInterval(refresh, 2000);
`;
