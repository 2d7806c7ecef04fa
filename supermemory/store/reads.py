"""Reading memories: by id, filtered listings, the briefing's sections, the graph of links."""
from __future__ import annotations

import json
from typing import Any, Sequence

from supermemory.config import TASK_STATUSES
from supermemory.errors import InvalidInputError
from supermemory.store import namespaces as nsm
from supermemory.store import records as rec_
from supermemory.store import versions
from supermemory.store.context import StoreContext
from supermemory.store.records import LIVE, SELECT_M_COLUMNS, format_id, parse_id, parse_ids, public, record
from supermemory.timeparse import parse_when

SUCCESSOR_SLICE = 500   # ids per successor lookup (SQLite builds before 3.32 allow 999 variables a statement)


def get(ctx: StoreContext, ids: Any, *, namespace: str | None = None) -> dict:
    """Full records by id (superseded versions too, marked, and naming the `current` one); missing ids are listed,
    and the forgotten ones among them also under `forgotten` (`restore` brings them back); `namespaces` says where
    they were looked for (an id in another project is "missing" here).

    Raises:
        InvalidInputError: malformed ids.
    """
    id_list = parse_ids(ids)
    if not id_list:
        raise InvalidInputError("ids must not be empty")
    if len(id_list) > 100:
        raise InvalidInputError("at most 100 ids per call")
    namespaces = nsm.for_read(ctx, namespace)
    found, missing, forgotten = [], [], []
    for memory_id in id_list:
        rec = ctx.fetch(memory_id)
        visible = rec is not None and (namespaces is None or rec["namespace"] in namespaces)
        if not visible or rec["deleted_at"] is not None:
            missing.append(format_id(memory_id))
            if visible:
                forgotten.append(format_id(memory_id))
            continue
        item = public(rec)
        if rec["superseded_by"] is not None:   # its successor may be superseded too: name the chain's head
            item["current"] = format_id(versions.head(ctx, memory_id))
        item["links"] = versions.links_of(ctx, memory_id)
        found.append(item)
    mark_superseded(ctx, found)   # a live one a newer memory corrects (a link) names it, in one query for all
    return {"memories": found, "missing": missing, "forgotten": forgotten, "namespaces": namespaces or ["*"]}


def filters(*, kinds=None, tags=None, since=None, until=None, platform=None, status=None, pinned=None,
            now: float) -> tuple[str, list]:
    """SQL condition (over `memories m`) and parameters for the common read filters; expired rows
    are always left out.

    Raises:
        InvalidInputError: an unknown kind or status, an unreadable time.
    """
    clauses, params = [], []
    if kinds:
        kinds = [rec_.kind(k) for k in rec_.str_list(kinds, "kinds")]
        clauses.append(f"m.kind IN ({','.join('?' * len(kinds))})")
        params.extend(kinds)
    for tag in rec_.str_list(tags, "tags"):
        clauses.append("EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)")
        params.append(tag)
    start, end = parse_when(since, now), parse_when(until, now)
    if start is not None:
        clauses.append("m.updated_at >= ?")
        params.append(start)
    if end is not None:
        clauses.append("m.created_at <= ?")
        params.append(end)
    if platform:
        clauses.append("m.platform = ?")
        params.append(str(platform))
    if status:
        if status not in TASK_STATUSES:
            raise InvalidInputError(f"status must be one of {', '.join(TASK_STATUSES)}")
        clauses.append("m.status = ?")
        params.append(status)
    if pinned is not None:
        if not isinstance(pinned, bool):
            raise InvalidInputError("pinned must be true or false")
        clauses.append("m.pinned = ?")
        params.append(int(pinned))
    clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
    params.append(now)
    return " AND ".join(clauses), params


def live_records(ctx: StoreContext, ids: Sequence[int], namespaces: list[str] | None, where: str,
                 params: list) -> dict[int, dict]:
    """The live records among `ids` that are in `namespaces` and pass `where` (a `filters` clause)."""
    if not ids:
        return {}
    ns_sql, ns_params = nsm.clause(namespaces)
    marks = ",".join("?" * len(ids))
    rows = ctx.q(f"SELECT {SELECT_M_COLUMNS} FROM memories m WHERE m.id IN ({marks}) AND {LIVE} AND +{ns_sql} "
                 f"AND {where}", list(ids) + ns_params + params)
    return {r[0]: record(r) for r in rows}


