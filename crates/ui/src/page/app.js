// topospread ui: the cluster as domains, a pod's every node, what-ifs. Every value from
// the server goes in through textContent (never markup); nothing is fetched but /api/*.
"use strict";

const $ = (id) => document.getElementById(id);
const errors = [];
window.addEventListener("error", (e) => errors.push(String(e.message)));
window.addEventListener("unhandledrejection", (e) => errors.push(String(e.reason)));

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "style") e.style.cssText = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

// A JSON endpoint; a non-2xx answer throws its one-line error.
async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const r = await fetch(path, init);
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

const state = { cluster: null, simulation: null, explain: null, rows: [], sort: null, plan: null, capacity: null };

// ---- the picture's state in the URL: a link opens the same view, pod and what-if ----
const urlState = { view: "domains", pod: null, whatif: null, selector: null, strategy: null, workload: null };
function syncUrl() {
  const p = new URLSearchParams();
  if (urlState.view !== "domains") p.set("view", urlState.view);
  if (urlState.selector) p.set("selector", urlState.selector);
  if (urlState.pod) p.set("pod", urlState.pod);
  if (urlState.whatif) p.set("whatif", JSON.stringify(urlState.whatif));
  if (urlState.strategy && urlState.strategy !== "topospread") p.set("strategy", urlState.strategy);
  if (urlState.workload) p.set("workload", urlState.workload);
  // The browser test's switch stays, so its page reads what it asked for.
  const test = new URLSearchParams(location.search).get("selftest");
  if (test) p.set("selftest", test);
  const q = p.toString();
  history.replaceState(null, "", (q ? "?" + q : location.pathname) + location.hash);
}

