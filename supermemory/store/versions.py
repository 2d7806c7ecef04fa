"""Version chains and links: update (a new row supersedes the old), merge, forget/restore, link, history."""
from __future__ import annotations

import itertools
import json
from typing import Any, Sequence

from supermemory.config import RELATIONS
from supermemory.errors import InvalidInputError, NotFoundError
from supermemory.store import embedding, search_index, search_log, supersession, windows, writes
from supermemory.store import namespaces as nsm
from supermemory.store import records as rec_
from supermemory.store.context import StoreContext
from supermemory.store.records import LIVE, SELECT_COLUMNS, format_id, from_blob, parse_id, parse_ids, public, record
from supermemory.text import summarize
from supermemory.timeparse import iso

UNSET = object()


def head(ctx: StoreContext, memory_id: int) -> int:
    """The current version of the chain this row belongs to (the last one that exists: a `superseded_by` that names
    no memory, from a damaged store, ends the chain where it points nowhere)."""
    seen: set = set()
    last = memory_id
    while True:
        row = ctx.conn.execute("SELECT superseded_by FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if not row:
            return last
        if row[0] is None or memory_id in seen:
            return memory_id
        seen.add(memory_id)
        last, memory_id = memory_id, row[0]


def live(ctx: StoreContext, memory_id: int, namespaces: list[str] | None) -> dict:
    """The record of a live memory in `namespaces`.

    Raises:
        NotFoundError: unknown or deleted. InvalidInputError: an old version (names the current one).
    """
    rec = ctx.fetch(memory_id)
    if rec is None or (namespaces is not None and rec["namespace"] not in namespaces):
        raise _not_found(memory_id, namespaces)
    if rec["deleted_at"] is not None:
        raise NotFoundError(f"memory {format_id(memory_id)} is deleted; `restore` brings it back")
    if rec["superseded_by"] is not None:
        raise InvalidInputError(f"memory {format_id(memory_id)} was superseded; the current version is "
                                f"{format_id(head(ctx, memory_id))}")
    return rec


def visible(ctx: StoreContext, memory_id: int, namespaces: list[str] | None) -> dict:
    """The record of a row (any state) in `namespaces`. Raises NotFoundError otherwise."""
    rec = ctx.fetch(memory_id)
    if rec is None or (namespaces is not None and rec["namespace"] not in namespaces):
        raise _not_found(memory_id, namespaces)
    return rec


def _not_found(memory_id: int, namespaces: list[str] | None) -> NotFoundError:
    """"no memory M9 in namespace(s) a, global": an id in another project is not found where it was looked for."""
    return NotFoundError(f"no memory {format_id(memory_id)} in namespace(s) {', '.join(namespaces or ['*'])}")


def _stored_vectors(ctx: StoreContext, memory_id: int):
    """The vectors of a memory's first chunks, up to the first one still without a vector (None if
    the first has none): what a new version with the same text can keep."""
    import numpy as np

    rows = ctx.q("SELECT v.embedding FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id "
                 "WHERE c.memory_id = ? ORDER BY c.seq", (memory_id,))
    kept = [from_blob(r[0]) for r in itertools.takewhile(lambda r: r[0] is not None, rows)]
    if len(kept) < len(rows):
        ctx.vectors_pending = True
    return np.vstack(kept) if kept else None


def supersede(ctx: StoreContext, old_id: int, new_id: int, now: float) -> None:
    """Close `old_id` into `new_id`: out of the index, `superseded_by` set, links moved, and the links the user
    removed with them (the new version is the same memory: a pass must not link it where `unlink` said no) (in a
    txn)."""
    search_index.unindex(ctx, old_id)
    ctx.conn.execute("UPDATE memories SET superseded_by = ?, valid_to = ? WHERE id = ?", (new_id, now, old_id))
    for table in ("links", "link_removals"):
        ctx.conn.execute(f"UPDATE OR IGNORE {table} SET src = ? WHERE src = ?", (new_id, old_id))
        ctx.conn.execute(f"UPDATE OR IGNORE {table} SET dst = ? WHERE dst = ?", (new_id, old_id))


def update(ctx: StoreContext, id: Any, *, content: str | None = None, title: str | None = None,
           kind: str | None = None, tags: Sequence[str] | None = None, importance: float | None = None,
           confidence: float | None = None, pinned: bool | None = None, status: str | None = None,
           ttl_days: Any = UNSET, namespace: str | None = None, source: dict | None = None,
           force: bool = False, at: float | None = None, revise_superseded: bool = False) -> dict:
    """Revise a memory: a new row supersedes the old one (history kept, never overwritten).

    A change of metadata only (pinned, status, tags, importance, confidence, TTL) asked of an old version goes
    to the current version of its chain, and the result names the id asked (`asked`): an agent holding the id
    a recall gave it an hour ago can still pin or close it. A change of text or kind to an old version is
    refused (it would overwrite the newer text unseen).

    :param source: merged into the memory's source; its `by` (else its `platform`) names who wrote this
        version (`history` shows it) and is not carried to the next one.
    :param force: write a new version even when nothing changed (used by merge).
    :param at: when the change happened (epoch seconds; default now), e.g. a backfilled session's
        last line; never earlier than the old version's `valid_from`.
    :param revise_superseded: allow a change of text to a memory a newer one supersedes (a `supersedes` link):
        refused by default, as the edit would carry the link along and read as outdated at once; the
        import of a changed rules file passes True (the file is the source of its text).

    Raises:
        NotFoundError: unknown id. InvalidInputError: bad arguments, or no field to change given (the CLI and
        MCP refuse that too; values equal to the current ones are answered `unchanged` instead).
    """
    if not force and all(v is None for v in (content, title, kind, tags, importance, confidence, pinned, status)) \
            and ttl_days is UNSET:
        raise InvalidInputError("nothing to update: give content, title, kind, tags, importance, confidence, pinned, "
                                "status or ttl_days")
    asked = parse_id(id)
    target = asked
    if content is None and title is None and kind is None:   # a pin, status or tag change: to the current version
        rec = ctx.fetch(asked)
        if rec is not None and rec["superseded_by"] is not None and rec["deleted_at"] is None:
            target = head(ctx, asked)
    old = live(ctx, target, nsm.for_read(ctx, namespace))
    if old["namespace"] == ctx.namespace:   # a write in the project's own name: the first one claims it
        nsm.claim_default(ctx)
    if (content is not None or title is not None) and not (force or revise_superseded):
        _refuse_superseded_edit(ctx, old)
    limit = int(ctx.config.get("store.max_content_chars"))
    new_kind = rec_.kind(kind) if kind is not None else old["kind"]
    if content is not None:
        content = rec_.clean_text(content, "content", max_chars=limit)
    if title is not None:
        title = rec_.clean_text(title, "title", max_chars=500, allow_empty=True)
    if title is None and content is not None and old["title"] == summarize(old["body"], max_chars=writes.TITLE_CHARS):
        title = ""   # the old title was made from the old text: make a new one from the new text
    body, new_title, redacted, left_out = writes.prepare_content(
        ctx, content if content is not None else old["body"], title if title is not None else old["title"])
    if not body:
        raise InvalidInputError("content is empty after removing <private> spans")
    new_title = new_title or summarize(body, max_chars=writes.TITLE_CHARS)
    new_tags = (writes.prepare_tags(ctx, rec_.str_list(tags, "tags"), redacted) if tags is not None
                else json.loads(old["tags"]))
    new_importance = rec_.number(importance, "importance", 0, 1) if importance is not None else old["importance"]
    new_confidence = rec_.number(confidence, "confidence", 0, 1) if confidence is not None else old["confidence"]
    if pinned is not None and not isinstance(pinned, bool):
        raise InvalidInputError("pinned must be true or false")
    new_pinned = bool(old["pinned"]) if pinned is None else pinned
    new_status = old["status"]
    if status is not None:   # refused for a memory that is not (or would no longer be) a task
        new_status = rec_.task_status(status, new_kind, format_id(old["id"]) + (
            " is" if new_kind == old["kind"] else " would be"))
    elif new_kind == "task":    # a new text headed "Done: …" closes it, as remember reads one
        new_status = (content is not None and rec_.headed_status(content)) or new_status or "open"
    new_ttl = old["ttl_days"]
    if ttl_days is not UNSET:
        new_ttl = rec_.number(ttl_days, "ttl_days", 0, 36500) or None if ttl_days is not None else None
    new_source = dict(json.loads(old["source"] or "{}"))
    for key in ("by", "restored_by"):   # who wrote (restored) a version is that version's own, never carried on
        new_source.pop(key, None)
    if source:
        new_source.update(source)
        if not new_source.get("by") and source.get("platform"):
            new_source["by"] = source["platform"]
    digest = rec_.content_hash(new_kind, new_title, body)
    same = (digest == old["content_hash"] and new_tags == json.loads(old["tags"]) and
            new_importance == old["importance"] and new_confidence == old["confidence"] and
            new_pinned == bool(old["pinned"]) and new_status == old["status"] and new_ttl == old["ttl_days"])
    moved = {"asked": format_id(asked)} if target != asked else {}
    if same and not force:
        return {"id": format_id(old["id"]), "previous": None, "status": "unchanged", "redacted": redacted,
                "unclosed_private": left_out, **moved}
    if digest == old["content_hash"]:
        pieces = [r[0] for r in ctx.q("SELECT text FROM chunks WHERE memory_id = ? ORDER BY seq", (old["id"],))]
        vectors = _stored_vectors(ctx, old["id"])
    else:
        pieces = writes.chunk_body(ctx, body)
        vectors = embedding.embed_chunks(ctx, new_title, pieces)
    now = ctx.clock() if at is None else max(rec_.number(at, "at", 0, 1e11), old["valid_from"])
    with ctx.txn():
        current = ctx.conn.execute("SELECT superseded_by, deleted_at FROM memories WHERE id = ?",
                                   (old["id"],)).fetchone()
        if current[0] is not None or current[1] is not None:
            raise InvalidInputError(f"memory {format_id(old['id'])} changed meanwhile; fetch it again")
        new_id = writes.insert(
            ctx, namespace=old["namespace"], kind=new_kind, title=new_title, body=body, tags=new_tags,
            source=new_source, importance=new_importance, confidence=new_confidence, pinned=new_pinned,
            status=new_status, ttl_days=new_ttl, now=now, root_id=old["root_id"] or old["id"],
            external_key=old["external_key"], created_at=old["created_at"], content_hash=digest,
            pieces=pieces, vectors=vectors,
            extra={"recall_count": old["recall_count"], "last_recalled_at": old["last_recalled_at"]})
        supersede(ctx, old["id"], new_id, now)
        search_index.index_live(ctx, new_id)
        # The same body (a new title, kind or status): the same windows; else the new text's, after the write.
        copied = windows.copy(ctx, old["id"], new_id) if body == old["body"] else 0
    if not copied:
        windows.after_write(ctx, [new_id], interactive=True)
    return {"id": format_id(new_id), "previous": format_id(old["id"]), "status": "updated",
            "redacted": redacted, "unclosed_private": left_out,
            "vectors_pending": len(pieces) - len(vectors) if vectors is not None else 0, **moved}


def delete_rows(ctx: StoreContext, row_ids: Sequence[int], *, indexed: bool = True) -> None:
    """Hard-delete rows with their links (and the record of links removed from or to them), chunks and vectors
    (inside a write transaction).

    :param indexed: False for rows known to be out of the index (old versions).
    """
    for row_id in row_ids:
        if indexed:
            search_index.unindex(ctx, row_id)
        ctx.conn.execute("DELETE FROM links WHERE src = ? OR dst = ?", (row_id, row_id))
        ctx.conn.execute("DELETE FROM link_removals WHERE src = ? OR dst = ?", (row_id, row_id))
        ctx.conn.execute("DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE memory_id = ?)",
                         (row_id,))
        ctx.conn.execute("DELETE FROM chunks WHERE memory_id = ?", (row_id,))
        windows.drop(ctx, [row_id])
        ctx.conn.execute("DELETE FROM memories WHERE id = ?", (row_id,))


def soft_delete(ctx: StoreContext, memory_id: int, now: float, reason: str) -> None:
    """Out of the index, marked deleted with a reason (inside a write transaction)."""
    search_index.unindex(ctx, memory_id)
    ctx.conn.execute("UPDATE memories SET deleted_at = ?, delete_reason = ? WHERE id = ?", (now, reason, memory_id))


def _mark(ctx: StoreContext, rec: dict, **marks: str | None) -> None:
    """Who forgot or restored a row, in its source (`history` shows it); a mark of None is taken out."""
    source = json.loads(rec["source"] or "{}")
    new = {k: v for k, v in {**source, **marks}.items() if v is not None}
    if new != source:
        ctx.conn.execute("UPDATE memories SET source = ? WHERE id = ?",
                         (rec_.json_text(new, sort_keys=True), rec["id"]))


def forget(ctx: StoreContext, ids: Any, *, hard: bool = False, namespace: str | None = None,
           reason: str = "forget", by: str | None = None) -> dict:
    """Soft-delete (default) or hard-delete memories; soft deletes can be restored. `by`: who forgot them
    (`ui`), kept in the row's source as `forgotten_by`.

    Raises:
        NotFoundError: an id does not exist in the namespaces read. InvalidInputError: an old version's id, hard
            or soft (fresh-user run fu32 D5: `--hard` of one erased the current version it never named).
    """
    id_list = parse_ids(ids)
    if not id_list:
        raise InvalidInputError("ids must not be empty")
    if not isinstance(hard, bool):
        raise InvalidInputError("hard must be true or false")
    namespaces = nsm.for_read(ctx, namespace)
    now = ctx.clock()
    done = []
    erased: set[str] = set()   # the index tokens of every row a hard delete erases
    with ctx.txn():
        for memory_id in id_list:
            rec = visible(ctx, memory_id, namespaces)
            if rec["superseded_by"] is not None:    # hard too: it would erase the current version it never named
                raise InvalidInputError(f"{format_id(memory_id)} is an old version; forget the current one, "
                                        f"{format_id(head(ctx, memory_id))}" + (
                                            " (a hard delete erases its whole history with it)" if hard else ""))
            if hard:
                rows = _whole_history(ctx, rec)
                for row in map(ctx.fetch, rows):
                    erased.update(rec_.fts_tokens(row["title"], row["tags"], row["body"]).split())
                delete_rows(ctx, rows)
                done.append(format_id(memory_id))
                continue
            if rec["deleted_at"] is None:
                soft_delete(ctx, memory_id, now, reason)
                _mark(ctx, rec, forgotten_by=by)
            done.append(format_id(memory_id))
        if hard:
            search_log.forget_erased_words(ctx, erased)
    if hard:
        search_index.erase_freed_text(ctx)
    return {"forgotten": done, "hard": hard}


def _whole_history(ctx: StoreContext, rec: dict) -> list[int]:
    """Every row a hard delete of `rec` erases: its chain and the memories merged into it, with their older
    versions (rows whose successors lead into the chain); left behind, their text outlived the delete, pointing
    at a row that no longer exists."""
    root = rec["root_id"] or rec["id"]
    found = {r[0] for r in ctx.conn.execute("SELECT id FROM memories WHERE id = ? OR root_id = ? OR id = ?",
                                            (root, root, rec["id"]))}
    frontier = list(found)
    while frontier:
        frontier = [r[0] for r in ctx.conn.execute(
            "SELECT id FROM memories WHERE superseded_by IN (SELECT value FROM json_each(?))",
            (json.dumps(frontier),)) if r[0] not in found]
        found.update(frontier)
    return sorted(found)


def restore(ctx: StoreContext, ids: Any, *, namespace: str | None = None, by: str | None = None) -> dict:
    """Bring soft-deleted or archived memories back, refreshing their access time. `by`: who restored them,
    kept in the row's source as `restored_by` (its `forgotten_by` goes).

    Raises:
        NotFoundError: unknown id, or it was hard-deleted.
    """
    id_list = parse_ids(ids)
    namespaces = nsm.for_read(ctx, namespace)
    now = ctx.clock()
    restored = []
    with ctx.txn():
        for memory_id in id_list:
            rec = visible(ctx, memory_id, namespaces)
            if rec["deleted_at"] is None:
                continue
            ctx.conn.execute("UPDATE memories SET deleted_at = NULL, delete_reason = NULL, "
                             "last_recalled_at = ? WHERE id = ?", (now, memory_id))
            _mark(ctx, rec, forgotten_by=None, restored_by=by)
            if rec["superseded_by"] is None:
                search_index.index_live(ctx, memory_id)
            restored.append(format_id(memory_id))
    return {"restored": restored}


def link(ctx: StoreContext, src: Any, dst: Any, *, relation: str = "related", weight: float = 1.0,
         namespace: str | None = None) -> dict:
    """Record a typed relation between two live memories (idempotent; weight updated). The user's word: it takes
    back an earlier `unlink` of the same relation (its record in `link_removals`), which the automatic writers of
    `supersedes` links respect.

    A `supersedes` link that would close a cycle (DST already supersedes SRC, directly or through other live
    memories) is refused, as `merge` refuses its own case: each memory would mark the other outdated, the stale
    fact would rank as current and the correction drop out of the briefing.

    Raises:
        InvalidInputError: unknown relation, a self-link, ids of two namespaces, or a `supersedes` link that
            closes a cycle. NotFoundError: unknown ids.
    """
    if relation not in RELATIONS:
        raise InvalidInputError(f"relation must be one of {', '.join(RELATIONS)}")
    weight = rec_.number(weight, "weight", 0, 100)
    namespaces = nsm.for_read(ctx, namespace)
    a = live(ctx, parse_id(src), namespaces)
    b = live(ctx, parse_id(dst), namespaces)
    if a["id"] == b["id"]:
        raise InvalidInputError("a memory cannot link to itself")
    if a["namespace"] != b["namespace"]:    # as merge: a link would change what the other project's recall shows
        raise InvalidInputError(
            f"{format_id(a['id'])} is in namespace {a['namespace']!r} and {format_id(b['id'])} in "
            f"{b['namespace']!r}: a link joins memories of one namespace (a project's, or global's); a link across two "
            f"would change what the other one's recall and briefing show")
    back = supersedes_path(ctx, b["id"], a["id"]) if relation == "supersedes" else []
    if back:
        _refuse_cycle(a, b, back)
    with ctx.txn():
        before = ctx.conn.execute("SELECT weight FROM links WHERE src = ? AND dst = ? AND relation = ?",
                                  (a["id"], b["id"], relation)).fetchone()
        ctx.conn.execute("INSERT INTO links(src, dst, relation, weight, created_at) VALUES (?,?,?,?,?) "
                         "ON CONFLICT(src, dst, relation) DO UPDATE SET weight = excluded.weight",
                         (a["id"], b["id"], relation, weight, ctx.clock()))
        ctx.conn.execute("DELETE FROM link_removals WHERE src = ? AND dst = ? AND relation = ?",
                         (a["id"], b["id"], relation))
    status = "created" if before is None else "unchanged" if before[0] == weight else "updated"   # fu38 D8
    return {"src": format_id(a["id"]), "dst": format_id(b["id"]), "relation": relation, "weight": weight,
            "status": status}


def unlink(ctx: StoreContext, src: Any, dst: Any, *, relation: str | None = None,
           namespace: str | None = None) -> dict:
    """Remove the relation(s) recorded from SRC to DST: one `relation`, or every relation when None. Each relation
    removed is recorded in `link_removals` (the pair, the relation, when), so `remember` and the `supersedes`
    backfill passes never write it again; an explicit `link` of the pair takes the record out.

    :returns: {"src", "dst", "removed": [relations removed]}.
    Raises:
        InvalidInputError: unknown relation. NotFoundError: unknown ids, or no such link.
    """
    if relation is not None and relation not in RELATIONS:
        raise InvalidInputError(f"relation must be one of {', '.join(RELATIONS)}")
    namespaces = nsm.for_read(ctx, namespace)
    a = visible(ctx, parse_id(src), namespaces)
    b = visible(ctx, parse_id(dst), namespaces)
    which = "" if relation is None else " AND relation = ?"
    params = [a["id"], b["id"]] + ([relation] if relation is not None else [])
    with ctx.txn():
        removed = [r[0] for r in ctx.conn.execute(
            f"SELECT relation FROM links WHERE src = ? AND dst = ?{which} ORDER BY relation", params)]
        ctx.conn.execute(f"DELETE FROM links WHERE src = ? AND dst = ?{which}", params)
        now = ctx.clock()
        ctx.conn.executemany("INSERT INTO link_removals(src, dst, relation, removed_at) VALUES (?, ?, ?, ?) "
                             "ON CONFLICT(src, dst, relation) DO UPDATE SET removed_at = excluded.removed_at",
                             [(a["id"], b["id"], r, now) for r in removed])
    if not removed:
        raise NotFoundError(f"no {relation + ' ' if relation else ''}link from {format_id(a['id'])} to "
                            f"{format_id(b['id'])}")
    return {"src": format_id(a["id"]), "dst": format_id(b["id"]), "removed": removed}


def _through(path: list[int]) -> str:
    """The " (through M3, M4)" of a message: the memories between the two ends of a `supersedes` path, if any."""
    return f" (through {', '.join(format_id(m) for m in path[1:-1])})" if len(path) > 2 else ""


def _refuse_cycle(a: dict, b: dict, back: list[int]) -> None:
    """The error of a `supersedes` link from A to B while B already supersedes A along `back` (B … A)."""
    A, B, last = format_id(a["id"]), format_id(b["id"]), format_id(back[-2])
    raise InvalidInputError(
        f"cannot link {A} supersedes {B}: {B} already supersedes {A}{_through(back)}, so the link would close a cycle "
        f"and each would mark the other outdated. If {B} ({b['title']!r}) is the newer fact, the links already "
        f"say so; if {A} ({a['title']!r}) is, remove the existing link first (`supermemory unlink {last} {A} "
        f"--relation supersedes`; MCP: memory_link src {last}, dst {A}, relation supersedes, remove true), "
        f"then link again")


def supersedes_cycles(ctx: StoreContext, namespaces: list[str] | None, limit: int = 50) -> list[dict]:
    """`supersedes` links between live memories of `namespaces` that go round in a circle (written before `link`
    refused them, or by an import): each memory of one marks the next outdated, so the stale fact can rank as
    current. One cycle per group of memories caught in one, its ids in link order (each supersedes the next,
    the last the first), with their titles: for `health`, which says to remove the wrong link.
    """
    ns_sql, ns_params = nsm.clause(namespaces)
    edges: dict[int, list[int]] = {}
    titles: dict[int, str] = {}
    for src, dst, src_title, dst_title in ctx.q(
            f"SELECT l.src, l.dst, m.title, n.title FROM links l JOIN memories m ON m.id = l.src "
            f"JOIN memories n ON n.id = l.dst WHERE l.relation = 'supersedes' AND {LIVE} "
            f"AND n.superseded_by IS NULL AND n.deleted_at IS NULL AND {ns_sql} ORDER BY l.src, l.dst", ns_params):
        edges.setdefault(src, []).append(dst)
        titles[src], titles[dst] = src_title, dst_title
    cycles, seen = [], set()
    for start in sorted(edges):
        if start in seen or len(cycles) >= limit:
            continue
        ring = _shortest_path(start, start, lambda frontier: ((src, dst) for src in frontier
                                                              for dst in edges.get(src, ())))[:-1]
        if not ring or seen.intersection(ring):
            continue
        seen.update(ring)
        cycles.append({"ids": [format_id(m) for m in ring], "titles": [titles[m] for m in ring]})
    return cycles


def links_of(ctx: StoreContext, memory_id: int) -> list[dict]:
    rows = ctx.q("SELECT src, dst, relation, weight FROM links WHERE src = ? OR dst = ?", (memory_id, memory_id))
    return [{"src": format_id(s), "dst": format_id(d), "relation": r, "weight": w} for s, d, r, w in rows]


def merge(ctx: StoreContext, keep: Any, other: Any, *, content: str | None = None,
          namespace: str | None = None) -> dict:
    """Close OTHER into KEEP: KEEP gets a new version (tags unioned, links moved, optional new text);
    OTHER is superseded by it, so both bodies stay in history. Never automatic, and only within one namespace
    (two projects' memories are kept apart: merging would move one project's memory into the other's).

    Refused when OTHER supersedes KEEP (a `supersedes` link from OTHER leads to KEEP, directly or through other
    live memories): KEEP is then the stale fact, and a merge would make its text current and OTHER, the
    correction, history, without a word. The error names the newer memory and both ways on: merge the other
    way round, or remove the link first when it is wrong.

    Raises:
        InvalidInputError: same id twice, ids of two namespaces, or OTHER supersedes KEEP. NotFoundError:
            unknown ids.
    """
    namespaces = nsm.for_read(ctx, namespace)
    a = live(ctx, parse_id(keep), namespaces)
    b = live(ctx, parse_id(other), namespaces)
    if a["id"] == b["id"]:
        raise InvalidInputError("cannot merge a memory into itself")
    if a["namespace"] != b["namespace"]:
        raise InvalidInputError(
            f"cannot merge {format_id(b['id'])} (namespace {b['namespace']!r}) into {format_id(a['id'])} "
            f"(namespace {a['namespace']!r}): merge joins memories of one namespace; each project keeps its own, "
            f"or `forget` the one that is not needed")
    newer = supersedes_path(ctx, b["id"], a["id"])
    if newer:
        raise InvalidInputError(
            f"cannot merge {format_id(b['id'])} into {format_id(a['id'])}: {format_id(b['id'])} supersedes "
            f"{format_id(a['id'])}{_through(newer)}, so {format_id(b['id'])} holds the newer fact ({b['title']!r}) and "
            f"keeping {format_id(a['id'])} would make the older one ({a['title']!r}) current again. Merge the "
            f"other way round (keep {format_id(b['id'])}, other {format_id(a['id'])}; give content to reword it), "
            f"or, if the supersedes link is wrong, unlink {format_id(newer[-2])} {format_id(a['id'])} "
            f"(relation supersedes) first")
    tags = json.loads(a["tags"]) + [t for t in json.loads(b["tags"]) if t not in json.loads(a["tags"])]
    result = update(ctx, a["id"], content=content, tags=tags, importance=max(a["importance"], b["importance"]),
                    pinned=bool(a["pinned"] or b["pinned"]), namespace="*", force=True)
    new_id = parse_id(result["id"])
    now = ctx.clock()
    with ctx.txn():
        supersede(ctx, b["id"], new_id, now)
        ctx.conn.execute("DELETE FROM links WHERE src = dst")
        ctx.conn.execute("DELETE FROM link_removals WHERE src = dst")
        ctx.conn.execute("DELETE FROM links WHERE src = ? OR dst = ?", (b["id"], b["id"]))
        ctx.conn.execute("INSERT OR IGNORE INTO links(src, dst, relation, weight, created_at) VALUES (?,?,?,?,?)",
                         (new_id, b["id"], "supersedes", 1.0, now))
    return {"id": format_id(new_id), "kept": format_id(a["id"]), "merged": format_id(b["id"])}


def _refuse_superseded_edit(ctx: StoreContext, old: dict) -> None:
    """Refuse a text edit of a memory a newer one supersedes: the new version would stay marked outdated by the
    correction (recall demotes it, the briefing shows it as "was: …" under the correction), so the edit belongs
    to the correction, or the link goes first when it is wrong."""
    from supermemory.store import supersession

    newer = supersession.successors(ctx, [old["id"]]).get(old["id"])
    if newer is None:
        return
    title = (ctx.fetch(newer) or {}).get("title") or ""
    raise InvalidInputError(
        f"{format_id(old['id'])} is superseded by {format_id(newer)} ('{title[:80]}'), which holds the newer fact: "
        f"an edit here would still read as outdated. Update {format_id(newer)} instead, or, if the supersedes link "
        f"is wrong, unlink {format_id(newer)} {format_id(old['id'])} (relation supersedes) first")


def supersedes_path(ctx: StoreContext, newer: int, older: int, limit: int = 1000) -> list[int]:
    """The ids from `newer` to `older` along `supersedes` links between live memories (breadth first, the
    shortest), or [] when none leads there: whether the memory kept by a merge is one the other corrects."""
    def step(frontier: list[int]):
        marks = ",".join("?" * len(frontier))
        return ctx.q(f"SELECT l.src, l.dst FROM links l JOIN memories m ON m.id = l.dst "
                     f"WHERE l.relation = 'supersedes' AND l.src IN ({marks}) "
                     f"AND m.superseded_by IS NULL AND m.deleted_at IS NULL ORDER BY l.dst", frontier)
    return _shortest_path(newer, older, step, limit)


def _shortest_path(start: int, goal: int, step, limit: int = 1000) -> list[int]:
    """The ids from `start` to `goal` along the links `step(frontier)` yields as (src, dst) pairs out of a frontier,
    breadth first (the shortest), or [] when none leads there; `goal` may be `start` itself (a cycle through it)."""
    came_from: dict[int, int | None] = {start: None}
    frontier = [start]
    while frontier and len(came_from) < limit:
        nxt = []
        for src, dst in step(frontier):
            if dst == goal:
                path = [src]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])
                return path[::-1] + [goal]
            if dst not in came_from:
                came_from[dst] = src
                nxt.append(dst)
        frontier = nxt
    return []


