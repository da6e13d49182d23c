// The approval panel of a plan: while it awaits approval, its summary,
// each step it would change with its diff, and the Approve and Reject
// buttons (with an optional comment); once decided, who decided, why it
// ended, and the apply the approval started. Everything is set as text.
import { el, when } from './api.js';
import { diffTable } from './detail.js';

// maxShown bounds the steps listed with their diff; the summary counts all.
const maxShown = 500;

const actions = ['create', 'update', 'delete', 'run', 'noop', 'refresh'];

export function summaryLine(sum) {
  return actions.filter((a) => sum && sum[a]).map((a) => a + ' ' + sum[a]).join(' · ') || 'no steps';
}

function planSteps(plan) {
  const changing = (plan.steps || []).filter((s) => s.action && s.action !== 'noop');
  const items = changing.slice(0, maxShown).map((s) => el('li', { class: 'plan-step', dataset: { action: s.action } },
    el('span', { class: 'plan-action' }, s.action), ' ', el('code', {}, s.id), s.node ? ' on ' + s.node : '',
    s.note ? el('p', { class: 'note' }, s.note) : null,
    (s.changes || []).length ? diffTable(s.changes) : null));
  const more = changing.length > maxShown ? el('p', {}, 'and ' + (changing.length - maxShown) + ' more steps') : null;
  return [el('ul', { class: 'plan-steps' }, items), more];
}

// movedText says what moved under a refused plan, from the 409's body.
export function movedList(body) {
  const out = [];
  if (body.movedBy) out.push('execution ' + body.movedBy + ' was recorded on the stack since the plan');
  for (const m of body.moved || []) out.push(m);
  const more = (body.movedCount || 0) - (body.moved || []).length;
  if (more > 0) out.push('and ' + more + ' more');
  return out;
}

// refused is a refusal of this page's decision: the API's message and
// what moved.
function refused(out) {
  return [el('p', { class: 'error' }, out.error),
    out.moved && out.moved.length ? el('ul', { class: 'moved' }, out.moved.map((m) => el('li', {}, m))) : ''];
}

function decided(a) {
  const parts = [el('p', {}, 'Approval: ', el('strong', { class: 'approval-status' }, a.status),
    a.by ? ' by ' + a.by : '', a.at ? ' at ' + when(a.at) : '')];
  if (a.comment) parts.push(el('p', {}, 'Comment: ', el('q', {}, a.comment)));
  if (a.reason) parts.push(el('p', { class: 'reason' }, a.reason));
  if (a.applyExecutionId) {
    parts.push(el('p', {}, 'Applying as ', el('a', { class: 'apply-link',
      href: '/ui/executions/' + encodeURIComponent(a.applyExecutionId) }, a.applyExecutionId)));
  }
  return parts;
}

// fourEyes says, under a four-eyes policy, how many approvals were given
// of those required (who, when, why), the author and who may approve.
function fourEyes(a) {
  if (!a || !a.required) return [];
  const given = a.approvals || [];
  const parts = [el('p', { id: 'approval-count' }, 'Approvals: ', el('strong', {}, given.length + ' of ' + a.required))];
  if (given.length) {
    parts.push(el('ul', { class: 'approvals' }, given.map((v) => el('li', {}, v.by, ' at ' + when(v.at),
      v.comment ? ': ' : '', v.comment ? el('q', {}, v.comment) : ''))));
  }
  parts.push(el('p', { id: 'approval-author' }, 'Author: ', a.author || '(the anonymous token)',
    a.authorMayApprove ? '' : ' (may not approve)'));
  if (a.mayApprove) parts.push(el('p', { id: 'approval-who' }, 'May approve: ', a.mayApprove));
  if (a.policy) parts.push(el('p', { class: 'note' }, a.policy));
  return parts;
}

// renderApproval fills box for the execution ex (hidden when it has
// nothing to do with an approval). opts: {onDecide(approve, comment) →
// Promise of {approval} or {error, moved: [lines]}, refusal: the last
// such refusal, shown with the outcome, mayApprove: whether the token may
// approve or reject (without, the panel shows the plan and no buttons),
// principal: the token's, which may reject but not approve a plan it
// started under a four-eyes policy that keeps authors out}.
export function renderApproval(box, ex, opts) {
  const a = ex.approval;
  if (!a && ex.awaiting !== 'approval') {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  box.hidden = false;
  if (ex.awaiting !== 'approval') {
    box.replaceChildren(el('h2', {}, 'Approval'), ...decided(a), ...fourEyes(a),
      el('div', { id: 'approval-result', role: 'status' }, opts.refusal ? refused(opts.refusal) : ''));
    return;
  }
  const plan = ex.plan || {};
  const comment = el('input', { id: 'approval-comment', type: 'text', maxlength: 1000, size: 40, placeholder: 'comment (optional)' });
  const result = el('div', { id: 'approval-result', role: 'status' }, opts.refusal ? refused(opts.refusal) : '');
  const buttons = [];
  const decide = async (approve) => {
    for (const b of buttons) b.disabled = true;
    result.replaceChildren(approve ? 'Checking the plan and approving…' : 'Rejecting…');
    const out = await opts.onDecide(approve, comment.value.trim());
    // The panel may have been drawn anew while the answer came (the
    // plan ended): write into the one on the page.
    const shown = document.getElementById('approval-result') || result;
    shown.replaceChildren(...(out.error ? refused(out) : decided(out.approval)));
  };
  const author = !!a && !!a.required && !a.authorMayApprove && (a.author || '') === (opts.principal || '');
  if (opts.mayApprove && !author) {
    buttons.push(el('button', { type: 'button', id: 'approve', class: 'decision', dataset: { action: 'approve' },
      onclick: () => decide(true) }, 'Approve'));
  }
  if (opts.mayApprove) {
    buttons.push(el('button', { type: 'button', id: 'reject', class: 'decision', dataset: { action: 'reject' },
      onclick: () => decide(false) }, 'Reject'));
  }
  box.replaceChildren(
    el('h2', {}, 'This plan awaits approval'),
    el('p', {}, 'Plan: ', el('strong', { id: 'approval-summary' }, summaryLine(plan.summary)),
      a && a.deadline ? ' · until ' + when(a.deadline) : ''),
    ...fourEyes(a),
    ...planSteps(plan),
    author && opts.mayApprove ? el('p', { id: 'approval-author-only' }, 'You started this plan: others approve it; you may reject it.') : '',
    opts.mayApprove ? el('div', { class: 'decisions' }, comment, ...buttons)
      : el('p', { id: 'approval-not-yours' }, 'This token may not approve or reject this plan.'),
    result);
}
