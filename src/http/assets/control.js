// The dashboard's token and a file's operator buttons, loaded before dashboard.js (a plain script:
// its functions are the page's globals). The token comes from the page address's #token=…
// fragment or from the token field, kept in this tab's sessionStorage, and goes in the
// Authorization header only, never a cookie: a page of another site cannot make the browser send
// it. A file's buttons (Approve, Pause, Resume, Cancel) POST /api/files/ID/ACTION with it; the
// daemon refuses them without it.
// @ts-check
'use strict';

const TOKEN_KEY = 'smsdrop-token';
const fromAddress = (/[#&]token=([^&]+)/.exec(location.hash) ?? [])[1];
/** @type {string | undefined} */
let token = fromAddress ? decodeURIComponent(fromAddress) : (storedToken() ?? undefined);
/** @type {Record<string, string>} */
let headers = authorization();

/** @returns {Record<string, string>} */
function authorization() {
  return token ? { Authorization: 'Bearer ' + token } : {};
}

/** The token this tab was given (sessionStorage: gone with the tab, never sent by itself). */
function storedToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null; // storage off: the token lives in this page only
  }
}

/** @param {string} given */
function useToken(given) {
  token = given.trim() || undefined;
  headers = authorization();
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // storage off: kept in memory
  }
}

/** @param {FileRow} f */
function controlWord(f) {
  if (f.waiting === 'scheduled' && f.start_at)
    return 'scheduled at ' + new Date(f.start_at).toLocaleString();
  return f.waiting ?? '';
}

/**
 * What the file waits for, and the buttons of an unfinished file: Approve (held), Pause (going),
 * Resume (paused), Cancel (not cancelled yet).
 * @param {FileRow} f
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- dashboard.js calls it
function controlCell(f) {
  const td = el('td', { class: 'control' });
  const word = controlWord(f);
  if (word) td.appendChild(el('span', { class: 'waiting-word' }, word));
  if (f.status === 'done' || f.status === 'refused') return td;
  /** @type {Array<[string, boolean]>} */
  const buttons = [
    ['approve', f.control === 'held'],
    ['pause', f.control === null],
    ['resume', f.control === 'paused'],
    ['cancel', f.control !== 'cancelled'],
  ];
  for (const [action, shown] of buttons) {
    if (!shown) continue;
    const b = el('button', { type: 'button', 'data-action': action }, capitalised(action));
    b.addEventListener('click', () => void act(f, action));
    td.appendChild(b);
  }
  return td;
}

/** @param {string} word */
function capitalised(word) {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * Sends an operator's command on the file; a cancel is confirmed first, naming the file and what
 * stays unsent.
 * @param {FileRow} f
 * @param {string} action
 */
async function act(f, action) {
  if (
    action === 'cancel' &&
    !confirm(
      'Cancel ' +
        f.name +
        '? Its ' +
        String(f.pending) +
        ' unsent rows end cancelled and are never sent (requests already out finish).',
    )
  )
    return;
  const said = byId('action');
  try {
    const r = await fetch('/api/files/' + String(f.id) + '/' + action, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: '{}',
      cache: 'no-store',
    });
    /** @type {unknown} */
    const answer = await r.json();
    const body = /** @type {{ error?: string, message?: string, changed?: boolean }} */ (answer);
    said.className = r.ok ? 'action' : 'action refused';
    said.textContent = r.ok
      ? f.name + ': ' + action + (body.changed ? ' done' : ': nothing to change')
      : f.name + ': ' + action + ' refused: ' + (body.message ?? body.error ?? String(r.status));
  } catch (err) {
    said.className = 'action refused';
    said.textContent = f.name + ': ' + action + ' failed: ' + String(err);
  }
  await refresh();
}

/** The token field: a token entered there is used from now on, and kept for this tab. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- dashboard.js calls it
function watchTokenForm() {
  const tokenField = /** @type {HTMLInputElement} */ (byId('token'));
  tokenField.value = token ?? '';
  byId('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    useToken(tokenField.value);
    document.body.removeAttribute('data-token-needed');
    void refresh();
  });
}
