// supermemory ui, the Graph page: memories and their typed links, laid out in the page (no library).
// Loaded before app.js, whose helpers (h, s, put, view, api, state, the colours) it calls at run time;
// memory text reaches the picture through text nodes only, as in app.js.
"use strict";

// --- Graph --------------------------------------------------------------------------------------

async function graphPage() {
  const root = view();
  const data = await api("/api/graph", { namespace: state.namespace });
  put(root, h("h1", {}, "Graph"), h("p", { class: "muted", id: "graph-note" }, graphNote(data) +
    " Arrows point from a memory to the one it supersedes, refines, contradicts, depends on or is related to." +
    " Scroll to zoom, drag to move, click a memory to open it."));
  if (!data.nodes.length) {
    root.appendChild(h("p", {}, "No links yet: agents record them with memory_link (CLI: supermemory link)."));
    return;
  }
  const legend = h("p", { class: "legend" }, Object.entries(RELATION_COLORS).map(([rel, color]) => {
    const swatch = h("span", { class: "swatch" });
    swatch.style.background = color;
    return h("span", { class: "legend-item" }, swatch, rel);
  }), [...new Set(data.nodes.map((n) => n.kind))].sort().map((kind) => {
    const dot = h("span", { class: "dot" });
    dot.style.background = KIND_COLORS[kind] || "#777";
    return h("span", { class: "legend-item" }, dot, kind);
  }));
  const width = 1000;
  const height = 560;
  const positions = layout(data.nodes, data.edges, width, height);
  const scene = s("g", { class: "scene" });
  // One arrowhead per relation colour: a link points from its source to its target (src supersedes dst).
  const defs = s("defs", {}, Object.entries({ ...RELATION_COLORS, other: "#999" }).map(([rel, color]) =>
    s("marker", { id: "arrow-" + rel, viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 11, markerHeight: 11,
      markerUnits: "userSpaceOnUse", orient: "auto" }, s("path", { d: "M0,0 L10,5 L0,10 z", fill: color }))));
  const svg = s("svg", { id: "graph", viewBox: `0 0 ${width} ${height}`, role: "img" }, s("title", {}, "memory graph"),
    defs, scene);
  for (const e of data.edges) {
    const a = positions.get(e.src);
    const b = positions.get(e.dst);
    const d = Math.max(1e-9, Math.hypot(b.x - a.x, b.y - a.y));
    const end = Math.max(0, d - NODE_RADIUS - 2) / d;   // the arrow's tip stops at the target's rim
    const rel = e.relation in RELATION_COLORS ? e.relation : "other";
    scene.appendChild(s("line", { x1: a.x, y1: a.y, x2: a.x + (b.x - a.x) * end, y2: a.y + (b.y - a.y) * end,
      stroke: RELATION_COLORS[e.relation] || "#999", "stroke-width": 2, class: "edge", "marker-end": `url(#arrow-${rel})`,
      "data-src": e.src, "data-dst": e.dst }, s("title", {}, `${e.src} ${e.relation} ${e.dst}`)));
  }
  const labels = new Map(data.nodes.map((n) => [n.id, n.title.length > 28 ? n.title.slice(0, 27) + "…" : n.title]));
  const places = placeLabels(data.nodes.map((n) => ({ ...positions.get(n.id), width: labelWidth(labels.get(n.id)) })),
    width, height);
  data.nodes.forEach((n, i) => {
    const p = positions.get(n.id);
    const place = places[i];
    const node = s("g", { class: "node" + (n.live ? "" : " dead"), transform: `translate(${p.x},${p.y})`, "data-id": n.id,
      tabindex: 0, role: "link" },   // its <title> below names it
      s("title", {}, `${n.id} · ${n.kind}: ${n.title}`),
      s("circle", { r: NODE_RADIUS, fill: KIND_COLORS[n.kind] || "#777" }),
      s("text", { x: place.x, y: place.y, "text-anchor": place.anchor }, labels.get(n.id)));
    node.addEventListener("click", () => { if (!dragged) location.hash = "#/memory/" + encodeURIComponent(n.id); });
    node.addEventListener("keydown", (event) => {   // Tab reaches each memory; Enter or Space opens it
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      location.hash = "#/memory/" + encodeURIComponent(n.id);
    });
    scene.appendChild(node);
  });
  let zoom = { k: 1, x: 0, y: 0 };
  let dragged = false;
  const apply = () => scene.setAttribute("transform", `translate(${zoom.x},${zoom.y}) scale(${zoom.k})`);
  const toScene = (event) => {
    const box = svg.getBoundingClientRect();
    return { x: (event.clientX - box.left) * width / box.width, y: (event.clientY - box.top) * height / box.height };
  };
  const zoomAt = (factor, at) => {
    const k = Math.min(8, Math.max(0.2, zoom.k * factor));
    zoom = { k, x: at.x - (at.x - zoom.x) * k / zoom.k, y: at.y - (at.y - zoom.y) * k / zoom.k };
    apply();
  };
  svg.addEventListener("wheel", (event) => { event.preventDefault(); zoomAt(event.deltaY < 0 ? 1.2 : 1 / 1.2, toScene(event)); },
    { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (event) => { drag = { start: toScene(event), zoom: { ...zoom } }; dragged = false; });
  svg.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const at = toScene(event);
    if (Math.abs(at.x - drag.start.x) + Math.abs(at.y - drag.start.y) > 4) dragged = true;
    zoom = { k: drag.zoom.k, x: drag.zoom.x + at.x - drag.start.x, y: drag.zoom.y + at.y - drag.start.y };
    apply();
  });
  window.addEventListener("pointerup", () => { drag = null; }, { once: false });
  const controls = h("div", { class: "zoom" },
    h("button", { id: "zoom-in", onclick: () => zoomAt(1.25, { x: width / 2, y: height / 2 }) }, "+"),
    h("button", { id: "zoom-out", onclick: () => zoomAt(0.8, { x: width / 2, y: height / 2 }) }, "−"),
    h("button", { onclick: () => { zoom = { k: 1, x: 0, y: 0 }; apply(); } }, "reset"));
  put(root, legend, controls, h("div", { class: "graph-box" }, svg));
}

