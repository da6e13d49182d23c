// One execution, live: its steps as a graph coloured by state, followed
// through GET /v1/executions/{id}/events, a step's details on click, the
// decisions the execution waits for, and a plan's approval.
//
// What the page reads: the execution (with a first page of states) and its
// graph, then the event stream, whose first events are every step's latest
// state as the server's one follower of the execution keeps it, then each
// change; nothing is read again on a tick. A finished execution's states
// are read once, page by page (GET .../steps?offset=). When the server
// refuses the stream (too many followers or clients), the page asks
// GET .../steps?since=CURSOR every few seconds for what changed instead.
//
// window.cairnCy is the graph's cytoscape instance (read-only; it holds
// what the page draws, never the token), for tests and the console.
import { ApiError, call, el, pool, safeLink, say, stream, tokenForm } from './api.js';
import { StepGraph, states } from './graph.js';
import { renderDetail } from './detail.js';
import { movedList, renderApproval, summaryLine } from './approval.js';

const prefix = '/ui/executions/';
const id = decodeURIComponent(location.pathname.slice(prefix.length));
const base = '/v1/executions/' + encodeURIComponent(id);

const page = {
  ex: null, // the execution as last seen (status events carry no steps)
  steps: new Map(), // id → the step's live state
  graph: null,
  follow: null, // AbortController of the event stream
  lastId: '', // the last event's id: a reconnection resumes after it
  cursor: '', // where GET .../steps?since= stands, when the stream is refused
  selected: '',
  approval: null, // the answer of this page's approve or reject
  refusal: null, // its refusal: {error, moved}
  approvalKey: '',
  loadRetry: 0, // ms before the next try of a failed first load (1 s, doubling to 15 s)
  // What the token may do here (GET /v1/whoami?execution=): the page
  // shows only those buttons; the API refuses the others anyway.
  can: new Set(),
};

// Steps beyond the first page come pageSize at a time, fetchers at a time.
const pageSize = 2000;
const fetchers = 3;
// How often the page asks for changes when the server refuses the stream.
const sinceEvery = 5000;

function finished(ex) {
  return ex && !['running', 'waiting', ''].includes(ex.status || '');
}

function waitingOn(stepID) {
  const ex = page.ex;
  if (!ex || ex.status !== 'waiting') return false;
  const waiting = (ex.progress && ex.progress.waiting) || [];
  const st = page.steps.get(stepID);
  return waiting.includes(stepID) || (!!st && (st.status === 'waiting' || st.status === 'unknown'));
}

function showDetail() {
  if (!page.selected) return;
  const node = page.graph.step(page.selected);
  renderDetail(document.getElementById('detail'), {
    id: page.selected,
    step: page.steps.get(page.selected) || { id: page.selected, kind: node && node.kind, node: node && node.node },
    dependsOn: node ? node.deps : [],
    decisions: waitingOn(page.selected) && page.can.has('decide'),
    onGo: (dep) => page.graph.select(dep),
    onDecide: decide,
  });
}

async function decide(action, step) {
  await send({ action, step });
}

// decideAll sends one decision for every step the page shows waiting, by
// name: the server applies it to all of them or, when one stopped waiting
// meanwhile, to none and says what waits.
async function decideAll(action, steps) {
  await send({ action, steps });
}

async function send(body) {
  try {
    const res = await call(base + '/decision', { method: 'POST', body });
    const steps = res.steps || [res.step];
    say(res.action + ' sent for ' + (steps.length === 1 ? steps[0] : steps.length + ' steps'));
  } catch (err) {
    say(err.message, true);
  }
}

// allControls offers retry and skip of every waiting step at once when
// more than one waits.
function allControls(waiting) {
  if (waiting.length < 2 || !page.can.has('decide')) return [];
  const buttons = ['retry', 'skip'].map((a) => el('button', {
    type: 'button', class: 'decision decide-all', dataset: { action: a },
    onclick: () => {
      for (const b of document.querySelectorAll('#waiting button.decide-all')) b.disabled = true;
      decideAll(a, waiting);
    },
  }, a + ' all ' + waiting.length));
  return [el('span', { class: 'decisions' }, ...buttons)];
}

