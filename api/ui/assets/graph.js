// StepGraph draws an execution's steps as a DAG (cytoscape on a canvas,
// laid out by dagre) and keeps it live.
//
// Scale: up to collapseAt steps each step is a box. Beyond, steps are
// grouped by dependency level and node (or kind) — by level alone, in
// bands of levels, when that would make over maxBoxes boxes — at most
// groupMax to a group, and each group is one box with its counts by state;
// a click on a group expands it into its steps (and collapses it again).
// Status changes are queued and applied once per animation frame, in one
// cytoscape batch, with group counts kept incrementally: O(changes) a
// frame, whatever the size of the execution. Labels are drawn on the canvas, never parsed as
// markup.
import cytoscape from './cytoscape.esm.min.mjs';
import dagre from './dagre.esm.js';

export const collapseAt = 400;
const groupMax = 400;
const maxBoxes = 150;

export const states = ['pending', 'running', 'waiting', 'unknown', 'succeeded', 'failed', 'dep_failed', 'skipped',
  'rolled_back', 'canceled'];

const colors = {
  pending: '#d9dde3', running: '#4c8dff', waiting: '#f5a524', unknown: '#c2410c', succeeded: '#3fb56b', failed: '#e5484d',
  dep_failed: '#a63a3d', skipped: '#b8bcc4', rolled_back: '#8e6bd8', canceled: '#6b7079',
};

function shortLabel(id) {
  return id.length > 28 ? id.slice(0, 26) + '…' : id;
}

// levels gives each step its longest dependency depth (Kahn's order);
// steps on a cycle or depending on unknown steps only count known ones.
function levels(steps) {
  const indeg = new Map();
  const out = new Map();
  for (const s of steps.values()) {
    indeg.set(s.id, 0);
    out.set(s.id, []);
  }
  for (const s of steps.values()) {
    for (const d of s.deps) {
      if (!steps.has(d) || d === s.id) continue;
      indeg.set(s.id, indeg.get(s.id) + 1);
      out.get(d).push(s.id);
    }
  }
  const queue = [];
  for (const [id, n] of indeg) if (n === 0) queue.push(id);
  const level = new Map(queue.map((id) => [id, 0]));
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i];
    for (const next of out.get(id)) {
      level.set(next, Math.max(level.get(next) || 0, level.get(id) + 1));
      indeg.set(next, indeg.get(next) - 1);
      if (indeg.get(next) === 0) queue.push(next);
    }
  }
  let deepest = 0;
  for (const v of level.values()) deepest = Math.max(deepest, v);
  for (const s of steps.values()) if (!level.has(s.id)) level.set(s.id, deepest + 1);
  return level;
}

// groupState is the colour a group shows: the most urgent state in it.
function groupState(counts, size) {
  for (const s of ['unknown', 'failed', 'waiting', 'running', 'dep_failed', 'rolled_back', 'canceled']) {
    if (counts[s]) return s;
  }
  if ((counts.succeeded || 0) + (counts.skipped || 0) === size) return counts.succeeded ? 'succeeded' : 'skipped';
  if (counts.pending === size) return 'pending';
  return 'running';
}

export class StepGraph {
  // onSelect(id) is called with a step's id when it is clicked; onCounts(counts)
  // with the counts by state after every change.
  constructor(container, { onSelect, onCounts }) {
    this.container = container;
    this.onSelect = onSelect;
    this.onCounts = onCounts;
    this.steps = new Map(); // id → {id, kind, node, deps, status, group}
    this.groups = new Map(); // key → {key, label, ids, counts, expanded}
    this.counts = {};
    this.pending = new Map();
    this.frame = 0;
    this.selected = '';
    this.cy = null;
  }

