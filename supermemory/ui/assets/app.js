// supermemory ui: one small page over the local JSON endpoints (no framework, no build step, no network).
// Every piece of memory text reaches the page through text nodes (textContent), never as HTML.
"use strict";

const TOKEN = document.querySelector('meta[name="supermemory-token"]').content;
const state = { namespace: remembered("namespace"), meta: null, routes: 0 };   // null: the project the UI runs in
const KIND_COLORS = { fact: "#2f6fb3", decision: "#8a4fbf", preference: "#2e9d6b", task: "#d08a1d",
  gotcha: "#c8453c", note: "#6b7785", session: "#9aa5b1" };
const RELATION_COLORS = { refines: "#2f6fb3", contradicts: "#c8453c", "depends-on": "#d08a1d",
  supersedes: "#6b7785", related: "#2e9d6b" };
const SVG_NS = "http://www.w3.org/2000/svg";

function remembered(key, value) {
  // The tab's own choices (sessionStorage: this tab and this run's address only), kept across a reload.
  try {
    if (value === undefined) return sessionStorage.getItem("supermemory-" + key);
    sessionStorage.setItem("supermemory-" + key, value);
  } catch (err) { /* storage refused: the choice lasts until the reload */ }
  return value;
}

// --- DOM helpers --------------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.setAttribute("class", value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function put(el, ...children) {
  append(el, children);
  return el;
}

function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

function view() {
  // Each page draws into a fresh element of its own: when the user has moved on before a slow answer
  // came, that page's late drawing lands in a detached element, never on the page opened since.
  const page = h("div", { class: "page" });
  clear(document.getElementById("view")).appendChild(page);
  return page;
}

function kindBadge(kind) {
  const badge = h("span", { class: "kind kind-" + kind }, kind);
  return badge;
}

function memoryLink(id, text) {
  return h("a", { href: "#/memory/" + encodeURIComponent(id), class: "mlink", "data-id": id }, text || id);
}

function age(iso) {
  if (!iso) return "";
  const seconds = (Date.now() - Date.parse(iso)) / 1000;
  if (seconds < 90) return "just now";
  const units = [["y", 31536000], ["mo", 2592000], ["d", 86400], ["h", 3600], ["min", 60]];
  for (const [unit, size] of units) if (seconds >= size) return Math.floor(seconds / size) + " " + unit + " ago";
  return "just now";
}

function problem(err) {
  return h("p", { class: "error", role: "alert" }, String(err.message || err));
}

// --- talking to the server ----------------------------------------------------------------------

async function api(path, params) {
  const url = new URL(path, location.origin);
  for (const [key, value] of Object.entries(params || {})) {
    if (value === null || value === undefined || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) url.searchParams.append(key, one);
  }
  return request(url, { headers: { "X-Supermemory-Token": TOKEN } });
}

async function post(path, body) {
  return request(path, { method: "POST", body: JSON.stringify(body),
    headers: { "X-Supermemory-Token": TOKEN, "Content-Type": "application/json" } });
}

const UNREACHABLE = "The page's server is not answering: `supermemory ui` was stopped (or its terminal closed). " +
  "Run `supermemory ui` again and open the new address it prints (each run has its own token).";

async function request(url, init) {
  // fetch() itself only fails when nothing answers: say so in words, not the browser's "Failed to fetch".
  let response;
  try { response = await fetch(url, init); } catch (err) { throw new Error(UNREACHABLE); }
  let data;
  try { data = await response.json(); } catch (err) { throw new Error(`the server answered ${response.status} without JSON`); }
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

// --- routing ------------------------------------------------------------------------------------

function route() {
  const hash = location.hash.replace(/^#\/?/, "") || "memories";
  const [path, query] = hash.split("?");
  const params = Object.fromEntries(new URLSearchParams(query || ""));
  const [page, arg] = path.split("/");
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.dataset.page === page || (page === "memory" && link.dataset.page === "memories"));
  }
  const pages = { memories: memoriesPage, search: searchPage, memory: () => memoryPage(decodeURIComponent(arg || "")),
    graph: graphPage, health: healthPage };
  document.body.dataset.page = page;
  const ticket = ++state.routes;
  (pages[page] || memoriesPage)(params).catch((err) => { if (ticket === state.routes) view().appendChild(problem(err)); });
}