function renderHeader(ex) {
  document.getElementById('exec-id').textContent = ex.id + ' · ' + (ex.kind || '');
  const badge = document.getElementById('status');
  badge.textContent = ex.status;
  badge.dataset.status = ex.status;
  const link = document.getElementById('temporal-link');
  const href = safeLink(ex.uiUrl || '');
  link.hidden = !href;
  if (href) link.href = href;

  const awaiting = document.getElementById('awaiting');
  awaiting.hidden = !ex.awaiting;
  awaiting.replaceChildren(ex.awaiting ? el('span', {}, 'Awaiting: ', el('strong', {}, String(ex.awaiting))) : '');

  const waiting = (ex.status === 'waiting' && ex.progress && ex.progress.waiting) || [];
  const box = document.getElementById('waiting');
  box.hidden = waiting.length === 0;
  box.replaceChildren(waiting.length ? 'Waiting for a decision on: ' : '',
    ...waiting.map((w) => el('button', { type: 'button', class: 'step-link', dataset: { step: w },
      onclick: () => page.graph.select(w) }, w)), ...allControls(waiting));
  if (ex.error) say(ex.error, ex.status !== 'completed');
  renderApprovalOf(ex);
  showDetail();
}

// renderApprovalOf draws the approval panel when what it shows changed
// (so a comment being typed survives other updates).
function renderApprovalOf(ex) {
  const a = { ...(page.approval || {}), ...(ex.approval || {}) };
  if (!a.applyExecutionId && page.approval) a.applyExecutionId = page.approval.applyExecutionId;
  // This page's approval may be newer than the execution last streamed.
  if (page.approval && (page.approval.approvals || []).length > (a.approvals || []).length) a.approvals = page.approval.approvals;
  const shown = { ...ex, approval: ex.approval || page.approval ? a : undefined };
  const key = JSON.stringify([shown.awaiting || '', a.status || '', a.applyExecutionId || '', a.reason || '', !!ex.plan,
    !!page.refusal, page.can.has('approve'), (a.approvals || []).length]);
  if (key === page.approvalKey) return;
  page.approvalKey = key;
  renderApproval(document.getElementById('approval'), shown, { onDecide: approve, refusal: page.refusal,
    mayApprove: page.can.has('approve'), principal: page.principal });
}

// approve approves or rejects the plan; a refusal carries what moved.
async function approve(yes, comment) {
  try {
    const res = await call(base + (yes ? '/approve' : '/reject'), { method: 'POST', body: comment ? { comment } : {} });
    page.approval = res;
    say((yes ? 'approved' : 'rejected') + (res.applyExecutionId ? '; applying as ' + res.applyExecutionId : ''));
    if (page.ex) renderApprovalOf(page.ex);
    return { approval: res };
  } catch (err) {
    say(err.message, true);
    page.refusal = { error: err.message, moved: err instanceof ApiError ? movedList(err.body) : [] };
    return page.refusal;
  }
}

function renderCounts(counts) {
  const box = document.getElementById('counts');
  const parts = [];
  for (const s of states) {
    box.dataset[s] = String(counts[s] || 0);
    if (counts[s]) parts.push(el('span', { class: 'count', dataset: { state: s } }, s.replace('_', ' ') + ' ' + counts[s]));
  }
  box.replaceChildren(...parts);
}

function planTable(steps) {
  return el('table', { class: 'plan-steps' },
    el('thead', {}, el('tr', {}, el('th', {}, 'Step'), el('th', {}, 'Action'), el('th', {}, 'Node'), el('th', {}, 'Changes'))),
    el('tbody', {}, steps.slice(0, 2000).map((s) => el('tr', {},
      el('td', {}, s.id), el('td', {}, s.action || ''), el('td', {}, s.node || ''),
      el('td', {}, (s.changes || []).map((c) => c.path).join(', '))))));
}