def list_memories(ctx: StoreContext, *, namespace: str | None = None, kinds: Sequence[str] | None = None,
                  tags: Sequence[str] | None = None, status: str | None = None, since: Any = None,
                  until: Any = None, pinned: bool | None = None, limit: int = 50, offset: int = 0,
                  order: str = "recent", cursor: str | None = None, count: bool = True) -> dict:
    """A cheap index of live memories: titles and summaries, no bodies; one a `supersedes` link targets names
    its successor under `superseded_by`.

    :param pinned: True only pinned memories, False only unpinned ones, None both.
    :param since: updated at or after (`7d`, ISO); `until`: created at or before.
    :param order: 'recent' (updated first) or 'importance'.
    :param cursor: with order 'recent', the `next_cursor` of the previous page: the page after it
        (keyset paging: as fast deep in a 100k store as on its first page; `offset` is ignored).
    :param count: False leaves `total` out (None), saving a count over every matching row.
    Raises:
        InvalidInputError: bad filters, an unreadable cursor, a cursor with order 'importance'.
    """
    limit = rec_.integer(limit, "limit", 1, 1000)
    offset = rec_.integer(offset, "offset", 0, 10**9)
    where, params = filters(kinds=kinds, tags=tags, since=since, until=until, status=status, pinned=pinned,
                            now=ctx.clock())
    ns_sql, ns_params = nsm.clause(nsm.for_read(ctx, namespace, must_exist=True))
    order_sql = {"recent": "m.updated_at DESC, m.id DESC",
                 "importance": "m.pinned DESC, m.importance DESC, m.updated_at DESC"}.get(order)
    if order_sql is None:
        raise InvalidInputError("order must be 'recent' or 'importance'")
    base = f"FROM memories m WHERE {LIVE} AND {ns_sql} AND {where}"
    total = ctx.q(f"SELECT count(*) {base}", ns_params + params)[0][0] if count else None
    page_sql, page_params = base, ns_params + params
    if cursor is not None:
        if order != "recent":
            raise InvalidInputError("a cursor pages order 'recent' only")
        at, row_id = _parse_cursor(cursor)
        page_sql += " AND (m.updated_at < ? OR (m.updated_at = ? AND m.id < ?))"
        page_params = page_params + [at, at, row_id]
        offset = 0
    rows = ctx.q(f"SELECT {SELECT_M_COLUMNS} {page_sql} ORDER BY {order_sql} LIMIT ? OFFSET ?",
                 page_params + [limit + 1, offset])
    more = len(rows) > limit
    rows = rows[:limit]
    items = mark_superseded(ctx, [public(record(r), body=False) for r in rows])
    last = record(rows[-1]) if rows else None
    return {"items": items, "total": total, "limit": limit, "offset": offset,
            "truncated": more if total is None or cursor is not None else offset + len(items) < total,
            "next_cursor": f"{last['updated_at']!r}:{last['id']}" if more and order == "recent" else None}


def _parse_cursor(cursor: Any) -> tuple[float, int]:
    try:
        at, _, row_id = str(cursor).partition(":")
        return float(at), int(row_id)
    except ValueError:
        raise InvalidInputError(f"not a list cursor: {cursor!r} (pass the next_cursor of a page)") from None


NEW_PINS_LEAD = 5   # rules pinned within the briefing's recent days that lead its pinned rules


def _briefed(ctx: StoreContext, namespaces: list[str] | None, without_tags: Sequence[str]) -> tuple[str, list]:
    """The clause (on `memories m`) and parameters of the memories a briefing may show: live, in `namespaces`, not
    expired, carrying none of `without_tags`."""
    ns_sql, ns_params = nsm.clause(namespaces)
    without = [str(t) for t in without_tags]
    alive = f"{LIVE} AND {ns_sql} AND (m.expires_at IS NULL OR m.expires_at > ?)"
    if without:
        alive += (f" AND NOT EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value IN "
                  f"({','.join('?' * len(without))}))")
    return alive, ns_params + [ctx.clock()] + without


def pinned_count(ctx: StoreContext, namespaces: list[str] | None, *, without_tags: Sequence[str] = ()) -> int:
    """How many pinned rules a briefing could show (`briefing_sections` lists twenty at most)."""
    alive, params = _briefed(ctx, namespaces, without_tags)
    return ctx.q(f"SELECT count(*) FROM memories m WHERE {alive} AND m.pinned = 1", params)[0][0]