function go(page, params) {
  const query = new URLSearchParams(Object.entries(params || {}).filter(([, v]) => v !== "" && v != null)).toString();
  location.hash = "#/" + page + (query ? "?" + query : "");
}

async function loadMeta() {
  state.meta = await api("/api/meta");
  const select = document.getElementById("namespace");
  clear(select).appendChild(h("option", { value: "*" }, "all"));
  for (const ns of state.meta.namespaces) select.appendChild(h("option", { value: ns }, ns));
  // Opens on the project `supermemory ui` was started in (fu23 D8: it opened on every client's memories); "all" when
  // that project holds none, or after the user picked it.
  if (state.namespace === null) state.namespace = state.meta.namespaces.includes(state.meta.current) ? state.meta.current : "*";
  if (state.namespace !== "*" && !state.meta.namespaces.includes(state.namespace)) state.namespace = "*";
  select.value = state.namespace;
}

// --- Memories -----------------------------------------------------------------------------------

async function memoriesPage(params) {
  const root = view();
  const meta = state.meta;
  const field = (name, control) => h("label", {}, name, control);
  const options = (values, any) => [h("option", { value: "" }, any), ...values.map((v) => h("option", { value: v }, v))];
  const kind = h("select", { name: "kind" }, options(meta.kinds, "any kind"));
  const pinned = h("select", { name: "pinned" }, h("option", { value: "" }, "pinned or not"),
    h("option", { value: "true" }, "pinned"), h("option", { value: "false" }, "not pinned"));
  const status = h("select", { name: "status" }, options(meta.statuses, "any status"));
  const tag = h("input", { name: "tag", placeholder: "tag", size: 10 });
  const since = h("input", { name: "since", placeholder: "since (7d, 2026-01-31)", size: 16 });
  const until = h("input", { name: "until", placeholder: "until", size: 12 });
  const controls = { kind, pinned, status, tag, since, until };
  for (const [name, control] of Object.entries(controls)) control.value = params[name] || "";
  const form = h("form", { class: "filters", onsubmit: (event) => {
    event.preventDefault();
    go("memories", Object.fromEntries(Object.entries(controls).map(([k, c]) => [k, c.value.trim()])));
  } }, field("kind", kind), field("pinned", pinned), field("task status", status), field("tag", tag),
  field("from", since), field("to", until), h("button", { type: "submit" }, "Filter"),
  h("a", { href: "#/memories", class: "reset" }, "reset"));
  const summary = h("p", { class: "muted", id: "list-summary" });
  const body = h("tbody");
  const table = h("table", { class: "list", id: "memory-list" }, h("thead", {}, h("tr", {},
    h("th", {}, "kind"), h("th", {}, "title"), h("th", {}, "namespace"), h("th", { class: "num" }, "updated"),
    h("th", { class: "num" }, "recalls"))), body);
  const more = h("button", { class: "more", hidden: true }, "Load more");
  put(root, h("h1", {}, "Memories"), form, summary, table, more);
  const query = { namespace: state.namespace, kind: params.kind, pinned: params.pinned, status: params.status,
    tag: params.tag, since: params.since, until: params.until, limit: 50 };
  let shown = 0;
  let total = null;
  async function page(cursor) {
    more.disabled = true;
    const data = await api("/api/memories", { ...query, cursor });
    if (data.total !== null) total = data.total;
    for (const m of data.items) {
      body.appendChild(h("tr", {},
        h("td", {}, kindBadge(m.kind)),
        h("td", {}, memoryLink(m.id, m.title), m.pinned ? h("span", { class: "pin", title: "pinned" }, "pinned") : null,
          m.status ? h("span", { class: "status status-" + m.status }, m.status) : null,
          m.superseded_by ? h("span", { class: "status superseded", title: "a newer memory holds the current fact" },
            "superseded by ", memoryLink(m.superseded_by)) : null,
          m.tags.length ? h("span", { class: "tags" }, m.tags.map((t) => h("span", { class: "tag" }, t))) : null),
        h("td", { class: "ns-cell" }, m.namespace),
        h("td", { class: "num", title: m.updated_at }, age(m.updated_at)),
        h("td", { class: "num" }, String(m.recall_count))));
    }
    shown += data.items.length;
    const filtered = Object.values(controls).some((c) => c.value.trim()) || state.namespace !== "*";
    summary.textContent = total !== 0 ? `${shown} of ${total} memories, newest first`
      : filtered ? "No memories match these filters."
      : "No memories yet: agents store them with memory_remember (CLI: supermemory remember \"…\").";
    table.hidden = total === 0;
    more.hidden = !data.next_cursor;
    more.disabled = false;
    more.onclick = () => page(data.next_cursor).catch((err) => root.appendChild(problem(err)));
  }
  try {
    await page(null);
  } catch (err) {   // e.g. a bad "from": named under the filters, which stay to correct it
    table.hidden = true;
    form.after(problem(err));
  }
}

