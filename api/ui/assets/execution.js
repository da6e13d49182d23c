// One execution, live: its steps as a graph coloured by state, followed
// through GET /v1/executions/{id}/events, a step's details on click, and
// the decisions the execution waits for.
import { ApiError, call, el, safeLink, say, stream, tokenForm, when } from './api.js';
import { StepGraph, states } from './graph.js';
import { renderDetail } from './detail.js';

const prefix = '/ui/executions/';
const id = decodeURIComponent(location.pathname.slice(prefix.length));
const base = '/v1/executions/' + encodeURIComponent(id);

const page = {
  ex: null, // the execution as last seen (status events carry no steps)
  steps: new Map(), // id → the step's live state
  graph: null,
  follow: null, // AbortController of the event stream
  selected: '',
};

function finished(ex) {
  return ex && !['running', 'waiting', ''].includes(ex.status || '');
}

function waitingOn(stepID) {
  const ex = page.ex;
  if (!ex || ex.status !== 'waiting') return false;
  const waiting = (ex.progress && ex.progress.waiting) || [];
  const st = page.steps.get(stepID);
  return waiting.includes(stepID) || (!!st && st.status === 'waiting');
}

function showDetail() {
  if (!page.selected) return;
  const node = page.graph.step(page.selected);
  renderDetail(document.getElementById('detail'), {
    id: page.selected,
    step: page.steps.get(page.selected) || { id: page.selected, kind: node && node.kind, node: node && node.node },
    dependsOn: node ? node.deps : [],
    decisions: waitingOn(page.selected),
    onGo: (dep) => page.graph.select(dep),
    onDecide: decide,
  });
}

async function decide(action, step) {
  try {
    const res = await call(base + '/decision', { method: 'POST', body: { action, step } });
    say(res.action + ' sent for ' + res.step);
  } catch (err) {
    say(err.message, true);
  }
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
      onclick: () => page.graph.select(w) }, w)));
  if (ex.error) say(ex.error, ex.status !== 'completed');
  showDetail();
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
      el('p', {}, Object.entries(sum).map(([k, v]) => k + ' ' + v).join(' · ')),
      planTable(ex.plan.steps || []));
  }
  const report = document.getElementById('report');
  if (ex.report) {
    report.hidden = false;
    const r = ex.report;
    document.getElementById('report-body').replaceChildren(
      el('p', {}, ['created', 'updated', 'deleted', 'unchanged', 'failed', 'skipped'].map((k) => k + ' ' + (r[k] || 0)).join(' · ')),
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

function onEvent(name, data) {
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
      break;
  }
}

// follow reads the event stream until the execution finishes, reconnecting
// when the stream drops.
async function follow() {
  if (page.follow) page.follow.abort();
  const ctl = new AbortController();
  page.follow = ctl;
  const live = document.getElementById('live');
  while (!ctl.signal.aborted && !finished(page.ex)) {
    live.textContent = 'live';
    try {
      await stream(base + '/events', onEvent, ctl.signal);
    } catch (err) {
      if (ctl.signal.aborted) return;
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

async function load() {
  say('Loading…');
  try {
    const ex = await call(base);
    let nodes = [];
    try {
      nodes = (await call(base + '/graph')).steps;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) throw err;
    }
    const known = new Set(nodes.map((n) => n.id));
    for (const st of ex.steps || []) {
      if (!known.has(st.id)) nodes.push({ id: st.id, kind: st.kind, node: st.node, dependsOn: [] });
    }
    const status = new Map((ex.steps || []).map((s) => [s.id, s.status]));
    for (const n of nodes) n.status = status.get(n.id) || 'pending';
    page.graph.setSteps(nodes);
    page.steps = new Map((ex.steps || []).map((s) => [s.id, s]));
    const ids = document.getElementById('step-ids');
    ids.replaceChildren(...nodes.slice(0, 5000).map((n) => el('option', { value: n.id })));
    say('');
    takeExecution(ex, false);
    document.getElementById('live').textContent = finished(ex) ? 'finished' : '';
    if (!finished(ex)) follow();
  } catch (err) {
    say(err.message, true);
  }
}

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