def briefing_sections(ctx: StoreContext, namespaces: list[str] | None, *, recent_days: float,
                      without_tags: Sequence[str] = ()) -> dict[str, list]:
    """The briefing's standing sections, most important first: pinned rules, open tasks, decisions,
    preferences, gotchas, recent changes (not already listed; those that supersede a memory first) and the last
    sessions.

    :param without_tags: leave out memories carrying any of these tags (e.g. the rules of the file
        the agent loads by itself)."""
    now = ctx.clock()
    alive, params = _briefed(ctx, namespaces, without_tags)

    def fetch(extra: str, order: str, n: int = 20, more: Sequence = ()) -> list[dict]:
        rows = ctx.q(f"SELECT {SELECT_M_COLUMNS} FROM memories m WHERE {alive} AND {extra} ORDER BY {order} LIMIT ?",
                     params + list(more) + [n])
        return [public(record(r)) for r in rows]

    by_weight = "m.importance DESC, m.updated_at DESC, m.id DESC"   # ties: the newer id first, in any store
    since = now - recent_days * 86400
    # The rules pinned lately lead the pinned ones (the newest NEW_PINS_LEAD, by weight): in a store of a hundred
    # pins a rule pinned today sat below the twenty most important and never reached the briefing (fu32 D11).
    lead = sorted(fetch("m.pinned = 1 AND m.updated_at >= ?", "m.updated_at DESC, m.id DESC", NEW_PINS_LEAD, [since]),
                  key=lambda r: -r["importance"])
    led = {r["id"] for r in lead}
    sections = {
        "pinned": (lead + [r for r in fetch("m.pinned = 1", by_weight) if r["id"] not in led])[:20],
        "tasks": fetch("m.kind = 'task' AND m.status = 'open' AND m.pinned = 0", by_weight),
        "decisions": fetch("m.kind = 'decision' AND m.pinned = 0", by_weight),
        "preferences": fetch("m.kind = 'preference' AND m.pinned = 0", by_weight),
        "gotchas": fetch("m.kind = 'gotcha' AND m.pinned = 0", by_weight),
    }
    shown = {item["id"] for items in sections.values() for item in items}
    # The ones already listed are left out before the limit, not after: twenty new pins took every place of the
    # twenty newest, and the notes written today never showed (fresh-user run fu33 D2).
    recent = fetch("m.updated_at >= ? AND m.kind NOT IN ('session') AND m.id NOT IN (SELECT value FROM json_each(?))",
                   "m.updated_at DESC, m.id DESC", 20, [since, json.dumps([parse_id(i) for i in shown])])
    # A memory that supersedes another is a change in the plainest sense ("the timeout is now 60s"): those first,
    # each group newest first (fresh-user run fu29 D8: a task marked done took the section's one line).
    from supermemory.store import supersession
    changes = supersession.revising(ctx, [parse_id(r["id"]) for r in recent])   # 20 at most: one query
    sections["recent"] = sorted(recent, key=lambda r: parse_id(r["id"]) not in changes)[:10]
    sections["sessions"] = fetch("m.kind = 'session'", "m.updated_at DESC", 2)
    _fold_superseded(ctx, sections)
    return sections


def _successors(ctx: StoreContext, memory_ids: Sequence[int]) -> dict[int, int]:
    """`supersession.successors` of any number of ids, asked in slices that stay under SQLite's variable limit."""
    from supermemory.store import supersession

    out: dict[int, int] = {}
    for start in range(0, len(memory_ids), SUCCESSOR_SLICE):
        out.update(supersession.successors(ctx, memory_ids[start:start + SUCCESSOR_SLICE]))
    return out


def mark_superseded(ctx: StoreContext, items: list[dict]) -> list[dict]:
    """Name on each listed live memory the live one that supersedes it (`superseded_by`, as recall does), so that
    no listing presents an outdated fact as current; returns `items`."""
    successors = _successors(ctx, [parse_id(item["id"]) for item in items if not item.get("superseded_by")])
    for item in items:
        newer = successors.get(parse_id(item["id"]))
        if newer is not None:
            item["superseded_by"] = format_id(newer)
    return items


def _fold_superseded(ctx: StoreContext, sections: dict[str, list]) -> None:
    """Leave out of the standing sections every memory a live `supersedes` link targets; its successor,
    when listed, carries its title as `was` (the briefing shows "was: …")."""
    listed = {parse_id(item["id"]): item for items in sections.values() for item in items}
    successors = _successors(ctx, list(listed))
    if not successors:
        return
    for old_id, new_id in successors.items():
        if new_id in listed:
            listed[new_id].setdefault("was", []).append(listed[old_id]["title"])
    stale = {format_id(i) for i in successors}
    for key, items in sections.items():
        sections[key] = [item for item in items if item["id"] not in stale]