function graphNote(data) {
  // How much of the graph is drawn: a graph cut at the server's limit says how many links it left out.
  const count = (n) => n.toLocaleString("en-US");
  if (!data.truncated) return `${count(data.nodes.length)} memories with ${count(data.edges.length)} typed links.`;
  if (data.total_edges == null) {
    const links = data.edges.length === 1 ? "link" : "links";
    return `Showing ${count(data.edges.length)} ${links} of this neighbourhood (${count(data.nodes.length)} memories); it has more.`;
  }
  return `Showing the ${count(data.edges.length)} newest of ${count(data.total_edges)} typed links ` +
    `(${count(data.nodes.length)} memories); open a memory to see its own links.`;
}

const NODE_RADIUS = 9;
const LABEL_HEIGHT = 15;   // 12px text (app.css) with its white halo

function labelWidth(text) {
  // A 12px sans-serif label's width, estimated (no layout pass needed): about 6.6 px a character.
  return 6.6 * [...text].length + 4;
}

function placeLabels(items, width, height) {
  // Each label beside its node where it covers no other node and no label placed before it: right, left, above,
  // below, then the same a line further out; when every spot collides, the one that covers least. Returns, per
  // item in order, the text's offset from its node and its anchor. Linked pairs drawn side by side had one's label
  // over the other's node and label.
  const r = NODE_RADIUS, gap = 4, hh = LABEL_HEIGHT;
  const spots = [[r + gap, 4, "start"], [-r - gap, 4, "end"], [0, -r - gap, "middle"], [0, r + gap + hh - 4, "middle"],
    [r + gap, -hh + 4, "start"], [-r - gap, -hh + 4, "end"], [r + gap, hh + 4, "start"], [-r - gap, hh + 4, "end"],
    [0, -r - gap - hh, "middle"], [0, r + gap + 2 * hh - 4, "middle"]];
  const box = (p, [dx, dy, anchor], w) => {
    const left = anchor === "start" ? p.x + dx : anchor === "end" ? p.x + dx - w : p.x + dx - w / 2;
    return { x0: left, x1: left + w, y0: p.y + dy - hh + 4, y1: p.y + dy + 4 };
  };
  const overlap = (a, b) => Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0)) *
    Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));
  // Boxes binned in cells 100 units wide, so a label is checked against its neighbours only.
  const size = 100, cells = new Map();
  const keys = (b) => {
    const out = [];
    for (let cx = Math.floor(b.x0 / size); cx <= Math.floor(b.x1 / size); cx++) {
      for (let cy = Math.floor(b.y0 / size); cy <= Math.floor(b.y1 / size); cy++) out.push(cx + "," + cy);
    }
    return out;
  };
  const add = (b) => { for (const key of keys(b)) { if (!cells.has(key)) cells.set(key, []); cells.get(key).push(b); } };
  const cost = (b, own) => {
    let sum = 0;
    const seen = new Set();
    for (const key of keys(b)) {
      for (const other of cells.get(key) || []) {
        if (other === own || seen.has(other)) continue;
        seen.add(other);
        sum += overlap(b, other);
      }
    }
    const outside = Math.max(0, -b.x0) + Math.max(0, b.x1 - width) + Math.max(0, -b.y0) + Math.max(0, b.y1 - height);
    return sum + outside * hh;
  };
  const dots = items.map((p) => ({ x0: p.x - r, x1: p.x + r, y0: p.y - r, y1: p.y + r }));
  dots.forEach(add);
  return items.map((p, i) => {
    let best = null;
    for (const spot of spots) {
      const b = box(p, spot, p.width);
      const c = cost(b, dots[i]);
      if (!best || c < best.c) best = { c, b, spot };
      if (c === 0) break;
    }
    add(best.b);
    return { x: best.spot[0], y: best.spot[1], anchor: best.spot[2] };
  });
}