// --- Search -------------------------------------------------------------------------------------

async function searchPage(params) {
  const root = view();
  const input = h("input", { type: "search", name: "q", placeholder: "what do you want to know?", value: params.q || "",
    autofocus: true, class: "query" });
  const dropped = h("input", { type: "checkbox", name: "dropped" });
  dropped.checked = params.dropped === "1";
  const form = h("form", { class: "searchbar", onsubmit: (event) => {
    event.preventDefault();
    go("search", { q: input.value.trim(), dropped: dropped.checked ? "1" : "" });
  } }, input, h("button", { type: "submit" }, "Search"), h("label", { class: "check" }, dropped, "show dropped candidates"));
  put(root, h("h1", {}, "Search"), form,
    h("p", { class: "muted" }, "The same ranker as the agents' recall; searches from this page are not counted as recalls."));
  if (!params.q) return;
  let result;
  try {
    result = await api("/api/search", { q: params.q, namespace: state.namespace, dropped: params.dropped });
  } catch (err) {   // under the search form, which stays
    root.appendChild(problem(err));
    return;
  }
  const results = h("div", { id: "results" });
  root.appendChild(results);
  results.appendChild(h("p", { class: "muted" },
    `${result.results.length} result(s) from ${result.candidates} candidate(s) in ${result.latency_ms} ms`));
  if (result.warning) results.appendChild(h("p", { class: "warning" }, result.warning));
  if (!result.results.length) {
    results.appendChild(h("p", { class: "gate", id: "gate-note" },
      result.note ? "Nothing came back: " + result.note : "Nothing came back: no memory matched."));
  }
  const contributions = result.results.flatMap((r) => Object.values(r.contributions || {}));
  const scale = Math.max(0.0001, ...contributions.map(Math.abs));
  for (const r of result.results) {
    results.appendChild(h("article", { class: "hit" },
      h("header", {}, kindBadge(r.kind), memoryLink(r.id, r.title), h("span", { class: "muted id" }, r.id),
        h("span", { class: "figures" }, relevanceBadge(r.relevance), hitFigures(r))),
      h("p", { class: "summary" }, r.summary),
      explainBars(r.contributions || {}, scale),
      h("details", {}, h("summary", {}, "features"), featureTable(r.features || {}))));
  }
  if (result.dropped) {
    const rows = result.dropped.map((d) => h("tr", {}, h("td", {}, memoryLink(d.id)), h("td", {}, d.title),
      h("td", {}, d.reason || ""), h("td", { class: "num" }, fixed(d.score, 3))));
    put(results, h("h2", {}, `Dropped candidates (${result.dropped.length})`),
      rows.length ? h("table", { class: "list", id: "dropped" }, h("thead", {}, h("tr", {}, h("th", {}, "id"),
        h("th", {}, "title"), h("th", {}, "why"), h("th", { class: "num" }, "score"))), h("tbody", {}, rows))
        : h("p", { class: "muted" }, "none"));
  }
}

function fixed(value, digits) {
  // A figure the answer may leave out (null: a broad listing ranks nothing) shown as a dash, never a TypeError.
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(digits) : "–";
}