def history(ctx: StoreContext, id: Any, *, namespace: str | None = None) -> dict:
    """Every version of a memory's chain, oldest first, the in-place redactions of any of
    them (`redactions`: id, at, types, fields rewritten) and the links from or to any of them
    (`links`: a `supersedes` link written by `remember` shows here), and the live memory that supersedes the current
    version (`superseded_by`, as `get` says it: fresh-user run fu29 D7). A memory merged into the chain is listed
    with `merged_into`, and the version the merge wrote names it under `merged_from`.

    Raises:
        NotFoundError: unknown id.
    """
    memory_id = parse_id(id)
    visible(ctx, memory_id, nsm.for_read(ctx, namespace))
    current = head(ctx, memory_id)   # a memory merged away lives on in the chain it was merged into: show that one
    top = ctx.fetch(current)
    root = top["root_id"] or top["id"]
    recs = [record(row) for row in ctx.q(f"SELECT {SELECT_COLUMNS} FROM memories WHERE id IN "
                                         f"(SELECT value FROM json_each(?))", (json.dumps(_whole_history(ctx, top)),))]
    chain = {r["id"] for r in recs if (r["root_id"] or r["id"]) == root}   # the rest: memories merged in, and theirs
    versions = []
    for rec in recs:
        item = public(rec)
        if rec["id"] not in chain and rec["superseded_by"] in chain:   # closed into the chain from another one
            item["merged_into"] = item["superseded_by"]
        versions.append(item)
    versions.sort(key=lambda v: (v["valid_from"] or "", int(v["id"][1:])))
    closed_into: dict[str, list[str]] = {}
    for item in versions:
        if item.get("merged_into"):
            closed_into.setdefault(item["merged_into"], []).append(item["id"])
    for item in versions:   # the version a merge wrote names what it took in: a history says what the step did
        if not item.get("merged_into") and item["id"] in closed_into:
            item["merged_from"] = closed_into[item["id"]]
    ids = [parse_id(v["id"]) for v in versions]
    redactions = [{"id": format_id(row_id), "at": iso(at), "types": json.loads(types), "fields": json.loads(fields)}
                  for row_id, at, types, fields in ctx.q(
                      f"SELECT memory_id, at, types, fields FROM redactions WHERE memory_id IN "
                      f"({','.join('?' * len(ids))}) ORDER BY at, id", ids)]
    marks = ",".join("?" * len(ids))
    links = [{"src": format_id(s), "dst": format_id(d), "relation": r, "weight": w} for s, d, r, w in ctx.q(
        f"SELECT src, dst, relation, weight FROM links WHERE src IN ({marks}) OR dst IN ({marks}) "
        f"ORDER BY created_at, src, dst", ids + ids)]
    out = {"id": format_id(memory_id), "current": format_id(current), "versions": versions,
           "redactions": redactions, "links": links}
    if successor := supersession.successors(ctx, [current]).get(current):   # as `get` and `list` say it
        out["superseded_by"] = format_id(successor)
        seen, latest = {current, successor}, successor     # superseded in turn: the memory that holds it now (fu37 D11)
        while (later := supersession.successors(ctx, [latest]).get(latest)) is not None and later not in seen:
            seen.add(later)
            latest = later
        if latest != successor:
            out["now_held_by"] = format_id(latest)
    return out