  // setSteps replaces the graph: each step {id, kind, node, dependsOn,
  // status}.
  setSteps(list) {
    this.steps = new Map();
    for (const s of list) {
      if (this.steps.has(s.id)) continue;
      this.steps.set(s.id, { id: s.id, kind: s.kind || '', node: s.node || '', deps: s.dependsOn || [],
        status: s.status || 'pending', group: '' });
    }
    const level = levels(this.steps);
    const grouped = this.steps.size > collapseAt;
    // Group by level and node while that makes few boxes; else by level
    // alone, in bands of levels when there are many.
    const whereOf = (s) => s.node || s.kind || 'steps';
    const pairs = new Set();
    let deepest = 0;
    for (const s of this.steps.values()) {
      pairs.add(level.get(s.id) + '|' + whereOf(s));
      deepest = Math.max(deepest, level.get(s.id));
    }
    const byNode = pairs.size <= maxBoxes;
    const band = byNode ? 1 : Math.max(1, Math.ceil((deepest + 1) / maxBoxes));
    const byKey = new Map();
    for (const s of this.steps.values()) {
      const lv = Math.floor(level.get(s.id) / band) * band;
      const where = byNode ? whereOf(s) : (band > 1 ? 'levels ' + lv + '–' + (lv + band - 1) : 'all nodes');
      const base = grouped ? 'L' + lv + '|' + where : 'all';
      let n = 0;
      let key = base + '|' + n;
      while (byKey.has(key) && byKey.get(key).ids.length >= groupMax) key = base + '|' + ++n;
      if (!byKey.has(key)) {
        byKey.set(key, { key, level: lv, where, part: n, ids: [], counts: {}, expanded: !grouped });
      }
      const g = byKey.get(key);
      g.ids.push(s.id);
      g.counts[s.status] = (g.counts[s.status] || 0) + 1;
      s.group = key;
    }
    this.groups = byKey;
    this.counts = {};
    for (const s of this.steps.values()) this.counts[s.status] = (this.counts[s.status] || 0) + 1;
    this.render();
    this.onCounts(this.counts);
  }

  has(id) {
    return this.steps.has(id);
  }

  // ids are every step's id.
  ids() {
    return this.steps.keys();
  }

  step(id) {
    return this.steps.get(id);
  }

