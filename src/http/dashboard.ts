// The dashboard's page, style and script, and the chart library (uPlot), all served by the daemon
// so that the page works with no internet. The script is its own file (assets/dashboard.js,
// checked by tsconfig.browser.json; `npm run build` puts it beside this module in dist/), uPlot
// comes from node_modules (a dependency, so `npm install && npm start` has it); both are read once
// at start.
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
  const script = (name: string) =>
    readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
  return new Map([
    ['/', { type: 'text/html; charset=utf-8', body: PAGE }],
    [
      '/assets/dashboard.js',
      { type: 'text/javascript; charset=utf-8', body: script('dashboard.js') },
    ],
    ['/assets/control.js', { type: 'text/javascript; charset=utf-8', body: script('control.js') }],
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
  <form id="token-form" class="token" autocomplete="off">
    <input id="token" type="password" placeholder="token, for actions" aria-label="SMSDROP_HTTP_TOKEN">
    <button type="submit">use</button>
  </form>
</header>
<main>
  <section>
    <h2>Files</h2>
    <table id="files">
      <thead><tr><th>id</th><th>file</th><th>status</th><th>progress</th><th>accepted</th><th>failed</th><th>unknown</th><th>invalid</th><th>duplicates</th><th>to send</th><th>cancelled</th><th>ETA</th><th>control</th><th>results</th></tr></thead>
      <tbody></tbody>
    </table>
    <p id="action" class="action" role="status"></p>
    <p id="nofiles" class="muted">No file yet: drop a CSV file into inbox/.</p>
    <p id="inbox" class="muted"></p>
  </section>
  <section id="nodes-section" hidden>
    <h2>Nodes <span class="muted">(daemons sharing the PostgreSQL journal)</span></h2>
    <table id="nodes">
      <thead><tr><th>node</th><th>started</th><th>last seen</th><th>batches held</th></tr></thead>
      <tbody></tbody>
    </table>
    <table id="file-nodes">
      <thead><tr><th>file in progress</th><th>read by</th><th>batches held by</th></tr></thead>
      <tbody></tbody>
    </table>
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
<footer class="muted">Updated every 2 s. Approve, Pause, Resume and Cancel need the daemon's token (SMSDROP_HTTP_TOKEN). <span id="updated"></span></footer>
<script src="/assets/uPlot.min.js"></script>
<script src="/assets/control.js"></script>
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
.token { margin-left: auto; }
.token input { width: 180px; }
td.control button { margin-right: 4px; }
.waiting-word { margin-right: 6px; font-weight: 600; color: #ef6c00; }
.action { min-height: 1.4em; margin: 4px 0; }
.action.refused { color: #c62828; }
`;
