// The list of recent executions, with GET /v1/executions's filters; the
// filters live in the page's query string (never the token).
import { call, el, say, tokenForm, when } from './api.js';

const filterNames = ['stack', 'cluster', 'type', 'status', 'limit'];
const form = document.getElementById('filters');
const rows = document.getElementById('rows');
const more = document.getElementById('more');
let next = '';

function query(pageToken) {
  const q = new URLSearchParams();
  for (const n of filterNames) {
    const v = form.elements[n].value.trim();
    if (v) q.set(n, v);
  }
  if (pageToken) q.set('pageToken', pageToken);
  return q;
}

function row(ex) {
  const p = ex.progress;
  const href = '/ui/executions/' + encodeURIComponent(ex.id);
  return el('tr', {},
    el('td', {}, el('a', { href }, ex.id)),
    el('td', {}, ex.kind),
    el('td', {}, el('span', { class: 'badge', dataset: { status: ex.status } }, ex.status)),
    el('td', {}, ex.stackId || ex.clusterId || ''),
    el('td', {}, when(ex.startedAt)),
    el('td', {}, p ? p.done + '/' + p.total : ''));
}

async function load(append) {
  say(append ? 'Loading more…' : 'Loading…');
  try {
    const body = await call('/v1/executions?' + query(append ? next : '').toString());
    if (!append) rows.replaceChildren();
    for (const ex of body.executions) rows.append(row(ex));
    next = body.nextPageToken || '';
    more.hidden = !next;
    say(body.executions.length || append ? '' : 'No executions match.');
  } catch (err) {
    say(err.message, true);
  }
}

const params = new URLSearchParams(location.search);
for (const n of filterNames) if (params.has(n)) form.elements[n].value = params.get(n);
form.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const q = query('');
  history.replaceState(null, '', '/ui/' + (q.toString() ? '?' + q : ''));
  load(false);
});
more.addEventListener('click', () => load(true));
tokenForm(() => load(false));
load(false);