  // update queues a step's new status; the graph shows it on the next
  // animation frame.
  update(id, status) {
    if (!this.steps.has(id)) return;
    this.pending.set(id, status);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  flush() {
    this.frame = 0;
    if (!this.pending.size) return;
    const touched = new Set();
    const cy = this.cy;
    cy.batch(() => {
      for (const [id, status] of this.pending) {
        const s = this.steps.get(id);
        if (s.status === status) continue;
        const g = this.groups.get(s.group);
        g.counts[s.status]--;
        this.counts[s.status]--;
        g.counts[status] = (g.counts[status] || 0) + 1;
        this.counts[status] = (this.counts[status] || 0) + 1;
        s.status = status;
        if (g.expanded) cy.getElementById('s:' + id).data('state', status);
        else touched.add(g);
      }
      for (const g of touched) {
        const node = cy.getElementById('g:' + g.key);
        node.data('state', groupState(g.counts, g.ids.length));
        node.data({ label: this.groupLabel(g), counts: { ...g.counts } });
      }
    });
    this.pending.clear();
    this.onCounts(this.counts);
  }

  groupLabel(g) {
    const parts = [];
    for (const s of states) if (g.counts[s]) parts.push(g.counts[s] + ' ' + s);
    const part = g.part ? ' #' + (g.part + 1) : '';
    return 'level ' + g.level + ' · ' + shortLabel(g.where) + part + '\n' + g.ids.length + ' steps\n' + parts.join(', ');
  }

  // visible is the id of the box a step is drawn in.
  visible(s) {
    const g = this.groups.get(s.group);
    return g.expanded ? 's:' + s.id : 'g:' + g.key;
  }

  elements() {
    const nodes = [];
    for (const g of this.groups.values()) {
      if (!g.expanded) {
        nodes.push({ group: 'nodes', classes: 'group',
          data: { id: 'g:' + g.key, group: g.key, label: this.groupLabel(g), state: groupState(g.counts, g.ids.length),
            size: g.ids.length, counts: { ...g.counts } } });
        continue;
      }
      for (const id of g.ids) {
        const s = this.steps.get(id);
        nodes.push({ group: 'nodes', data: { id: 's:' + id, step: id, label: shortLabel(id), state: s.status } });
      }
    }
    const edges = [];
    const seen = new Set();
    for (const s of this.steps.values()) {
      const to = this.visible(s);
      for (const d of s.deps) {
        const dep = this.steps.get(d);
        if (!dep) continue;
        const from = this.visible(dep);
        const key = from + '\u0000' + to;
        if (from === to || seen.has(key)) continue;
        seen.add(key);
        edges.push({ group: 'edges', data: { id: 'e' + edges.length, source: from, target: to } });
      }
    }
    return { nodes, edges };
  }

  // layout places the boxes left to right by dependency: with dagre while
  // each step is a box; in columns by level once steps are grouped, where
  // dagre's crossing minimization over a few hundred boxes and their
  // edges took seconds (4 s for 176 groups of 48,652 steps), and a group
  // is already a level's slice.
  layout(nodes, edges) {
    if (this.steps.size > collapseAt) {
      this.columns(nodes);
      return;
    }
    const g = new dagre.graphlib.Graph();
    g.setGraph({ rankdir: 'LR', nodesep: 12, ranksep: 50, marginx: 10, marginy: 10 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const n of nodes) {
      const group = n.classes === 'group';
      g.setNode(n.data.id, { width: group ? 220 : 170, height: group ? 70 : 26 });
    }
    for (const e of edges) g.setEdge(e.data.source, e.data.target);
    dagre.layout(g);
    for (const n of nodes) {
      const p = g.node(n.data.id);
      n.position = { x: p.x, y: p.y };
    }
  }

  // columns places each group (or an expanded group's steps) in the
  // column of its level, stacked in the order the groups were made.
  columns(nodes) {
    const col = new Map(); // level → next y
    for (const n of nodes) {
      const g = this.groups.get(n.data.group || this.steps.get(n.data.step).group);
      const h = n.classes === 'group' ? 70 : 26;
      const y = col.get(g.level) || 0;
      n.position = { x: 10 + g.level * 270, y: y + h / 2 };
      col.set(g.level, y + h + 12);
    }
  }

  render() {
    const { nodes, edges } = this.elements();
    this.layout(nodes, edges);
    const large = nodes.length + edges.length > 3000;
    if (this.cy) this.cy.destroy();
    this.cy = cytoscape({
      container: this.container,
      elements: [...nodes, ...edges],
      layout: { name: 'preset', fit: true, padding: 20 },
      minZoom: 0.02,
      maxZoom: 3,
      textureOnViewport: large,
      hideEdgesOnViewport: large,
      pixelRatio: large ? 1 : 'auto',
      boxSelectionEnabled: false,
      style: this.style(edges.length > 2000),
    });
    this.cy.on('tap', 'node', (ev) => {
      const d = ev.target.data();
      if (d.group) this.toggle(d.group);
      else this.select(d.step);
    });
    if (this.selected) this.mark(this.selected, false);
  }

  style(manyEdges) {
    const rules = [
      { selector: 'node', style: {
        shape: 'round-rectangle', width: 170, height: 26, label: 'data(label)', 'font-size': 10,
        'text-valign': 'center', 'text-halign': 'center', 'text-wrap': 'ellipsis', 'text-max-width': 160,
        color: '#1b1f24', 'background-color': colors.pending, 'border-width': 1, 'border-color': '#8a9099' } },
      { selector: 'node.group', style: { width: 220, height: 70, 'text-wrap': 'wrap', 'text-max-width': 210,
        'border-style': 'double', 'border-width': 3 } },
      { selector: 'node.selected', style: { 'border-width': 3, 'border-color': '#111' } },
      { selector: 'edge', style: { width: 1, 'line-color': '#9aa1ab', 'target-arrow-color': '#9aa1ab',
        'target-arrow-shape': manyEdges ? 'none' : 'triangle', 'curve-style': manyEdges ? 'haystack' : 'bezier',
        'arrow-scale': 0.7 } },
    ];
    for (const [state, color] of Object.entries(colors)) {
      rules.push({ selector: 'node[state = "' + state + '"]', style: { 'background-color': color } });
    }
    rules.push({ selector: 'node[state = "running"], node[state = "failed"], node[state = "dep_failed"], node[state = "canceled"], node[state = "rolled_back"]',
      style: { color: '#fff' } });
    return rules;
  }

  // toggle expands or collapses a group and draws the graph again.
  toggle(key) {
    const g = this.groups.get(key);
    if (!g || this.steps.size <= collapseAt) return;
    g.expanded = !g.expanded;
    this.render();
  }

  // select shows a step: expands its group if needed, marks and centres
  // it, and tells onSelect.
  select(id) {
    const s = this.steps.get(id);
    if (!s) return false;
    const g = this.groups.get(s.group);
    if (!g.expanded) {
      g.expanded = true;
      this.render();
    }
    this.mark(id, true);
    this.onSelect(id);
    return true;
  }

  mark(id, centre) {
    if (this.selected) this.cy.getElementById('s:' + this.selected).removeClass('selected');
    this.selected = id;
    const node = this.cy.getElementById('s:' + id);
    node.addClass('selected');
    if (centre && node.length) this.cy.animate({ center: { eles: node }, zoom: Math.max(this.cy.zoom(), 1), duration: 200 });
  }
}