// ---- pictures: bars with the maxSkew band, heatmaps, names cut in the middle ----
const SVG_NS = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, typeof v === "number" ? +v.toFixed(1) : v);
  for (const c of children) {
    if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

// The most characters a label shows; longer names lose their middle, never an end.
const LABEL_CHARS = 33;
function middle(name, max = LABEL_CHARS) {
  const s = [...String(name)];
  if (s.length <= max) return String(name);
  const head = Math.floor(max / 2), tail = max - 1 - head;
  return s.slice(0, head).join("") + "\u2026" + s.slice(s.length - tail).join("");
}
// An SVG label cut in the middle, the whole name in its <title> (shown on hover).
function svgLabel(name, attrs) {
  return svg("text", Object.assign({ class: "label" }, attrs), svg("title", {}, name), middle(name));
}
// An HTML label cut in the middle, the whole name as its title.
function htmlLabel(tag, name, attrs, max = LABEL_CHARS) {
  return el(tag, Object.assign({ title: name, class: "label" }, attrs), middle(name, max));
}

// A caption centred on x, or ending (starting) there when centring would cut it at
// the chart's right (left) edge.
function caption(cls, x, y, text, width) {
  const half = text.length * 3.3;
  let anchor = "middle";
  if (x + half > width - 2) { anchor = "end"; x = Math.min(x, width - 2); }
  else if (x - half < 2) { anchor = "start"; x = Math.max(x, 2); }
  return svg("text", { class: "caption " + cls, x, y, "text-anchor": anchor }, text);
}

// One constraint's domains as bars: the band from the global minimum to min + maxSkew
// shaded under them, the minimum's line, bars above the band red.
const BAR_ROW = 18, BAR_TOP = 30, BAR_W = 360, MAX_BARS = 60;
function barChart(counts, min, maxSkew) {
  const labelW = Math.min(240, Math.max(40, Math.min(LABEL_CHARS, Math.max(4, ...counts.map(([d]) => [...d].length))) * 7 + 8));
  const limit = min === null || maxSkew === null ? null : min + maxSkew;
  const vmax = Math.max(1, limit ?? 0, ...counts.map((c) => c[1]));
  const x = (v) => labelW + Math.max(0, v) * BAR_W / vmax;
  const width = labelW + BAR_W + 48, bottom = BAR_TOP + BAR_ROW * Math.max(1, counts.length);
  const chart = svg("svg", { class: "chart bars", width, height: bottom + 6, viewBox: `0 0 ${width} ${bottom + 6}` });
  if (limit !== null) {
    chart.append(svg("rect", { class: "band", x: x(min), y: BAR_TOP - 4, width: Math.max(1, x(limit) - x(min)), height: bottom - BAR_TOP + 4 },
      svg("title", {}, `min ${min} to min + maxSkew ${limit}`)));
  }
  counts.forEach(([d, n], i) => {
    const y = BAR_TOP + i * BAR_ROW;
    const cls = limit !== null && n > limit ? "bar over" : n === 0 ? "bar empty" : "bar";
    chart.append(svgLabel(d, { x: labelW - 4, y: y + 12, "text-anchor": "end" }),
      svg("rect", { class: cls, x: labelW, y, width: Math.max(1, x(n) - labelW), height: BAR_ROW - 4 }, svg("title", {}, `${d}: ${n}`)),
      svg("text", { x: x(n) + 3, y: y + 12 }, n));
  });
  const line = (cls, v, text, y) => {
    chart.append(svg("line", { class: cls, x1: x(v), x2: x(v), y1: BAR_TOP - 4, y2: bottom }), caption(cls, x(v), y, text, width));
  };
  if (min !== null) line("min", min, `min ${min}`, 11);
  if (limit !== null) line("limit", limit, `min + maxSkew = ${limit}`, 23);
  return chart;
}

// Cells per row and their side: 5,000 nodes in three zones fit one screen.
const CELLS = 80, CELL = 10;
function cellFill(n, vmax, limit) {
  if (n === null || n === undefined) return "#eceff3";
  if (limit !== null && n > limit) return "#d0573f";
  if (n <= 0) return "#dfe3ea";
  return `hsl(215,65%,${Math.round(78 - 45 * n / Math.max(1, vmax))}%)`;
}
// Domains (groups of named cells) as a heatmap: a heading per group (its name cut in
// the middle, pods, cells) over one small cell per member, its name and count on hover.
function heatmap(groups, limit, onHead) {
  const vmax = Math.max(1, ...groups.flatMap((g) => g.cells.map((c) => c.count || 0)));
  const box = el("div", { class: "heatmap" });
  for (const g of groups) {
    const head = el("div", { class: "heat-head" }, htmlLabel("b", g.name), ` ${g.count ?? "–"} pods · ${g.cells.length} ${g.unit}`);
    if (onHead) { head.classList.add("link"); head.addEventListener("click", () => onHead(g)); }
    const rows = Math.ceil(g.cells.length / CELLS);
    const chart = svg("svg", { class: "chart heat", width: CELLS * CELL, height: rows * CELL, viewBox: `0 0 ${CELLS * CELL} ${rows * CELL}` });
    g.cells.forEach((c, i) => {
      chart.append(svg("rect", { class: "cell", x: (i % CELLS) * CELL, y: Math.floor(i / CELLS) * CELL, width: CELL - 1, height: CELL - 1,
        fill: cellFill(c.count, vmax, limit) }, svg("title", {}, `${c.name}: ${c.count ?? "–"}`)));
    });
    box.append(head, chart);
  }
  return box;
}

// A constraint's picture: bars up to 60 domains, else one heatmap of its domains.
function constraintPicture(counts, min, maxSkew) {
  if (counts.length <= MAX_BARS) return barChart(counts, min, maxSkew);
  const limit = min === null || maxSkew === null ? null : min + maxSkew;
  return heatmap([{ name: `${counts.length} domains`, count: counts.reduce((a, c) => a + c[1], 0), unit: "domains",
    cells: counts.map(([name, count]) => ({ name, count })) }], limit);
}

// ---- views ---------------------------------------------------------------
const VIEWS = ["domains", "pods", "whatif", "rebalance", "capacity"];
document.querySelectorAll("nav button").forEach((b) => b.addEventListener("click", () => show(b.dataset.view)));
function show(view) {
  if (!VIEWS.includes(view)) view = "domains";
  urlState.view = view;
  syncUrl();
  document.querySelectorAll("nav button").forEach((b) => b.classList.toggle("on", b.dataset.view === view));
  for (const id of VIEWS) $(id).hidden = id !== view;
  if (view === "pods") drawRows();
  if (view === "rebalance" && !state.plan) plan($("strategy").value).catch(() => {});
  if (view === "capacity") capacityPlan().catch(() => {});
}

// ---- domains -------------------------------------------------------------
function heat(count, max) {
  if (count === null || count === undefined) return "#eceff3";
  const t = max > 0 ? count / max : 0;
  return `hsl(${210 - 170 * t}, 70%, ${92 - 35 * t}%)`;
}

function drawCluster(c) {
  state.cluster = c;
  $("marked").textContent = "marked: " + c.show.marked;
  const groups = $("groups");
  groups.replaceChildren();
  // Each constraint of the first constrained pod as PodTopologySpread counts it; with a
  // selector of one's own, each topology key's marked pods.
  const constraints = (c.show.spread && c.show.spread.constraints) || [];
  let nodeLimit = null;
  for (const k of constraints) {
    const counts = Object.entries(k.counts);
    const max = Math.max(0, ...counts.map((x) => x[1]));
    const min = counts.length ? max - k.skew : null;
    if (k.topology_key === c.node_key && min !== null) nodeLimit = min + k.max_skew;
    groups.append(el("figure", { class: "constraint" }, constraintPicture(counts, min, k.max_skew),
      el("figcaption", {}, `${k.topology_key} maxSkew=${k.max_skew} ${k.when_unsatisfiable} ${k.selector} · ${counts.length} domains · global minimum ${min ?? "–"} · skew ${k.skew}` +
        (min === null ? "" : ` · shaded: ${min} to min + maxSkew = ${min + k.max_skew}`))));
  }
  if (!constraints.length) {
    for (const d of c.show.domains) {
      const counts = Object.entries(d.counts);
      // The nodes' own key is the heatmap below.
      if (counts.length > MAX_BARS && d.topology_key === c.node_key) continue;
      const min = counts.length ? Math.min(...counts.map((x) => x[1])) : null;
      groups.append(el("figure", { class: "constraint" }, constraintPicture(counts, min, null),
        el("figcaption", {}, `${d.topology_key} · ${counts.length} domains · skew ${d.skew}`)));
    }
  }
  const nodes = c.groups.reduce((n, g) => n + g.nodes.length, 0);
  groups.append(el("h3", {}, `${nodes} nodes by ${c.group_key || "node"}, each cell its ${c.node_key || "node"} domain's marked pods`),
    heatmap(c.groups.map((g) => ({ name: g.domain, count: g.count, unit: "nodes", cells: g.nodes, group: g })), nodeLimit, (h) => drill(h.group)));
  groups.lastChild.id = "node-heat";
  $("drill-title").hidden = true;
  $("drill").replaceChildren();
}

// A zone's nodes, drawn in chunks so thousands of tiles never block the page.
function drill(g) {
  const c = state.cluster;
  $("drill-title").hidden = false;
  $("drill-title").textContent = `${g.domain}: ${g.nodes.length} nodes (${c.node_key || "node"} counts)`;
  const box = $("drill");
  box.replaceChildren();
  const max = Math.max(0, ...g.nodes.map((n) => n.count || 0));
  let i = 0;
  const step = () => {
    const frag = document.createDocumentFragment();
    for (const end = Math.min(i + 500, g.nodes.length); i < end; i++) {
      const n = g.nodes[i];
      frag.append(el("div", { class: "tile", style: `background:${heat(n.count, max)}`, title: `${n.name}: ${n.count ?? "–"}` },
        `${middle(n.name)} ${n.count ?? "–"}`));
    }
    box.append(frag);
    if (i < g.nodes.length) requestAnimationFrame(step);
  };
  step();
}

$("selector-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const s = $("selector").value.trim();
  urlState.selector = s || null;
  syncUrl();
  try {
    drawCluster(await api("/api/cluster" + (s ? "?selector=" + encodeURIComponent(s) : "")));
  } catch (err) {
    $("marked").textContent = err.message;
  }
});