function hitFigures(r) {
  // A broad question ("gotchas", "what's still open") lists the matching memories newest first: no score, attention
  // or relevance to show, only why it is listed.
  if (typeof r.score !== "number") {
    return h("span", { class: "score listed", title: "listed, not ranked: a broad question lists what matches newest first" },
      r.reason ? `listed (${r.reason})` : "listed");
  }
  const attention = typeof r.attention === "number" ? ` · attention ${fixed(r.attention * 100, 0)}%` : "";
  return h("span", { class: "score" }, `score ${fixed(r.score, 3)}${attention}`);
}

function relevanceBadge(relevance) {
  // The calibrated chance that a hit answers the query: the figure the CLI and MCP print first, and the one the
  // nothing-relevant gate reads (the score only orders the hits of one query).
  if (typeof relevance !== "number") return null;
  return h("span", { class: "relevance",
    title: "relevance: the calibrated chance that this memory answers the query" }, `relevance ${relevance.toFixed(2)}`);
}

function explainBars(contributions, scale) {
  const rows = Object.entries(contributions).map(([name, value]) => {
    const bar = h("span", { class: "bar " + (value < 0 ? "neg" : "pos") });
    bar.style.width = (Math.abs(value) / scale * 100).toFixed(1) + "%";
    return h("div", { class: "bar-row" }, h("span", { class: "bar-name" }, name),
      h("span", { class: "bar-track" }, bar), h("span", { class: "bar-value" }, fixed(value, 3)));
  });
  return h("div", { class: "explain" }, rows);
}

function featureTable(features) {
  return h("table", { class: "features" }, h("tbody", {}, Object.entries(features).map(([k, v]) =>
    h("tr", {}, h("td", {}, k), h("td", { class: "num" }, typeof v === "number" ? fixed(v, 4) : String(v))))));
}

// --- A memory -----------------------------------------------------------------------------------