function layout(nodes, edges, width, height) {
  // Fruchterman-Reingold in a unit square from a circle (deterministic), with gravity so separate
  // groups stay near the middle; then scaled to fit the picture, leaving room for the labels.
  const n = Math.max(1, nodes.length);
  const pos = new Map();
  nodes.forEach((node, i) => {
    const angle = (2 * Math.PI * i) / n;
    pos.set(node.id, { x: 0.5 + 0.4 * Math.cos(angle), y: 0.5 + 0.4 * Math.sin(angle), dx: 0, dy: 0 });
  });
  const list = [...pos.values()];
  const k = 0.9 * Math.sqrt(1 / n);
  const steps = Math.round(Math.min(400, Math.max(100, 60000 / n)));   // fewer for big graphs (each step costs more)
  const reach = 3 * k;   // short-range repulsion only: gravity keeps separate groups together
  for (let step = 0; step < steps; step++) {
    for (const p of list) { p.dx = 0; p.dy = 0; }
    // Nodes binned in cells `reach` wide: each is compared with the nodes of its own and the next
    // cells only, not with every other node (1000 nodes took 7 s that way).
    const cells = new Map();
    const cell = (cx, cy) => cx + "," + cy;
    for (const p of list) {
      const cx = Math.floor(p.x / reach), cy = Math.floor(p.y / reach);
      if (!cells.has(cell(cx, cy))) cells.set(cell(cx, cy), { cx, cy, nodes: [] });
      cells.get(cell(cx, cy)).nodes.push(p);
    }
    for (const { cx, cy, nodes: here } of cells.values()) {
      for (const [ox, oy] of [[0, 0], [1, 0], [-1, 1], [0, 1], [1, 1]]) {   // each pair of cells once
        const there = ox || oy ? cells.get(cell(cx + ox, cy + oy))?.nodes : here;
        if (!there) continue;
        for (let i = 0; i < here.length; i++) {
          for (let j = ox || oy ? 0 : i + 1; j < there.length; j++) {
            const a = here[i], b = there[j];
            const dx = a.x - b.x, dy = a.y - b.y;
            const d = Math.max(0.01, Math.hypot(dx, dy));
            if (d > reach) continue;
            const f = (k * k) / d / d;
            a.dx += dx * f; a.dy += dy * f; b.dx -= dx * f; b.dy -= dy * f;
          }
        }
      }
    }
    for (const e of edges) {
      const a = pos.get(e.src), b = pos.get(e.dst);
      const dx = a.x - b.x, dy = a.y - b.y;
      const d = Math.max(0.01, Math.hypot(dx, dy));
      const f = d / k;
      a.dx -= dx * f; a.dy -= dy * f; b.dx += dx * f; b.dy += dy * f;
    }
    const t = 0.08 * (1 - step / steps) + 0.002;
    for (const p of list) {
      p.dx += (0.5 - p.x) * 0.6; p.dy += (0.5 - p.y) * 0.6;
      const d = Math.max(1e-9, Math.hypot(p.dx, p.dy));
      p.x += (p.dx / d) * Math.min(d, t);
      p.y += (p.dy / d) * Math.min(d, t);
    }
  }
  const xs = list.map((p) => p.x), ys = list.map((p) => p.y);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const left = 40, right = 200, top = 30, bottom = 30;
  const scale = Math.min((width - left - right) / Math.max(1e-9, x1 - x0), (height - top - bottom) / Math.max(1e-9, y1 - y0));
  const offX = left + ((width - left - right) - (x1 - x0) * scale) / 2;
  const offY = top + ((height - top - bottom) - (y1 - y0) * scale) / 2;
  for (const p of list) {
    p.x = list.length > 1 ? offX + (p.x - x0) * scale : width / 2;
    p.y = list.length > 1 ? offY + (p.y - y0) * scale : height / 2;
  }
  return pos;
}