// ---- pods ----------------------------------------------------------------
function drawSimulation(s) {
  state.simulation = s;
  $("summary").textContent = `${s.scheduled} scheduled, ${s.pending} pending` +
    ((s.refused || []).length ? `, ${s.refused.length} refused` : "");
  fillPods();
  const pending = s.pods.filter((p) => !p.node);
  $("pending").replaceChildren(el("h3", {}, `Pending (${pending.length})`),
    ...pending.slice(0, 200).map((p) => el("div", {}, el("b", {}, `${p.namespace}/${p.pod}`), ": ", p.message || "")));
}

function fillPods() {
  const f = $("pod-filter").value.toLowerCase();
  const list = $("pod-list");
  list.replaceChildren();
  const frag = document.createDocumentFragment();
  let shown = 0;
  for (const p of state.simulation.pods) {
    const ref = `${p.namespace}/${p.pod}`;
    if (f && !ref.toLowerCase().includes(f)) continue;
    if (++shown > 2000) break;
    frag.append(el("option", { value: ref }, `${ref} → ${p.node || "Pending"}`));
  }
  list.append(frag);
}
$("pod-filter").addEventListener("input", fillPods);
$("pod-list").addEventListener("change", () => pick($("pod-list").value));

// The first rejecting Filter plugin, or feasible.
function verdict(n) {
  const bad = n.filters.find((f) => f.code !== "Success" && f.code !== "Skip");
  return bad ? `${bad.plugin}: ${bad.reasons.join("; ") || bad.code}` : "feasible";
}

async function pick(ref) {
  const t0 = performance.now();
  urlState.pod = ref;
  syncUrl();
  $("outcome").textContent = `explaining ${ref}…`;
  const x = await api("/api/explain?pod=" + encodeURIComponent(ref));
  state.explain = x;
  const plugins = [];
  for (const n of x.nodes) for (const s of n.scores) if (!plugins.includes(s.plugin)) plugins.push(s.plugin);
  state.plugins = plugins;
  state.rows = x.nodes.map((n) => {
    const by = Object.fromEntries(n.scores.map((s) => [s.plugin, s]));
    const v = verdict(n);
    return { node: n.node, verdict: v, feasible: v === "feasible", total: n.total, by,
      text: (n.node + " " + v).toLowerCase() };
  });
  $("outcome").replaceChildren(el("h3", {}, x.pod), outcomeText(x.outcome),
    ...(x.context || []).map((c) => el("div", {}, c)));
  drawSpread(x);
  drawHead();
  state.sort = null;
  applyFilter();
  state.pickMs = performance.now() - t0;
  return state.pickMs;
}

// `{scheduled: NODE}` or `{pending: MESSAGE}`.
function outcomeText(o) {
  if (o && o.scheduled !== undefined) return el("div", { class: "ok" }, "scheduled on " + o.scheduled);
  return el("div", { class: "bad" }, "pending: " + (o ? o.pending : ""));
}

function drawSpread(x) {
  const box = $("spread");
  box.replaceChildren();
  for (const c of x.spread) {
    const counts = c.counts.map(([d, n]) => [d, n]);
    const max = Math.max(0, ...counts.map((k) => k[1]));
    // The global minimum is what the skew is measured from (minDomains applied).
    const min = counts.length && c.skew !== null && c.skew !== undefined ? max - c.skew : null;
    const maxSkew = min !== null ? c.max_skew : null;
    box.append(el("figure", { class: "constraint" }, constraintPicture(counts, min, maxSkew),
      el("figcaption", {}, `${c.constraint} · ${c.counts.length} domains · global minimum ${min ?? "–"} · skew ${c.skew ?? "–"}`)));
  }
}