async function memoryPage(id) {
  const root = view();
  const data = await api("/api/memory", { id });
  const m = data.memory;
  // the asked version's entry in versions has no body (it is data.memory's)
  const current = data.current === m.id ? m : data.versions.find((v) => v.id === data.current) || m;
  const act = async (path, body, next, handled) => {
    try {
      const result = await post(path, body);
      if (handled && handled(result)) return;
      const target = "#/memory/" + encodeURIComponent(next ? next(result) : data.current);
      if (location.hash === target) route();
      else location.hash = target;
    } catch (err) { root.prepend(problem(err)); }
  };
  const banner = [];
  if (data.forgotten) banner.push(h("p", { class: "banner forgotten", id: "forgotten-banner" }, "Forgotten: agents no longer see this memory. Restore brings it back."));
  else if (!data.is_current) banner.push(h("p", { class: "banner" }, "An old version. The current one is ", memoryLink(data.current), "."));
  else {   // a live memory a newer one supersedes (a `supersedes` link): recall demotes it, agents are told
    const newer = data.links.find((l) => l.relation === "supersedes" && !l.outgoing);
    if (newer) banner.push(h("p", { class: "banner", id: "superseded-banner" }, "Superseded: ", memoryLink(newer.other),
      newer.other_title ? " (" + newer.other_title + ")" : "", " holds the newer fact; recall lists this one after it."));
  }
  const actions = h("div", { class: "actions" });
  if (data.forgotten) {
    actions.appendChild(h("button", { id: "restore", onclick: () => act("/api/restore", { id: data.current }) }, "Restore"));
  } else {
    put(actions,
      h("button", { id: "edit", onclick: () => editor.hidden = !editor.hidden }, "Edit"),
      h("button", { id: "pin", onclick: () => act("/api/pin", { id: data.current, pinned: !current.pinned }, (r) => r.id) },
        current.pinned ? "Unpin" : "Pin"),
      current.kind === "task" ? statusControl(current, (status) => act("/api/status", { id: data.current, status }, (r) => r.id)) : null,
      h("button", { id: "forget", class: "danger", onclick: () => act("/api/forget", { id: data.current }) }, "Forget"));
  }
  const title = h("input", { name: "title", value: current.title, class: "wide" });
  const content = h("textarea", { name: "content", rows: 8, class: "wide" });
  content.value = current.body;
  const tags = h("input", { name: "tags", value: current.tags.join(", "), class: "wide" });
  const importance = h("input", { name: "importance", type: "number", min: 0, max: 1, step: 0.05, value: current.importance });
  const note = h("p", { class: "note", id: "edit-note", role: "status", hidden: true });
  const editor = h("form", { class: "editor", id: "editor", hidden: true, onsubmit: (event) => {
    event.preventDefault();
    const changes = edits(current, { title: title.value, content: content.value, tags: tags.value, importance: importance.value });
    const nothing = () => { note.textContent = "Nothing changed: no new version written."; note.hidden = false; };
    if (!Object.keys(changes).length) return nothing();
    act("/api/update", { id: data.current, ...changes }, (r) => r.id, (r) => r.status === "unchanged" && (nothing(), true));
  } }, h("label", {}, "title", title), h("label", {}, "text", content), h("label", {}, "tags (comma separated)", tags),
  h("label", {}, "importance", importance),
  h("p", { class: "muted" }, "Saving writes a new version (the old one stays in the history); secrets are redacted as for the agents."),
  h("button", { type: "submit", id: "save" }, "Save as a new version"), note);
  const source = Object.entries(m.source || {});
  put(root, h("p", { class: "crumbs" }, h("a", { href: "#/memories" }, "Memories"), " / ", m.id),
    banner,
    h("h1", { class: "mtitle" }, kindBadge(m.kind), " ", h("span", { id: "memory-title" }, m.title)),
    h("p", { class: "facts" }, factList([["id", m.id], ["namespace", m.namespace], ["importance", m.importance],
      ["pinned", m.pinned ? "yes" : "no"], ["status", m.status], ["recalls", m.recall_count],
      ["tags", m.tags.join(", ")], ["created", m.created_at], ["updated", m.updated_at], ["expires", m.expires_at]])),
    actions, editor,
    h("pre", { class: "body", id: "memory-body" }, m.body),
    h("h2", {}, "Source"),
    source.length ? h("p", { class: "facts" }, factList(source.map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)])))
      : h("p", { class: "muted" }, "not recorded"),
    h("h2", {}, `Links (${data.links.length})`),
    data.links.length ? h("ul", { class: "links" }, data.links.map((l) => h("li", {},
      h("span", { class: "rel rel-" + l.relation }, l.outgoing ? l.relation + " →" : "← " + l.relation), " ",
      memoryLink(l.other, l.other_title || l.other)))) : h("p", { class: "muted" }, "none"),
    h("h2", {}, `History (${data.versions.length} version${data.versions.length === 1 ? "" : "s"})`),
    timeline(data));
}

function edits(current, form) {
  // Only the fields the user changed go to /api/update: a title left as it was is not sent, so one that
  // was made from the old text is made again from the new text (as for the agents' updates); tags left
  // as they were are not split again on commas (a tag may hold one); an emptied importance changes nothing.
  const changes = {};
  if (form.title.trim() !== current.title) changes.title = form.title.trim();
  if (form.content !== current.body.replace(/\r\n?/g, "\n")) changes.content = form.content;
  if (form.tags.trim() !== current.tags.join(", ")) changes.tags = form.tags.split(",").map((t) => t.trim()).filter(Boolean);
  if (form.importance.trim() !== "" && Number(form.importance) !== current.importance) changes.importance = Number(form.importance);
  return changes;
}

function statusControl(memory, onChange) {
  const select = h("select", { id: "status", onchange: () => onChange(select.value) },
    state.meta.statuses.map((st) => h("option", { value: st }, "status: " + st)));
  select.value = memory.status || "open";
  return select;
}

function factList(pairs) {
  return pairs.filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => h("span", { class: "fact" }, h("span", { class: "muted" }, k + " "), String(v)));
}

function diffPiece([op, text]) {
  // The server cuts a long unchanged stretch to the words next to the changes: ["…", count] stands for
  // the rest (the whole text of each version is under "text of this version").
  if (op === "…") return h("span", { class: "skip" }, `… ${text} unchanged characters …`);
  if (op !== "=") return h(op === "+" ? "ins" : "del", {}, text);
  return h("span", {}, text);
}