function renderPlanReport(ex) {
  const plan = document.getElementById('plan');
  if (ex.plan) {
    const sum = ex.plan.summary || {};
    plan.hidden = false;
    document.getElementById('plan-body').replaceChildren(
      el('p', {}, summaryLine(sum)),
      planTable(ex.plan.steps || []));
  }
  const report = document.getElementById('report');
  if (ex.report) {
    report.hidden = false;
    const r = ex.report;
    document.getElementById('report-body').replaceChildren(
      el('p', {}, ['created', 'updated', 'deleted', 'unchanged', 'failed', 'skipped', 'unknown'].filter((k) => k !== 'unknown' || r[k])
        .map((k) => k + ' ' + (r[k] || 0)).join(' · ')),
      el('ul', {}, (r.failures || []).map((f) => el('li', {}, (f.step || '') + ': ' + (f.error || '')))));
  }
}

function takeStep(st) {
  page.steps.set(st.id, st);
  page.graph.update(st.id, st.status);
  if (st.id === page.selected) showDetail();
}

function takeExecution(ex, withSteps) {
  const plan = page.ex && page.ex.plan;
  page.ex = ex;
  if (!ex.plan && plan) ex.plan = plan;
  if (withSteps) for (const st of ex.steps || []) takeStep(st);
  renderHeader(ex);
  renderPlanReport(ex);
}

function onEvent(name, data, id) {
  if (id) page.lastId = id;
  switch (name) {
    case 'status':
      takeExecution(data, false);
      break;
    case 'step':
      takeStep(data);
      break;
    case 'done':
      takeExecution(data, true);
      document.getElementById('live').textContent = 'finished';
      settle();
      break;
  }
}

// settle reads the final states once the execution finished, when the
// stream did not bring every step to one: a stream that began after the
// end carries only a first page of them.
async function settle() {
  const open = ['pending', 'running', 'waiting'];
  let missing = false;
  for (const id of page.graph.ids()) {
    const st = page.steps.get(id);
    if (!st || open.includes(st.status)) {
      missing = true;
      break;
    }
  }
  if (!missing) return;
  try {
    const ex = await call(base);
    for (const st of await allSteps(ex)) takeStep(st);
  } catch (err) {
    say(err.message, true);
  }
}

