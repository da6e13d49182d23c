// The detail panel of one step: what it is, its state, attempts, last
// error, changes (the diff) and, when the execution waits on it, the
// decision buttons. Everything is set as text.
import { el, when } from './api.js';

const decisions = ['retry', 'skip', 'rollback', 'abort'];

function value(v) {
  if (v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function row(label, v) {
  if (v === undefined || v === null || v === '') return null;
  return [el('dt', {}, label), el('dd', {}, String(v))];
}

// diffTable is a step's changes as a table of path, old and new values
// (as text).
export function diffTable(changes) {
  return el('table', { class: 'diff' },
    el('thead', {}, el('tr', {}, el('th', {}, 'Path'), el('th', {}, 'Old'), el('th', {}, 'New'))),
    el('tbody', {}, changes.map((c) => el('tr', {},
      el('td', {}, c.path), el('td', { class: 'old' }, value(c.old)), el('td', { class: 'new' }, value(c.new))))));
}

// renderDetail fills box with the step's details. opts: {id, step,
// dependsOn, decisions (bool), onGo(id), onDecide(action, id)}.
export function renderDetail(box, opts) {
  const st = opts.step || {};
  const parts = [el('h2', { class: 'step-id' }, opts.id)];
  parts.push(el('dl', {},
    row('Status', st.status || 'pending'),
    row('Kind', st.kind),
    row('Node', st.node),
    row('Action', st.action),
    row('Attempts', st.attempts === undefined ? '' : st.attempts),
    row('Started', when(st.startedAt)),
    row('Ended', when(st.endedAt)),
    row('Note', st.note)));
  if (st.status === 'unknown') {
    parts.push(el('p', { class: 'unknown-note' }, 'unknown: the command may or may not have run. ' +
      'Its worker stopped after starting it and before recording its outcome, so it was not run again. ' +
      'Retry runs it again; skip takes it as done; rollback or abort stop the execution.'));
  }
  if (st.error) parts.push(el('h3', {}, 'Last error'), el('pre', { class: 'error-text' }, st.error));
  if (opts.decisions) {
    parts.push(el('div', { class: 'decisions' }, 'Decide: ', decisions.map((a) => el('button', {
      type: 'button', class: 'decision', dataset: { action: a },
      onclick: (ev) => {
        for (const b of box.querySelectorAll('button.decision')) b.disabled = true;
        ev.currentTarget.textContent = a + '…';
        opts.onDecide(a, opts.id);
      },
    }, a))));
  }
  const changes = st.changes || [];
  if (changes.length) parts.push(el('h3', {}, 'Changes'), diffTable(changes));
  const deps = opts.dependsOn || [];
  if (deps.length) {
    parts.push(el('h3', {}, 'Depends on'), el('ul', { class: 'deps' }, deps.slice(0, 200).map((d) => el('li', {},
      el('button', { type: 'button', class: 'step-link', onclick: () => opts.onGo(d) }, d)))));
  }
  box.replaceChildren(...parts);
}