def index_items(ctx: StoreContext, namespace: str | None) -> list[dict]:
    """Live, unexpired, non-session memories for a MEMORY.md-style index (no bodies), in the order a length cap
    cuts from the end: pinned, then preferences and gotchas, then open tasks and decisions, then the rest
    (facts, notes, finished tasks), each tier by importance, then how often recall returned it, then recency;
    last, every memory a live `supersedes` link targets, naming its successor. A burst of routine facts must not
    push the durable ones out, the ones recall keeps returning least of all."""
    ns_sql, ns_params = nsm.clause(nsm.for_read(ctx, namespace))
    rows = ctx.q(f"SELECT {SELECT_M_COLUMNS} FROM memories m WHERE {LIVE} AND {ns_sql} AND "
                 f"(m.expires_at IS NULL OR m.expires_at > ?) AND m.kind != 'session' ORDER BY m.pinned DESC, "
                 f"CASE WHEN m.kind IN ('preference', 'gotcha') THEN 0 "
                 f"WHEN m.kind = 'decision' OR (m.kind = 'task' AND m.status = 'open') THEN 1 ELSE 2 END, "
                 f"m.importance DESC, m.recall_count DESC, m.updated_at DESC", ns_params + [ctx.clock()])
    items = mark_superseded(ctx, [public(record(r), body=False) for r in rows])
    return sorted(items, key=lambda item: bool(item.get("superseded_by")))   # stable: each part keeps its order


def graph(ctx: StoreContext, *, id: Any = None, depth: int = 2, namespace: str | None = None,
          limit: int = 500) -> dict:
    """Nodes and typed edges: the neighbourhood of `id` up to `depth` hops, or all live links; at most
    `limit` links (newest first), `truncated` saying whether more exist and `total_edges` how many there
    are in all (None for a neighbourhood cut short: counting it would mean walking all of it)."""
    depth = rec_.integer(depth, "depth", 0, 10)
    limit = rec_.integer(limit, "limit", 1, 100_000)
    namespaces = nsm.for_read(ctx, namespace)
    edges: dict[tuple, dict] = {}
    truncated = False
    if id is None:
        ns_sql, ns_params = nsm.clause(namespaces)
        dst_sql, dst_params = nsm.clause(namespaces, "d.namespace")
        where = f"FROM links l JOIN memories m ON m.id = l.src JOIN memories d ON d.id = l.dst " \
                f"WHERE {LIVE} AND {ns_sql} AND {dst_sql}"
        for src, dst, rel, w in ctx.q(f"SELECT l.src, l.dst, l.relation, l.weight {where} "
                                      f"ORDER BY l.created_at DESC, l.rowid DESC LIMIT ?",
                                      ns_params + dst_params + [limit]):
            edges[(src, dst, rel)] = {"src": src, "dst": dst, "relation": rel, "weight": w}
        total = len(edges) if len(edges) < limit else ctx.q(f"SELECT COUNT(*) {where}", ns_params + dst_params)[0][0]
        truncated = total > len(edges)
        node_ids = {e["src"] for e in edges.values()} | {e["dst"] for e in edges.values()}
    else:
        start = versions.live(ctx, parse_id(id), namespaces)["id"]
        node_ids, frontier = {start}, [start]
        for _ in range(depth):
            nxt = set()
            for node in frontier:
                for src, dst, rel, w in ctx.q("SELECT src, dst, relation, weight FROM links WHERE src = ? OR dst = ? "
                                              "ORDER BY created_at DESC, rowid DESC", (node, node)):
                    if (src, dst, rel) in edges:
                        continue
                    if len(edges) >= limit:
                        truncated = True
                        break
                    edges[(src, dst, rel)] = {"src": src, "dst": dst, "relation": rel, "weight": w}
                    nxt.update((src, dst))
                if truncated:
                    break
            frontier = sorted(nxt - node_ids)
            node_ids |= nxt
            if truncated:
                break
    nodes = []
    for node in sorted(node_ids):
        rec = ctx.fetch(node)
        if rec is None or (namespaces is not None and rec["namespace"] not in namespaces):
            continue
        nodes.append({"id": format_id(node), "kind": rec["kind"], "title": rec["title"],
                      "live": rec["superseded_by"] is None and rec["deleted_at"] is None})
    shown = {n["id"] for n in nodes}
    out_edges = [{"src": format_id(e["src"]), "dst": format_id(e["dst"]), "relation": e["relation"],
                  "weight": e["weight"]} for e in edges.values()
                 if format_id(e["src"]) in shown and format_id(e["dst"]) in shown]
    if id is not None:
        total = None if truncated else len(out_edges)
    return {"nodes": nodes, "edges": out_edges, "truncated": truncated, "total_edges": total, "limit": limit}


def live_by_key(ctx: StoreContext, namespace: str, external_key: str) -> list[dict]:
    """The live memories of a namespace written under one external key (e.g. every rule imported
    from one file), oldest first."""
    rows = ctx.q(f"SELECT {SELECT_M_COLUMNS} FROM memories m WHERE m.namespace = ? AND m.external_key = ? AND {LIVE} "
                 f"ORDER BY m.id", (namespace, external_key))
    return [record(r) for r in rows]