// follow reads the event stream until the execution finishes, reconnecting
// (after the last event seen) when the stream drops, and asking for the
// changes instead when the server refuses the stream.
async function follow() {
  if (page.follow) page.follow.abort();
  const ctl = new AbortController();
  page.follow = ctl;
  const live = document.getElementById('live');
  while (!ctl.signal.aborted && !finished(page.ex)) {
    live.textContent = 'live';
    try {
      await stream(base + '/events', onEvent, ctl.signal, page.lastId);
    } catch (err) {
      if (ctl.signal.aborted) return;
      if (err instanceof ApiError && (err.status === 429 || err.status === 503)) {
        say(err.message);
        await followChanges(ctl.signal);
        continue;
      }
      say(err.message, true);
      if (err instanceof ApiError && err.status < 500) {
        live.textContent = '';
        return;
      }
    }
    if (!finished(page.ex)) {
      live.textContent = 'reconnecting';
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

// followChanges asks GET .../steps?since= for what changed, every
// sinceEvery, until the execution finishes (then reads it whole once) or
// a minute passed (then the stream is tried again).
async function followChanges(signal) {
  const live = document.getElementById('live');
  live.textContent = 'polling';
  const until = Date.now() + 60000;
  while (!signal.aborted && Date.now() < until) {
    let res;
    do {
      res = await call(base + '/steps?since=' + encodeURIComponent(page.cursor), { signal });
      for (const st of res.steps) takeStep(st);
      page.cursor = res.cursor || '';
    } while (res.more && !signal.aborted);
    const ex = page.ex;
    const changed = res.status !== ex.status || JSON.stringify(res.waiting || []) !== JSON.stringify((ex.progress && ex.progress.waiting) || []);
    if (changed || finished({ status: res.status })) {
      takeExecution(await call(base, { signal }), false);
    }
    if (finished(page.ex)) {
      live.textContent = 'finished';
      settle();
      return;
    }
    await new Promise((r) => setTimeout(r, sinceEvery));
  }
}

// allSteps is every step state of the execution: the first page it came
// with, then the rest through /steps (a page can come back shorter than
// asked, bounded in bytes: its worker asks again from where it ended).
async function allSteps(ex) {
  const first = ex.steps || [];
  const entries = (ex.progress && ex.progress.entries) || 0;
  if (entries <= first.length) return first;
  const ranges = [];
  for (let o = first.length; o < entries; o += pageSize) ranges.push({ from: o, to: Math.min(o + pageSize, entries), steps: [] });
  await pool(ranges, fetchers, async (r) => {
    for (let at = r.from; at < r.to;) {
      const res = await call(base + '/steps?offset=' + at + '&limit=' + (r.to - at));
      if (!res.steps.length) break;
      for (const st of res.steps) r.steps.push(st);
      at += res.steps.length;
    }
  });
  return first.concat(...ranges.map((r) => r.steps));
}

// nextFrame resolves after the browser drew a frame.
function nextFrame() {
  return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
}

// transient says whether a failed first load is worth trying again: the
// server or a proxy failing or busy (5xx, 429), or the network. A refusal
// (401, 403), a missing execution (404) or a bad request stays said.
function transient(err) {
  if (err instanceof ApiError) return err.status >= 500 || err.status === 429;
  return err instanceof TypeError; // fetch's network failure
}

async function load() {
  say('Loading…');
  try {
    const who = await call('/v1/whoami?execution=' + encodeURIComponent(id));
    page.can = new Set(who.can || []);
    page.principal = who.principal || '';
    const ex = await call(base);
    // A running execution's states come with the event stream; a
    // finished one's are read once.
    const steps = finished(ex) ? await allSteps(ex) : (ex.steps || []);
    let nodes = [];
    try {
      nodes = (await call(base + '/graph')).steps;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) throw err;
    }
    if (!nodes.length && !finished(ex)) {
      // The execution has not prepared its plan yet: look again shortly.
      say('Waiting for the execution to plan its steps…');
      setTimeout(load, 1000);
      return;
    }
    const known = new Set(nodes.map((n) => n.id));
    for (const st of steps) {
      if (!known.has(st.id)) nodes.push({ id: st.id, kind: st.kind, node: st.node, dependsOn: [] });
    }
    const status = new Map(steps.map((s) => [s.id, s.status]));
    for (const n of nodes) n.status = status.get(n.id) || 'pending';
    page.graph.setSteps(nodes);
    page.steps = new Map(steps.map((s) => [s.id, s]));
    const ids = document.getElementById('step-ids');
    ids.replaceChildren(...nodes.slice(0, 5000).map((n) => el('option', { value: n.id })));
    say('');
    takeExecution(ex, false);
    document.getElementById('live').textContent = finished(ex) ? 'finished' : '';
    if (!finished(ex)) follow();
    await nextFrame();
    // How long the first full drawing took, from the navigation.
    const graph = document.getElementById('graph');
    if (!graph.dataset.renderMs) graph.dataset.renderMs = String(Math.round(performance.now()));
    page.loadRetry = 0;
  } catch (err) {
    if (!transient(err)) {
      say(err.message, true);
      return;
    }
    page.loadRetry = Math.min(page.loadRetry ? page.loadRetry * 2 : 1000, 15000);
    say(err.message + ' (trying again in ' + Math.round(page.loadRetry / 1000) + ' s)', true);
    setTimeout(load, page.loadRetry);
  }
}

Object.defineProperty(window, 'cairnCy', { get: () => page.graph.cy });
page.graph = new StepGraph(document.getElementById('graph'), {
  onSelect: (stepID) => {
    page.selected = stepID;
    showDetail();
  },
  onCounts: renderCounts,
});
document.getElementById('find').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const want = document.getElementById('find-step').value.trim();
  if (!page.graph.select(want)) say('no step ' + want, true);
});
tokenForm(load);
load();