// ---- the node table: sortable, filterable, virtualized -------------------
const ROW = 22;
function columns() {
  const cols = [
    { key: "node", label: "Node", get: (r) => r.node },
    { key: "verdict", label: "Filter verdict", get: (r) => r.verdict },
  ];
  for (const p of state.plugins || []) {
    cols.push({ key: "p:" + p, label: `${p} raw/norm/wtd`, num: true,
      get: (r) => (r.by[p] ? r.by[p].weighted : null),
      show: (r) => (r.by[p] ? `${r.by[p].raw}/${r.by[p].normalized}/${r.by[p].weighted}` : "") });
  }
  cols.push({ key: "total", label: "Final score", num: true, get: (r) => r.total ?? null });
  return cols;
}
function template() {
  return `minmax(10em,1.4fr) minmax(12em,2fr) ${(state.plugins || []).map(() => "minmax(7em,1fr)").join(" ")} 6em`;
}
function drawHead() {
  const head = $("node-head");
  head.style.gridTemplateColumns = template();
  head.replaceChildren(...columns().map((c) => el("span", { "data-key": c.key, onclick: () => sortBy(c.key) },
    c.label + (state.sort && state.sort.key === c.key ? (state.sort.desc ? " ▼" : " ▲") : ""))));
}
function sortBy(key) {
  const desc = state.sort && state.sort.key === key ? !state.sort.desc : true;
  state.sort = { key, desc };
  const col = columns().find((c) => c.key === key);
  const dir = desc ? -1 : 1;
  state.view.sort((a, b) => {
    const x = col.get(a), y = col.get(b);
    if (x === y) return a.node < b.node ? -1 : 1;
    if (x === null) return 1;
    if (y === null) return -1;
    return (x < y ? -1 : 1) * dir;
  });
  drawHead();
  drawRows();
}
function applyFilter() {
  const f = $("node-filter").value.toLowerCase();
  state.view = f ? state.rows.filter((r) => r.text.includes(f) || Object.keys(r.by).some((p) => p.toLowerCase().includes(f))) : state.rows.slice();
  if (state.sort) sortBy(state.sort.key), sortBy(state.sort.key);
  const feasible = state.rows.filter((r) => r.feasible).length;
  $("node-count").textContent = `${state.view.length} of ${state.rows.length} nodes · ${feasible} feasible`;
  $("node-rows").scrollTop = 0;
  drawRows();
}
$("node-filter").addEventListener("input", applyFilter);
$("node-rows").addEventListener("scroll", () => requestAnimationFrame(drawRows));

// Only the rows in sight exist in the DOM: 5,000 nodes scroll like 30.
function drawRows() {
  const box = $("node-rows");
  const rows = state.view || [];
  $("node-spacer").style.height = rows.length * ROW + "px";
  const first = Math.max(0, Math.floor(box.scrollTop / ROW) - 5);
  const last = Math.min(rows.length, first + Math.ceil((box.clientHeight || 600) / ROW) + 10);
  const cols = columns();
  const tpl = template();
  const frag = document.createDocumentFragment();
  for (let i = first; i < last; i++) {
    const r = rows[i];
    frag.append(el("div", { class: "grid row-node", style: `top:${i * ROW}px;grid-template-columns:${tpl}` },
      ...cols.map((c) => el("span", { class: c.key === "verdict" ? (r.feasible ? "ok" : "bad") : "", title: c.key === "verdict" ? r.verdict : "" },
        c.show ? c.show(r) : (c.get(r) ?? "")))));
  }
  box.replaceChildren($("node-spacer"), frag);
}

// ---- what-if -------------------------------------------------------------
function whatIfBody(form) {
  const v = (n) => form.elements[n].value.trim();
  const body = {};
  if (v("scale")) body.scale = [v("scale")];
  if (v("drain")) body.drain = [v("drain")];
  if (v("lose")) body.lose = [v("lose")];
  if (v("workload")) {
    const c = { workload: v("workload"), index: Number(v("index") || 0) };
    if (v("maxSkew") !== "") c.maxSkew = Number(v("maxSkew"));
    if (v("whenUnsatisfiable")) c.whenUnsatisfiable = v("whenUnsatisfiable");
    body.constraints = [c];
  }
  return body;
}

async function runWhatIf(body) {
  $("whatif-error").hidden = true;
  $("whatif-result").replaceChildren();
  try {
    const r = await api("/api/whatif", body);
    urlState.whatif = body;
    syncUrl();
    drawWhatIf(r);
    return r;
  } catch (err) {
    $("whatif-error").hidden = false;
    $("whatif-error").textContent = "Refused: " + err.message;
    throw err;
  }
}
$("whatif-form").addEventListener("submit", (e) => {
  e.preventDefault();
  runWhatIf(whatIfBody(e.target)).catch(() => {});
});

// One side of the what-if: the counts per domain; with `other` (the cluster as
// loaded), each domain's change from it too.
function side(title, s, other) {
  const box = el("div", {}, el("h3", {}, title), el("div", {}, `${s.scheduled} scheduled, ${s.pending} pending`));
  for (const w of s.workloads) {
    const o = other && other.workloads.find((x) => x.workload === w.workload);
    box.append(el("h4", {}, `${w.workload}: ${w.pods} pods, ${w.scheduled} scheduled, ${w.pending} pending`));
    w.constraints.forEach((c, i) => {
      const oc = o && o.constraints[i];
      const rows = Object.entries(c.counts).slice(0, 200).map(([d, n]) => {
        const cells = [htmlLabel("td", d, {}, 48), el("td", { class: "count" }, n)];
        if (other) {
          const before = oc ? oc.counts[d] ?? 0 : undefined;
          const delta = before === undefined ? "" : n - before;
          cells.push(el("td", { class: "change " + (delta > 0 ? "up" : delta < 0 ? "down" : "") }, delta === "" || delta === 0 ? "" : (delta > 0 ? "+" : "") + delta));
        }
        return el("tr", {}, ...cells);
      });
      const head = [el("th", {}, "domain"), el("th", {}, "pods")];
      if (other) head.push(el("th", {}, "change"));
      box.append(el("div", {}, `${c.topology_key} maxSkew=${c.max_skew} ${c.when_unsatisfiable} · skew `, el("b", { class: "skew" }, c.skew)),
        el("table", {}, el("tr", {}, ...head), ...rows));
    });
  }
  return box;
}
function drawWhatIf(r) {
  $("whatif-result").replaceChildren(side("Before (as loaded)", r.before, null), side("After", r.after, r.before));
}
// A what-if read from a link: its fields back in the form.
function fillWhatIfForm(body) {
  const f = $("whatif-form").elements;
  f.scale.value = (body.scale || []).join(" ");
  f.drain.value = (body.drain || []).join(" ");
  f.lose.value = (body.lose || []).join(" ");
  const c = (body.constraints || [])[0];
  f.workload.value = c ? c.workload : "";
  f.index.value = c ? c.index || 0 : 0;
  f.maxSkew.value = c && c.maxSkew !== undefined ? c.maxSkew : "";
  f.whenUnsatisfiable.value = c && c.whenUnsatisfiable ? c.whenUnsatisfiable : "";
}

