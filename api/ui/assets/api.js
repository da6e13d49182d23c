// The pages' one way to the API: every call goes to /v1 with the token the
// user entered (kept in this tab's sessionStorage, never in a URL), and
// every piece of execution data reaches the page through el(), which sets
// text, never markup.

const tokenKey = 'cairn.token';

export function token() {
  return sessionStorage.getItem(tokenKey) || '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(tokenKey, value);
  else sessionStorage.removeItem(tokenKey);
}

// ApiError is an answer other than 2xx, with the API's error message and
// its body (which may carry more, such as what moved under a plan).
export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body || {};
  }
}

function headers(extra) {
  const h = { Accept: 'application/json', ...extra };
  const t = token();
  if (t) h.Authorization = 'Bearer ' + t;
  return h;
}

async function failure(resp) {
  let message = resp.status + ' ' + resp.statusText;
  let body;
  try {
    body = await resp.json();
    if (body && body.error && body.error.message) message = body.error.message;
  } catch (_) { /* not the error shape */ }
  if (resp.status === 401) message = 'the API wants a token: ' + message;
  return new ApiError(resp.status, message, body);
}

// call sends one request to the API and returns its JSON answer.
export async function call(path, { method = 'GET', body, signal } = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    credentials: 'omit', cache: 'no-store', signal };
  if (body !== undefined) init.body = JSON.stringify(body);
  const resp = await fetch(path, init);
  if (!resp.ok) throw await failure(resp);
  return resp.json();
}

// pool runs task(item) for every item, at most limit at a time, and
// resolves when all are done (rejecting with the first failure).
export async function pool(items, limit, task) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

// stream reads GET path as server-sent events through fetch, so that the
// Authorization header goes with it (EventSource cannot send one), and
// calls onEvent(name, data, id) for each event until the stream ends or
// signal aborts. lastId, when set, goes as Last-Event-ID: the server
// resumes after that event when it can. Lines are bounded: a line over
// 8 MiB ends the stream.
export async function stream(path, onEvent, signal, lastId) {
  const extra = { Accept: 'text/event-stream' };
  if (lastId) extra['Last-Event-ID'] = lastId;
  const resp = await fetch(path, { headers: headers(extra), credentials: 'omit', cache: 'no-store', signal });
  if (!resp.ok) throw await failure(resp);
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let name = 'message';
  let id = '';
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    if (buf.length > 8 << 20) throw new Error('event stream line too long');
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      let line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length) onEvent(name, JSON.parse(data.join('\n')), id);
        name = 'message';
        id = '';
        data = [];
      } else if (line.startsWith(':')) {
        continue; // heartbeat
      } else if (line.startsWith('event:')) {
        name = line.slice(6).trim();
      } else if (line.startsWith('id:')) {
        id = line.slice(3).trim();
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
    }
  }
}

// el builds an element; children are nodes or strings (set as text, so
// attacker-chosen step ids and errors are never markup).
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// safeLink returns url when it is an http(s) URL, else ''.
export function safeLink(url) {
  try {
    const u = new URL(url, location.href);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : '';
  } catch (_) {
    return '';
  }
}

// tokenForm wires the header's token form; onChange runs after the token
// changed.
export function tokenForm(onChange) {
  const form = document.getElementById('token-form');
  const input = document.getElementById('token');
  input.value = token();
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    setToken(input.value.trim());
    onChange();
  });
  document.getElementById('token-clear').addEventListener('click', () => {
    setToken('');
    input.value = '';
    onChange();
  });
}

// say shows a message (or clears it) in the page's status line.
export function say(text, isError = false) {
  const m = document.getElementById('message');
  m.textContent = text || '';
  m.classList.toggle('error', !!isError);
}

export function when(t) {
  if (!t) return '';
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}