function timeline(data) {
  const list = h("ol", { class: "timeline", id: "history" });
  for (const v of [...data.versions].reverse()) {
    const state_ = v.merged_into ? "merged into " + v.merged_into : v.superseded_by ? "superseded" : v.deleted_at ? "forgotten" : "current";
    const changes = v.changes.map((c) => c.diff
      ? h("div", { class: "change" }, h("span", { class: "field" }, c.field), h("span", { class: "diff" },
        c.diff.map(diffPiece)))
      : h("div", { class: "change" }, h("span", { class: "field" }, c.field), " ",
        h("del", {}, JSON.stringify(c.from)), " → ", h("ins", {}, JSON.stringify(c.to))));
    list.appendChild(h("li", { class: v.id === data.memory.id ? "version asked" : "version" },
      h("div", { class: "vhead" }, memoryLink(v.id), h("span", { class: "muted" }, " " + (v.valid_from || "")),
        h("span", { class: "vstate" }, state_ + (v.source && v.source.by ? " · by " + v.source.by : ""))),
      v.merged_from && v.merged_from.length   // a merge's step says what it took in, never "no change"
        ? h("div", { class: "change" }, h("span", { class: "field" }, "merged in"), " ",
          ...v.merged_from.map((id) => memoryLink(id)))
        : null,
      changes.length ? changes : v.merged_from && v.merged_from.length ? null
        : h("div", { class: "muted" }, v === data.versions[0] ? "first version" : "no change"),
      h("details", { class: "vtext" }, h("summary", {}, "text of this version"), h("pre", { class: "body" }, v.body ?? data.memory.body))));
  }
  return list;
}

// --- Health -------------------------------------------------------------------------------------