// ---- rebalance -------------------------------------------------------------
// The tags and attributes the server's arrows (rebalance -o html's chart) are drawn
// with; anything else is refused, so nothing scriptable enters the page.
const SVG_TAGS = ["svg", "title", "defs", "marker", "path", "text", "rect", "line"];
const SVG_ATTRS = /^(class|width|height|viewBox|role|id|x|y|x1|x2|y1|y2|rx|d|fill|refX|refY|markerUnits|markerWidth|markerHeight|orient|stroke-width|marker-end|text-anchor)$/;

// A chart's markup as an SVG element: parsed inert (DOMParser runs no script), checked
// against the tags and attributes above, then adopted into the page.
function svgElement(markup) {
  const body = new DOMParser().parseFromString(markup, "text/html").body;
  const svg = body.firstElementChild;
  if (!svg || body.childElementCount !== 1 || svg.localName !== "svg") throw new Error("a chart that is not one <svg>");
  for (const e of [svg, ...svg.querySelectorAll("*")]) {
    if (!SVG_TAGS.includes(e.localName)) throw new Error(`chart: unexpected <${e.localName}>`);
    for (const a of e.attributes) {
      if (!SVG_ATTRS.test(a.name) || (a.name === "marker-end" && !/^url\(#[\w-]+\)$/.test(a.value))) {
        throw new Error(`chart: unexpected attribute ${a.name}`);
      }
    }
  }
  return document.importNode(svg, true);
}

// The plan for `strategy`, asked once while it is the one shown.
function plan(strategy) {
  urlState.strategy = strategy;
  syncUrl();
  if (state.plan && state.plan.strategy === strategy) return state.plan.promise;
  const promise = fetchPlan(strategy);
  state.plan = { strategy, promise };
  promise.catch(() => {
    if (state.plan && state.plan.promise === promise) state.plan = null;
  });
  return promise;
}

// The report, then its moves between domains (the server plans once per strategy, so
// the second request takes the kept plan), drawn.
async function fetchPlan(strategy) {
  $("rebalance-error").hidden = true;
  $("rebalance-summary").textContent = `planning (${strategy})…`;
  try {
    const q = "?strategy=" + encodeURIComponent(strategy);
    const report = await api("/api/rebalance" + q);
    const charts = await api("/api/rebalance/moves" + q);
    drawRebalance(report, charts);
    return { report, charts };
  } catch (err) {
    $("rebalance-summary").textContent = "";
    $("rebalance-error").hidden = false;
    $("rebalance-error").textContent = "Rebalance failed: " + err.message;
    throw err;
  }
}
$("rebalance-form").addEventListener("submit", (e) => {
  e.preventDefault();
  plan($("strategy").value).catch(() => {});
});

function drawRebalance(r, charts) {
  const before = r.violation_before, after = r.violation_after;
  $("rebalance-summary").textContent = `${r.strategy}: ${r.moves.length} move(s), ${r.rounds} round(s) · excess skew DoNotSchedule ${before.hard} → ${after.hard}, ScheduleAnyway ${before.soft} → ${after.soft} · ${r.final_violations} DoNotSchedule constraint(s) violated after the plan` +
    (r.pending ? ` · ${r.pending} replacement(s) Pending` : "");
  $("rebalance-charts").replaceChildren(...charts.map((c) => el("figure", {}, svgElement(c.svg),
    el("figcaption", {}, `${c.moves.length} move(s) by ${c.topology_key}: from the domain a pod is evicted from to the one its replacement lands in`))));
  if (!r.moves.length) $("rebalance-charts").append(el("p", {}, "No move: the plan leaves every pod where it is."));
  $("rebalance-unresolved").replaceChildren(...(r.unresolved.length ? [el("h3", {}, `Unresolved (${r.unresolved.length})`)] : []),
    ...r.unresolved.map((u) => el("div", { class: "bad" }, `${u.workload}: ${u.constraint}: ${u.why}`)));
  const within = charts.reduce((n, c) => n + c.moves.filter((m) => m.from === m.to).length, 0);
  if (within) $("rebalance-charts").append(el("p", { class: "muted" }, `${within} move(s) within one domain are not drawn: they leave its count unchanged.`));
  drawPlanSpread(r);
  drawMoves(r, charts);
}

// Each workload's constraints: matching pods per domain before and after the plan.
function drawPlanSpread(r) {
  const box = $("rebalance-spread");
  box.replaceChildren();
  r.before.forEach((w, i) => {
    const a = r.after[i];
    const side = el("div", {}, el("h4", {}, `${w.namespace} ${w.workload}`));
    w.constraints.forEach((c, j) => {
      const ac = a && a.constraints[j];
      const rows = Object.entries(c.counts).slice(0, 200).map(([d, n]) => {
        const m = ac ? ac.counts[d] : undefined;
        const delta = m === undefined ? "" : m - n;
        return el("tr", {}, el("td", {}, d), el("td", { class: "count" }, n), el("td", { class: "count" }, m ?? ""),
          el("td", { class: delta > 0 ? "up" : delta < 0 ? "down" : "" }, delta === "" || delta === 0 ? "" : (delta > 0 ? "+" : "") + delta));
      });
      side.append(el("div", {}, `${c.constraint} · skew ${c.skew} → `, el("b", { class: "skew" }, ac ? ac.skew : "–")),
        el("table", {}, el("tr", {}, el("th", {}, "domain"), el("th", {}, "before"), el("th", {}, "after"), el("th", {}, "Δ")), ...rows));
    });
    box.append(side);
  });
}

// Every move: the pod, its nodes, their domains per topology key, and the reason.
function drawMoves(r, charts) {
  const table = $("moves-table");
  $("moves-title").hidden = table.hidden = r.moves.length === 0;
  $("moves-title").textContent = `Moves (${r.moves.length})`;
  const head = el("tr", {}, el("th", {}, "#"), el("th", {}, "Pod"), el("th", {}, "From"), el("th", {}, "To"),
    ...charts.map((c) => el("th", {}, c.topology_key)), el("th", {}, "Reason"));
  const frag = document.createDocumentFragment();
  r.moves.forEach((m, i) => {
    frag.append(el("tr", { class: "move-row" }, el("td", { class: "count" }, i + 1), el("td", {}, `${m.namespace}/${m.pod}`),
      el("td", {}, m.from), el("td", {}, m.to),
      ...charts.map((c) => el("td", {}, c.moves[i] ? `${c.moves[i].from} → ${c.moves[i].to}` : "")), el("td", {}, m.reason)));
  });
  table.replaceChildren(head, frag);
}

// ---- capacity ----------------------------------------------------------------
// The plan for `ui --node-template`, asked once: the nodes added per zone and each
// workload's spread after the verified run, as `capacity -o html` draws them.
function capacityPlan() {
  if (!state.capacity) {
    state.capacity = fetchCapacity();
    state.capacity.catch(() => { state.capacity = null; });
  }
  return state.capacity;
}

async function fetchCapacity() {
  $("capacity-error").hidden = true;
  $("capacity-summary").textContent = "planning…";
  try {
    const c = await api("/api/capacity");
    drawCapacity(c);
    return c;
  } catch (err) {
    $("capacity-summary").textContent = "";
    $("capacity-error").hidden = false;
    $("capacity-error").textContent = "Capacity: " + err.message;
    throw err;
  }
}

function capacityFigure(f) {
  return el("figure", { class: "constraint" }, svgElement(f.svg), el("figcaption", {}, f.caption));
}

function drawCapacity(c) {
  const r = c.report;
  $("capacity-summary").textContent = `${r.pending_before} pod(s) Pending · add ${r.nodes} node(s), price ${r.price} · ` +
    (r.exact ? "the exact minimum (exhaustive search)" : `no fewer than ${r.lower_bound} can do`) +
    ` · checked by simulation: ${r.placed.length} placed, ${r.pending_after} Pending · ${r.simulations} simulation(s)`;
  const zones = c.figures.filter((f) => f.title === "nodes added per zone");
  $("capacity-zones").replaceChildren(...zones.map(capacityFigure));
  if (!zones.length) $("capacity-zones").append(el("p", {}, "No node to add."));
  const adds = $("capacity-additions");
  adds.hidden = r.additions.length === 0;
  adds.replaceChildren(el("tr", {}, el("th", {}, "Template"), el("th", {}, "Zone"), el("th", {}, "Nodes"), el("th", {}, "Names")),
    ...r.additions.map((a) => el("tr", { class: "addition" }, el("td", {}, a.template), el("td", {}, a.zone || "-"),
      el("td", { class: "count" }, a.count), el("td", {}, a.nodes.length > 2 ? `${a.nodes[0]} … ${a.nodes[a.nodes.length - 1]}` : a.nodes.join(", ")))));
  const pick = $("capacity-workload");
  const names = [...new Set(r.workloads.map((w) => w.workload))];
  pick.replaceChildren(el("option", { value: "" }, "every workload"), ...names.map((n) => el("option", { value: n }, n)));
  if (urlState.workload && names.includes(urlState.workload)) pick.value = urlState.workload;
  drawCapacitySpread(c);
  const greedy = $("capacity-greedy");
  $("capacity-greedy-title").hidden = greedy.hidden = r.greedy.length === 0;
  greedy.replaceChildren(el("tr", {}, el("th", {}, "Template"), el("th", {}, "Nodes"), el("th", {}, "Pending after"), el("th", {}, "Against topospread")),
    ...r.greedy.map((g) => el("tr", {}, el("td", {}, g.template), el("td", { class: "count" }, g.nodes + (g.capped ? " (max-count)" : "")),
      el("td", { class: "count" + (g.pending_after ? " bad" : "") }, g.pending_after),
      el("td", {}, g.pending_after > r.pending_after ? `leaves ${g.pending_after - r.pending_after} pod(s) Pending`
        : g.nodes > r.nodes ? `${g.nodes - r.nodes} node(s) more` : "same outcome"))));
  $("capacity-unplaceable").replaceChildren(...(r.unplaceable.length ? [el("h3", {}, `Placed by no number of nodes (${r.unplaceable.length})`)] : []),
    ...r.unplaceable.map((u) => el("div", { class: "bad" }, `${u.pod}: ${u.reason}`)));
}

function drawCapacitySpread(c) {
  const only = $("capacity-workload").value;
  const box = $("capacity-spread");
  box.replaceChildren();
  for (const f of c.figures) {
    if (f.title === "nodes added per zone" || (only && f.title !== only)) continue;
    box.append(el("div", {}, el("h4", {}, f.title), capacityFigure(f)));
  }
}

$("capacity-workload").addEventListener("change", () => {
  urlState.workload = $("capacity-workload").value || null;
  syncUrl();
  capacityPlan().then(drawCapacitySpread).catch(() => {});
});

// ?selftest=capacity: opens the Capacity view (as a link does) and reads what it drew.
async function selftestCapacity() {
  const out = { ok: false, steps: {}, errors };
  try {
    const c = await capacityPlan();
    out.steps.view = VIEWS.find((v) => !$(v).hidden);
    out.steps.nodes = c.report.nodes;
    out.steps.zoneBars = [...document.querySelectorAll("#capacity-zones svg rect.bar")].length;
    out.steps.zoneLabels = [...document.querySelectorAll("#capacity-zones svg text[text-anchor=end]")].map((t) => t.lastChild.textContent);
    out.steps.additions = [...document.querySelectorAll("#capacity-additions tr.addition")].map((tr) => [...tr.children].slice(0, 3).map((td) => td.textContent));
    out.steps.spreadCharts = document.querySelectorAll("#capacity-spread svg").length;
    out.steps.bands = document.querySelectorAll("#capacity-spread svg rect.band").length;
    out.steps.workload = $("capacity-workload").value;
    out.steps.greedyRows = document.querySelectorAll("#capacity-greedy tr").length - 1;
    out.steps.summary = $("capacity-summary").textContent;
    out.steps.url = location.search;
    out.steps.clipped = clipped();
    if (out.steps.zoneBars === 0) throw new Error("nodes per zone not drawn");
    out.ok = errors.length === 0;
  } catch (err) {
    out.failure = err.message;
  }
  $("selftest").textContent = JSON.stringify(out);
}

// ---- start, and the self-test (?selftest=1) the browser test reads -------
async function start() {
  const params = new URLSearchParams(location.search);
  urlState.selector = params.get("selector");
  if (urlState.selector) $("selector").value = urlState.selector;
  const cluster = api("/api/cluster" + (urlState.selector ? "?selector=" + encodeURIComponent(urlState.selector) : ""));
  const [c, s] = await Promise.all([cluster, api("/api/simulation")]);
  drawCluster(c);
  drawSimulation(s);
  const wl = s.workloads[0];
  if (wl) document.querySelector("#whatif-form [name=workload]").placeholder = `${wl.kind.toLowerCase()}/${wl.namespace}/${wl.name}`;
  if (params.get("strategy")) $("strategy").value = params.get("strategy");
  urlState.workload = params.get("workload");
  show(params.get("view") || "domains");
  if (params.get("drill")) drill(c.groups.find((g) => g.domain === params.get("drill")) || c.groups[0]);
  if (params.get("pod")) {
    $("pod-list").value = params.get("pod");
    await pick(params.get("pod")).catch((err) => { $("outcome").textContent = err.message; });
  }
  if (params.get("whatif")) {
    let body = null;
    try {
      body = JSON.parse(params.get("whatif"));
    } catch (err) {
      $("whatif-error").hidden = false;
      $("whatif-error").textContent = "The link's what-if is not JSON: " + err.message;
    }
    if (body) {
      fillWhatIfForm(body);
      await runWhatIf(body).catch(() => {});
    }
  }
  const test = params.get("selftest");
  if (test === "rebalance") await selftestRebalance();
  else if (test === "capacity") await selftestCapacity();
  else if (test === "link") selftestLink();
  else if (test === "pictures") selftestPictures();
  else if (test) await selftest();
}

// Every SVG text inside its chart: its box within the chart's width and height.
function clipped() {
  const out = [];
  for (const t of document.querySelectorAll("svg.chart text")) {
    const chart = t.ownerSVGElement;
    if (!chart || chart.closest("[hidden]")) continue;
    const b = t.getBBox(), w = chart.viewBox.baseVal.width, h = chart.viewBox.baseVal.height;
    if (b.x < -0.5 || b.y < -0.5 || b.x + b.width > w + 0.5 || b.y + b.height > h + 0.5) out.push(t.textContent);
  }
  return out;
}

// ?selftest=link: what the page opened from its URL.
function selftestLink() {
  const out = { ok: false, steps: {}, errors };
  out.steps.view = VIEWS.find((v) => !$(v).hidden);
  out.steps.pod = state.explain ? state.explain.pod : null;
  out.steps.nodeRows = state.rows.length;
  out.steps.whatifDrawn = document.querySelectorAll("#whatif-result table").length;
  out.steps.whatifScale = $("whatif-form").elements.scale.value;
  out.steps.before = [...document.querySelectorAll("#whatif-result > div:first-child td.count")].map((t) => Number(t.textContent));
  out.steps.beforeHasChange = document.querySelectorAll("#whatif-result > div:first-child td.change").length;
  out.steps.afterChanges = [...document.querySelectorAll("#whatif-result > div:last-child td.change")].map((t) => t.textContent).filter((t) => t);
  out.steps.url = location.search;
  out.ok = errors.length === 0;
  $("selftest").textContent = JSON.stringify(out);
}

// ?selftest=pictures: the Domains view's bars and heatmap, labels, captions.
function selftestPictures() {
  const out = { ok: false, steps: {}, errors };
  const q = (sel) => document.querySelectorAll(sel);
  out.steps.barCharts = q("#groups svg.bars").length;
  out.steps.bars = q("#groups svg.bars rect.bar").length;
  out.steps.bands = q("#groups svg.bars rect.band").length;
  out.steps.minLines = q("#groups svg.bars line.min").length;
  out.steps.heatCells = q("#node-heat svg.heat rect.cell").length;
  out.steps.heatGroups = q("#node-heat .heat-head").length;
  out.steps.labels = [...q("#groups svg text.label, #groups .heat-head b.label")].map((t) => t.lastChild.textContent);
  out.steps.titles = [...q("#groups svg text.label title, #groups .heat-head b.label")].map((t) => t.title || t.textContent);
  out.steps.clipped = clipped();
  out.steps.cellTitle = (q("#groups svg.heat rect.cell title")[0] || {}).textContent;
  out.ok = errors.length === 0;
  $("selftest").textContent = JSON.stringify(out);
}

// ?selftest=rebalance: opens the Rebalance view and reads what it drew.
async function selftestRebalance() {
  const out = { ok: false, steps: {}, errors };
  try {
    show("rebalance");
    const { report, charts } = await plan("topospread");
    out.steps.moves = report.moves.length;
    out.steps.keys = charts.map((c) => c.topology_key);
    out.steps.arrows = document.querySelectorAll("#rebalance-charts svg line.move").length;
    out.steps.arrowTitles = [...document.querySelectorAll("#rebalance-charts svg line.move title")].map((t) => t.textContent);
    out.steps.moveRows = document.querySelectorAll("#moves-table tr.move-row").length;
    out.steps.summary = $("rebalance-summary").textContent;
    if (out.steps.arrows === 0 || out.steps.moveRows !== report.moves.length) throw new Error("moves not drawn");
    out.ok = errors.length === 0;
  } catch (err) {
    out.failure = err.message;
  }
  $("selftest").textContent = JSON.stringify(out);
}

async function selftest() {
  const out = { ok: false, steps: {}, errors };
  const fail = (m) => { throw new Error(m); };
  try {
    const s = state.simulation;
    out.steps.nodes = state.cluster.groups.reduce((n, g) => n + g.nodes.length, 0);
    out.steps.groups = state.cluster.groups.length;
    out.steps.heatCells = document.querySelectorAll("#node-heat svg.heat rect.cell").length;
    out.steps.heatGroups = document.querySelectorAll("#node-heat .heat-head").length;
    out.steps.constraints = ((state.cluster.show.spread || {}).constraints || []).map((k) =>
      `${k.topology_key} maxSkew=${k.max_skew} ${Object.keys(k.counts).length} domains skew ${k.skew}`);
    out.steps.barCharts = document.querySelectorAll("#groups svg.bars").length;
    out.steps.bands = document.querySelectorAll("#groups svg.bars rect.band").length;
    out.steps.clipped = clipped();
    const pod = s.pods[0] || fail("no pod to pick");
    show("pods");
    const ref = `${pod.namespace}/${pod.pod}`;
    $("pod-list").value = ref;
    out.steps.pickMs = Math.round(await pick(ref));
    out.steps.pod = ref;
    out.steps.rows = state.rows.length;
    out.steps.domRows = document.querySelectorAll("#node-rows .row-node").length;
    if (out.steps.rows !== state.explain.nodes.length || out.steps.domRows === 0) fail("node table not rendered");
    document.querySelector('#node-head [data-key="total"]').click();
    const totals = state.view.map((r) => r.total ?? -Infinity);
    out.steps.sorted = totals.every((t, i) => i === 0 || totals[i - 1] >= t);
    if (!out.steps.sorted) fail("not sorted by final score");
    out.steps.firstRowTotal = document.querySelector("#node-rows .row-node span:last-child").textContent;
    const w = s.workloads.find((x) => ["deployment", "replicaset", "statefulset"].includes(x.kind.toLowerCase())) || fail("no workload to scale");
    show("whatif");
    const key = `${w.kind.toLowerCase()}/${w.namespace}/${w.name}`;
    try {
      await runWhatIf({ constraints: [{ workload: key, index: 0, maxSkew: 0 }] });
      out.steps.refusal = "not refused";
    } catch (err) {
      out.steps.refusal = err.message;
    }
    if (!/maxSkew/.test(out.steps.refusal)) fail("maxSkew 0 not refused: " + out.steps.refusal);
    const r = await runWhatIf({ scale: [`${key}=${w.pods * 2}`] });
    const pods = (v) => { const x = v.workloads.find((y) => y.workload === key); return x ? x.pods : -1; };
    out.steps.whatIfPods = [pods(r.before), pods(r.after)];
    if (pods(r.before) === pods(r.after)) fail("what-if changed nothing");
    out.steps.whatIfCells = document.querySelectorAll("#whatif-result td.count").length;
    out.steps.url = location.search;
    out.ok = errors.length === 0;
  } catch (err) {
    out.failure = err.message;
  }
  $("selftest").textContent = JSON.stringify(out);
}

start().catch((err) => {
  errors.push(err.message);
  $("summary").textContent = "error: " + err.message;
  $("selftest").textContent = JSON.stringify({ ok: false, failure: err.message, errors });
});