async function healthPage() {
  const root = view();
  const loading = h("p", { class: "muted", id: "health-loading" }, "Checking the store…");
  put(root, h("h1", {}, "Health"), loading);
  const data = await api("/api/health", { namespace: state.namespace });
  loading.remove();
  const hl = data.health;
  const r = data.recall;
  const card = (label, value, note) => h("div", { class: "card" }, h("div", { class: "card-value" }, value),
    h("div", { class: "card-label" }, label), note ? h("div", { class: "muted" }, note) : null);
  const ms = (v) => (v === null || v === undefined ? "–" : v.toFixed(1) + " ms");
  const count = (n) => n.toLocaleString("en-US");
  put(root, h("div", { class: "cards", id: "health-cards" },
    card("memories", String(data.counts.memories)),
    card("agent recalls logged", String(r.searches)),
    card("recall latency p50", ms(r.latency_ms_p50)), card("recall latency p95", ms(r.latency_ms_p95)),
    card("hit rate", r.hit_rate === null ? "–" : fixed(r.hit_rate * 100, 0) + "%", "recalls that returned something"),
    card("near-duplicate pairs", String(hl.near_duplicate_pairs)), card("contradicts links", count(hl.contradiction_count)),
    card("past their TTL", String(hl.expired)), card("stale (sweep)", String(hl.stale))));
  const by = h("select", { id: "growth-by" }, h("option", { value: "by_kind" }, "by kind"), h("option", { value: "by_namespace" }, "by namespace"));
  const chartBox = h("div", { class: "chart-box" });
  by.addEventListener("change", () => clear(chartBox).appendChild(growthChart(data.growth, by.value)));
  chartBox.appendChild(growthChart(data.growth, "by_kind"));
  put(root, h("h2", {}, "Memories over time ", by), chartBox);
  put(root, h("h2", {}, `Near-duplicates (${hl.near_duplicate_pairs})`),
    hl.near_duplicates.length ? h("table", { class: "list" }, h("thead", {}, h("tr", {}, h("th", {}, "pair"), h("th", {}, "titles"),
      h("th", { class: "num" }, "similarity"), h("th", {}, "to merge"))), h("tbody", {}, hl.near_duplicates.map((p) => h("tr", {},
      h("td", {}, memoryLink(p.a), " ", memoryLink(p.b)), h("td", {}, p.titles[0], h("br"), p.titles[1]),
      h("td", { class: "num" }, fixed(p.similarity, 3)), h("td", {}, h("code", {}, p.merge))))))
      : h("p", { class: "muted" }, "none"));
  const cut = hl.contradiction_count > hl.contradictions.length ? `; the first ${hl.contradictions.length} listed` : "";
  put(root, h("h2", {}, `Contradicts links (${count(hl.contradiction_count)}${cut})`),
    hl.contradictions.length ? h("ul", { class: "links" }, hl.contradictions.map((c) => h("li", {},
      memoryLink(c.src, c.titles[0]), h("span", { class: "rel rel-contradicts" }, " contradicts "), memoryLink(c.dst, c.titles[1]))))
      : h("p", { class: "muted" }, "none"));
  const possible = hl.possible_contradictions || [];
  put(root, h("h2", {}, `Possible contradictions (${count(hl.possible_contradiction_count || 0)}): close, but one says not or gives another value`),
    possible.length ? h("ul", { class: "links" }, possible.map((p) => h("li", {},
      memoryLink(p.a, p.titles[0]), h("span", { class: "muted" }, ` vs (${fixed(p.similarity, 3)}) `), memoryLink(p.b, p.titles[1]))))
      : h("p", { class: "muted" }, "none"));
  const cycles = hl.supersedes_cycles || [];
  if (cycles.length) {   // each marks the next outdated: the stale fact reads as current until one link goes
    put(root, h("h2", {}, `Supersedes cycles (${cycles.length}): remove the wrong link of each`),
      h("ul", { class: "links", id: "supersedes-cycles" }, cycles.map((c) => h("li", {},
        ...c.ids.flatMap((id, i) => [i ? h("span", { class: "rel" }, " supersedes ") : null, memoryLink(id, `${id} ${c.titles[i]}`)]),
        h("span", { class: "rel" }, " supersedes "), memoryLink(c.ids[0]), h("br"),
        h("code", {}, c.ids.map((id, i) => `supermemory unlink ${id} ${c.ids[(i + 1) % c.ids.length]} --relation supersedes`).join("  or  "))))));
  }
  put(root, h("h2", {}, `Past their TTL (${hl.expired}): maintenance removes these`),
    hl.expired_items.length ? h("ul", { class: "links" }, hl.expired_items.map((e) => h("li", {}, kindBadge(e.kind), " ",
      memoryLink(e.id, e.title), h("span", { class: "muted" }, " expired " + e.expired_at)))) : h("p", { class: "muted" }, "none"));
  const sweepBox = h("div", { id: "sweep" });
  put(root, h("h2", {}, `Stale and unimportant (${hl.stale}): the forget --sweep candidates`), sweepBox);
  const preview = async () => {
    const dry = await api("/api/sweep", { namespace: state.namespace });
    put(clear(sweepBox), h("p", {}, `Dry run: ${dry.matched} ${dry.matched === 1 ? "memory" : "memories"} unused for ${dry.stale_days} days with importance ≤ ${dry.importance_floor}.`),
      dry.sample.length ? h("ul", { class: "links" }, dry.sample.map((m) => h("li", {}, kindBadge(m.kind), " ", memoryLink(m.id, m.title),
        h("span", { class: "muted" }, " last used " + m.last_used)))) : null,
      dry.matched ? h("button", { class: "danger", id: "sweep-apply", onclick: async () => {
        const done = await post("/api/sweep", { namespace: state.namespace });
        clear(sweepBox).appendChild(h("p", {}, `Archived ${done.matched} ${done.matched === 1 ? "memory" : "memories"} (restore brings any of them back).`));
      } }, `Archive these ${dry.matched}`) : h("p", { class: "muted" }, "Nothing to archive."));
  };
  sweepBox.appendChild(h("button", { id: "sweep-preview", onclick: () => preview().catch((err) => sweepBox.appendChild(problem(err))) },
    "Show what a sweep would archive"));
  // Chunks of a long text get their vectors after the write (MCP server idle time, maintenance): not orphans.
  const pending = hl.vectors_pending;
  const orphans = Object.entries(hl.orphans).filter(([, n]) => n);
  put(root, h("h2", {}, "Store"), h("p", { class: "facts" }, factList([["schema", hl.schema_version],
    ["model pin", hl.model_pin_status], ["driver", data.counts.driver], ["vectors", data.counts.vector_index],
    ["size", (data.counts.db_bytes / 1048576).toFixed(1) + " MB"], ["old versions", data.counts.versions_superseded],
    ["forgotten", data.counts.deleted], ["orphans", orphans.length ? orphans.map(([k, n]) => `${k} ${n}`).join(", ") : "none"],
    ["vectors pending", pending ? `${count(pending)} chunks of long texts (keyword search finds them now; their vectors ` +
      "come while the MCP server idles or at supermemory maintenance)" : "none"]])));
  if (r.recent_empty_queries.length) {
    put(root, h("h2", {}, "Recent recalls that found nothing"), h("ul", {}, r.recent_empty_queries.map((q) => h("li", {}, q.query,
      q.times > 1 ? h("span", { class: "muted" }, `  (${q.times}×)`) : null))));
  }
}

function growthChart(growth, by) {
  const buckets = growth.buckets;
  const keys = [...new Set(buckets.flatMap((b) => Object.keys(b[by])))].sort();
  const width = 900, height = 160, pad = 30;
  const top = Math.max(1, ...buckets.map((b) => Object.values(b[by]).reduce((a, n) => a + n, 0)));
  const barW = (width - pad * 2) / buckets.length;
  const palette = ["#2f6fb3", "#2e9d6b", "#d08a1d", "#8a4fbf", "#c8453c", "#6b7785", "#17a2b8", "#9aa5b1"];
  const color = (key, i) => (by === "by_kind" && KIND_COLORS[key]) || palette[i % palette.length];
  const svg = s("svg", { viewBox: `0 0 ${width} ${height + 40}`, id: "growth", role: "img" },
    s("title", {}, "new memories per period"),
    s("text", { x: 2, y: 12, class: "axis" }, String(top)), s("line", { x1: pad, y1: height, x2: width - pad, y2: height, class: "axis-line" }));
  // A period ends `bucket_days` after its start (the last one now), so it is named by its first and last day:
  // its start alone read as a week before the memories it holds.
  const lastDay = (b) => new Date(Date.parse(b.start) + growth.bucket_days * 86400000 - 1).toISOString().slice(0, 10);
  const period = (b) => b.start.slice(0, 10) === lastDay(b) ? lastDay(b) : `${b.start.slice(0, 10)} – ${lastDay(b)}`;
  buckets.forEach((b, i) => {
    let y = height;
    keys.forEach((key, k) => {
      const n = b[by][key] || 0;
      if (!n) return;
      const hgt = (n / top) * (height - 20);
      y -= hgt;
      svg.appendChild(s("rect", { x: pad + i * barW + 2, y, width: Math.max(1, barW - 4), height: hgt, fill: color(key, k) },
        s("title", {}, `${key}: ${n} (${period(b)})`)));
    });
    const last = buckets.length - 1;   // every other bar's last day, counted back from today's bar
    if ((last - i) % 2 === 0) svg.appendChild(s("text", { x: pad + i * barW + 2, y: height + 14, class: "axis day" }, lastDay(b).slice(5, 10)));
  });
  keys.forEach((key, k) => {
    svg.appendChild(s("rect", { x: pad + k * 110, y: height + 24, width: 10, height: 10, fill: color(key, k) }));
    svg.appendChild(s("text", { x: pad + k * 110 + 14, y: height + 33, class: "axis" }, key));
  });
  const before = Object.values(growth.before[by]).reduce((a, n) => a + n, 0);
  return h("div", {}, svg, h("p", { class: "muted" },
    `New memories per ${growth.bucket_days}-day period (still live), ${before} from before ${growth.start.slice(0, 10)}.`));
}

// --- start --------------------------------------------------------------------------------------

document.getElementById("namespace").addEventListener("change", (event) => {
  state.namespace = remembered("namespace", event.target.value);
  route();
});
window.addEventListener("hashchange", route);
loadMeta().then(route).catch((err) => view().appendChild(problem(err)));
