"""A store over time: counts, the stale sweep, maintenance (TTL, purge, trims, the one-time passes), health."""
from __future__ import annotations

import contextlib
import logging
import os
import time
from typing import Callable

from supermemory.config import ALL_NAMESPACES
from supermemory.errors import EmbeddingUnavailableError, ModelMismatchError, StorageError
from supermemory.redact import RULES_VERSION, rules_fingerprint
from supermemory.stats import percentile
from supermemory.store import db as dbm
from supermemory.store import embedding, redaction, search_log, supersession, versions, windows, writes
from supermemory.store import namespaces as nsm
from supermemory.store import records as rec_
from supermemory.store.context import StoreContext
from supermemory.store.records import LIVE, format_id, from_blob
from supermemory.text.summary import SUMMARY_VERSION, summarize
from supermemory.timeparse import iso

logger = logging.getLogger(__name__)


def _merges(rows: list, first, second, cosines) -> list[tuple]:
    """The merges that fold near-duplicate pairs (closest first) into one memory per group of copies: each group's
    memory to keep (the weightiest: importance, then pinned, then newest) and each other member with its best
    similarity to a member, closest first (fresh-user run fu38 D5: six copies listed as fifteen pairs whose "keep"
    advice disagreed, and the second merge failed on an id the first had closed)."""
    parent: dict[int, int] = {}

    def root(i: int) -> int:
        while parent.setdefault(i, i) != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    best: dict[int, float] = {}
    for a, b, similarity in zip(first.tolist(), second.tolist(), cosines.tolist()):
        parent[root(a)] = root(b)
        for i in (a, b):
            best[i] = max(best.get(i, -1.0), similarity)
    groups: dict[int, list[int]] = {}
    for i in best:
        groups.setdefault(root(i), []).append(i)
    out = []
    for members in groups.values():
        keep = max(members, key=lambda i: (rows[i][2], rows[i][3], rows[i][4]))
        out += [(rows[keep], rows[i], best[i]) for i in members if i != keep]
    return sorted(out, key=lambda item: -item[2])


def stats(ctx: StoreContext, *, namespace: str | None = None) -> dict:
    """Counts by kind and namespace, DB size, embedder, search-log figures; a named namespace that holds no
    memory is refused as recall and list refuse it (a typo, not an empty project)."""
    namespaces = nsm.for_read(ctx, namespace, must_exist=True)
    ns_sql, ns_params = nsm.clause(namespaces)
    by_kind = dict(ctx.q(f"SELECT m.kind, count(*) FROM memories m WHERE {LIVE} AND {ns_sql} GROUP BY m.kind",
                         ns_params))
    by_ns = dict(ctx.q(f"SELECT m.namespace, count(*) FROM memories m WHERE {LIVE} AND {ns_sql} "
                       f"GROUP BY m.namespace", ns_params))
    history = ctx.q(f"SELECT count(*) FROM memories m WHERE m.superseded_by IS NOT NULL AND {ns_sql}", ns_params)[0][0]
    deleted = ctx.q(f"SELECT count(*) FROM memories m WHERE m.deleted_at IS NOT NULL AND {ns_sql}", ns_params)[0][0]
    stale = supersession.superseded_count(ctx, ns_sql, ns_params)
    log = search_log.figures(ctx, namespaces)
    searches = len(log["hits"])
    size = 0
    if ctx.path != ":memory:":
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                size += os.path.getsize(ctx.path + suffix)
    return {
        "namespace": namespaces or [ALL_NAMESPACES],
        "memories": sum(by_kind.values()), "by_kind": by_kind, "by_namespace": by_ns,
        "versions_superseded": history, "superseded_by_links": stale, "deleted": deleted, "db_bytes": size, "db_path": ctx.path,
        "embedder": embedding.pinned_model(ctx), "driver": ctx.driver.name,
        "vector_index": "sqlite-vec" if ctx.driver.vec else "numpy brute force",
        "searches": searches,
        "empty_result_rate": round(sum(1 for h in log["hits"] if h == 0) / searches, 4) if searches else 0.0,
        "mean_hits": round(sum(log["hits"]) / searches, 3) if searches else 0.0,
        "latency_ms_p50": percentile(log["latencies"], 50, digits=3),
        "latency_ms_p95": percentile(log["latencies"], 95, digits=3),
        "recent_empty_queries": log["recent_empty"],
    }


def sweep(ctx: StoreContext, *, stale_days: float | None = None, importance_floor: float | None = None,
          apply: bool = False, namespace: str | None = None, sample: int = 20) -> dict:
    """Archive memories that are stale AND unimportant (never pinned); dry run unless `apply`.

    `matched` is exactly what `apply` archives; `sample` lists the stalest first.
    """
    stale_days = rec_.number(stale_days if stale_days is not None else ctx.config.get("lifecycle.stale_days"),
                             "stale_days", 0, 36500)
    floor = rec_.number(importance_floor if importance_floor is not None else
                        ctx.config.get("lifecycle.importance_floor"), "importance_floor", 0, 1)
    now = ctx.clock()
    ns_sql, ns_params = nsm.clause(nsm.for_read(ctx, namespace))
    where = (f"{LIVE} AND {ns_sql} AND m.pinned = 0 AND m.importance <= ? AND "
             f"max(m.updated_at, coalesce(m.last_recalled_at, 0)) < ?")
    params = ns_params + [floor, now - stale_days * 86400]

    def select():
        return ctx.conn.execute(f"SELECT m.id, m.kind, m.title, max(m.updated_at, coalesce(m.last_recalled_at, 0)) "
                                f"AS used FROM memories m WHERE {where} ORDER BY used, m.id", params).fetchall()

    if not apply:
        rows = select()
    else:
        with ctx.txn():
            rows = select()
            for memory_id, *_ in rows:
                versions.soft_delete(ctx, memory_id, now, "archived")
    return {"matched": len(rows), "applied": bool(apply), "stale_days": stale_days, "importance_floor": floor,
            "sample": [{"id": format_id(r[0]), "kind": r[1], "title": r[2], "last_used": iso(r[3])}
                       for r in rows[:sample]],
            "truncated": len(rows) > sample}


def maintenance(ctx: StoreContext, *, sweep_stale: bool = False, redact: bool | None = None,
                deadline: float | None = None, progress: Callable[[int, int], None] | None = None) -> dict:
    """Expire TTLs, purge old soft-deletes, trim the search log, optimise FTS, checkpoint WAL, run the one-time
    passes a new version brings (`one_time_passes`: re-redaction after the redaction rules changed, the summaries
    after `text.summary.SUMMARY_VERSION` changed, the `supersedes` links of memories stored before `remember`
    wrote them), and embed the chunks still without a vector (`fill_vectors`).

    :param redact: True re-redacts now, False never; None (default) when the rules changed
        since the last pass and `store.redact_secrets` is on.
    :param deadline: `time.monotonic()` value by which the summaries, the links pass and the vectors stop
        (they go on next time).
    :param progress: `progress(done, total)` while the chunks without a vector are embedded.
    :returns: counts, and `supersedes`: the links the links pass wrote (`src`, `dst`, their titles), the first
        `NAMED_LINKS`.
    """
    now = ctx.clock()
    retention = float(ctx.config.get("lifecycle.purge_after_days")) * 86400
    with ctx.txn():
        expired = [r[0] for r in ctx.conn.execute(
            f"SELECT m.id FROM memories m WHERE {LIVE} AND m.expires_at IS NOT NULL AND m.expires_at <= ?", (now,))]
        for memory_id in expired:
            versions.soft_delete(ctx, memory_id, now, "expired")
    old = [r[0] for r in ctx.q("SELECT id FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? "
                               "AND coalesce(delete_reason, 'forget') IN ('forget', 'expired')",
                               (now - retention,))]
    if old:
        versions.forget(ctx, old, hard=True, namespace="*")
    pruned = _prune_session_versions(ctx, keep=int(ctx.config.get("lifecycle.session_versions_kept")))
    with ctx.txn():
        trimmed = search_log.trim(ctx)
        ctx.conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    swept = sweep(ctx, apply=True, namespace="*")["matched"] if sweep_stale else 0
    passes = one_time_passes(ctx, redact=redact, deadline=deadline)
    unwindowed = windows.waiting(ctx)
    vectors = fill_vectors(ctx, deadline=deadline, progress=progress)
    if ctx.path != ":memory:":
        with contextlib.suppress(ctx.driver.Error):
            ctx.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    return {"expired": len(expired), "purged": len(old), "log_trimmed": max(0, trimmed), "swept": swept,
            "session_versions_pruned": pruned, "redacted": passes["redacted"], "summaries": passes["summaries"],
            "supersedes_links": passes["supersedes_links"], "vectors_embedded": vectors,
            "windows_embedded": unwindowed - windows.waiting(ctx),
            "supersedes": passes["supersedes"], "passes_pending": passes["pending"]}


NAMED_LINKS = 200   # the links a pass wrote that its result names (the count counts them all)
REDACTION_VERSION_KEY = "redaction_rules_version"   # meta: "<redact.RULES_VERSION> <fingerprint>" of the last pass


def one_time_passes(ctx: StoreContext, *, redact: bool | None = None, deadline: float | None = None) -> dict:
    """The passes a new version brings to a store once (what `maintenance` runs, and install.py after an upgrade):
    re-redaction of stored text after the rule table changed (`redaction.redact_stored`, not bounded by
    `deadline`), the stored summaries after `SUMMARY_VERSION` changed (`refresh_summaries`) and the `supersedes`
    links of memories stored before `remember` wrote them (`supersession.backfill`). The last two stop at
    `deadline` and go on from there next time. Stamps a newer version wrote are left alone (`newer_stamps`).

    :param redact: True re-redacts now, False never; None when the rules changed since the last pass (and were
        not last applied by a newer version) and `store.redact_secrets` is on.
    :returns: `redacted` (rows), `summaries`, `supersedes_links` (counts), `supersedes` (the links written, the
        first `NAMED_LINKS`: `src`, `dst`, `titles` [src's, dst's]) and `pending`: the passes still to run.
    """
    redacted = 0
    enabled = bool(ctx.config.get("store.redact_secrets"))
    newer = newer_stamps(ctx)
    if redact or (redact is None and enabled and redaction.is_stale(ctx) and "redaction rules" not in newer):
        redacted = redaction.redact_stored(ctx)["rows"]
        with ctx.txn():
            dbm.set_meta(ctx.conn, REDACTION_VERSION_KEY, f"{RULES_VERSION} {rules_fingerprint()}")
    elif redact is None and not enabled and not redaction.is_stale(ctx):
        with ctx.txn():   # text written from now on is not redacted: re-check it once re-enabled
            ctx.conn.execute("DELETE FROM meta WHERE key = ?", (redaction.STAMP_KEY,))
    summaries = refresh_summaries(ctx, deadline=deadline)
    last = ctx.q("SELECT coalesce(max(rowid), 0) FROM links")[0][0]
    links = supersession.backfill(ctx, deadline=deadline)
    named = [{"src": format_id(src), "dst": format_id(dst), "titles": [new, old]} for src, dst, new, old in ctx.q(
        "SELECT l.src, l.dst, m.title, n.title FROM links l JOIN memories m ON m.id = l.src "
        "JOIN memories n ON n.id = l.dst WHERE l.rowid > ? AND l.relation = ? ORDER BY l.rowid LIMIT ?",
        (last, supersession.RELATION, NAMED_LINKS))] if links else []
    return {"redacted": redacted, "summaries": summaries, "supersedes_links": links, "supersedes": named,
            "pending": pending_passes(ctx)}


def stamp_new_store(ctx: StoreContext) -> None:
    """Mark every one-time pass done on a store this version creates (inside its first write transaction): what
    it stores is redacted, summarised and (while `supersession.enabled`) linked by this version's rules, so
    nothing is pending (`doctor` and `health` said "passes pending" of a new user's first memories)."""
    redaction.stamp(ctx)
    dbm.set_meta(ctx.conn, REDACTION_VERSION_KEY, f"{RULES_VERSION} {rules_fingerprint()}")
    dbm.set_meta(ctx.conn, SUMMARY_STAMP, SUMMARY_VERSION)
    if ctx.config.get("supersession.enabled"):   # else its writes link nothing: the backfill runs once it is on
        for stamp, *_ in supersession.PASSES:
            dbm.set_meta(ctx.conn, stamp, "1")


def pending_passes(ctx: StoreContext) -> list[str]:
    """The one-time passes (`one_time_passes`) this store still needs, by name, in the order they run: a store
    written by an older version has them until the first `maintenance` (the SessionEnd hook, `supermemory
    maintenance`, install.py after an upgrade); a store without memories needs none."""
    if not ctx.q("SELECT 1 FROM memories LIMIT 1"):
        return []
    pending = []
    newer = newer_stamps(ctx)
    if ctx.config.get("store.redact_secrets") and redaction.is_stale(ctx) and "redaction rules" not in newer:
        pending.append("re-redaction")
    if dbm.get_meta(ctx.conn, SUMMARY_STAMP) != SUMMARY_VERSION and "summaries" not in newer:
        pending.append("summaries")
    if ctx.config.get("supersession.enabled") and ctx.q(
            f"SELECT 1 FROM memories m WHERE {LIVE} AND m.kind != 'session' LIMIT 1"):
        for stamp, _, _, name in supersession.PASSES:
            if not dbm.get_meta(ctx.conn, stamp):
                pending.append(name)
    return pending


def newer_stamps(ctx: StoreContext) -> list[str]:
    """The one-time passes whose stamp a newer version wrote (`summaries`: a `SUMMARY_VERSION` above ours;
    `redaction rules`: a rule table version above ours, still the one in force): this version leaves them alone
    instead of redoing them its own way (and the newer one redoing them again at its next run)."""
    def number(text) -> int | None:
        return int(text) if isinstance(text, str) and text.isdigit() else None

    newer = []
    summary = number(dbm.get_meta(ctx.conn, SUMMARY_STAMP))
    if summary is not None and summary > int(SUMMARY_VERSION):
        newer.append("summaries")
    version, _, fingerprint = (dbm.get_meta(ctx.conn, REDACTION_VERSION_KEY) or "").partition(" ")
    rules = number(version)
    if rules is not None and rules > RULES_VERSION and fingerprint == dbm.get_meta(ctx.conn, redaction.STAMP_KEY):
        newer.append("redaction rules")
    return newer


SUMMARY_STAMP = "summary_version"   # meta: the `SUMMARY_VERSION` the stored summaries were made by
SUMMARY_CURSOR = "summary_refresh_at"   # meta: the last row id a pass that ran out of time has refreshed


def refresh_summaries(ctx: StoreContext, *, deadline: float | None = None, batch: int = 500) -> int:
    """Recompute every row's stored summary as `remember` makes it now, once per `SUMMARY_VERSION` (stamp
    `meta.summary_version`), in batches of one transaction each; returns the rows changed. Summaries are not
    indexed: nothing else to redo.

    :param deadline: `time.monotonic()` value after which no batch starts (the pass goes on from there next time).
    """
    if dbm.get_meta(ctx.conn, SUMMARY_STAMP) == SUMMARY_VERSION or "summaries" in newer_stamps(ctx):
        return 0
    changed, after = 0, int(dbm.get_meta(ctx.conn, SUMMARY_CURSOR) or 0)
    while deadline is None or time.monotonic() < deadline:
        with ctx.txn():
            rows = ctx.conn.execute("SELECT id, title, substr(ltrim(body, char(32, 9, 10, 13)), 1, 2000), summary "
                                    "FROM memories WHERE id > ? ORDER BY id LIMIT ?", (after, batch)).fetchall()
            for memory_id, title, body, summary in rows:
                fresh = summarize(body) if body else summarize(title)
                if fresh != summary:
                    ctx.conn.execute("UPDATE memories SET summary = ? WHERE id = ?", (fresh, memory_id))
                    changed += 1
            if len(rows) < batch:
                dbm.set_meta(ctx.conn, SUMMARY_STAMP, SUMMARY_VERSION)
                ctx.conn.execute("DELETE FROM meta WHERE key = ?", (SUMMARY_CURSOR,))
                break
            after = rows[-1][0]
            dbm.set_meta(ctx.conn, SUMMARY_CURSOR, str(after))
    return changed


def fill_vectors(ctx: StoreContext, *, deadline: float | None = None, limit: int | None = None,
                 if_changed: bool = False, progress: Callable[[int, int], None] | None = None) -> int:
    """Give vectors to the chunks still without one (the rest of a long text, or text written while no
    model could run), until `deadline` or about `limit` chunks; returns how many. No embedder, or one
    the database is not pinned to, leaves them for later (said on stderr), as does a locked database.

    :param if_changed: when this store already found nothing to do, look again only if another process
        committed since (one `PRAGMA data_version`): what the MCP server checks after each tool call.
    """
    try:
        if if_changed and ctx.vectors_pending is False and not embedding.others_wrote_since_look(ctx):
            return 0
        return embedding.embed_missing_vectors(ctx, deadline=deadline, limit=limit, progress=progress)
    except (EmbeddingUnavailableError, ModelMismatchError, StorageError) as exc:
        # not again until a write leaves chunks waiting, another process commits, or the next maintenance
        with contextlib.suppress(StorageError):
            embedding.note_nothing_pending(ctx)
        logger.info("chunks without a vector stay so for now (keyword search still finds them): %s", exc)
        return 0


def _prune_session_versions(ctx: StoreContext, *, keep: int) -> int:
    """Session memories get a new version at every capture (Codex: every turn); keep only the
    newest `keep` superseded versions of each session chain."""
    with ctx.txn():
        doomed = [r[0] for r in ctx.conn.execute(
            "SELECT m.id FROM memories m WHERE m.kind = 'session' AND m.superseded_by IS NOT NULL AND "
            "(SELECT count(*) FROM memories n WHERE coalesce(n.root_id, n.id) = coalesce(m.root_id, m.id) "
            "AND n.superseded_by IS NOT NULL AND n.id > m.id) >= ?", (keep,))]
        versions.delete_rows(ctx, doomed, indexed=False)
    return len(doomed)


def rule_conflicts(ctx: StoreContext, rows: list, matrix, ns_sql: str, ns_params: list, *,
                   similarity: float) -> list[dict]:
    """Memories written after an imported rule (`supermemory import-rules`) that are close to it
    and say the opposite: one of the two negates or announces a change, the other does not."""
    from supermemory.text.traits import has_revision_marker, negates

    if matrix is None:
        return []
    import numpy as np

    rules = {r[0]: r[1:] for r in ctx.q(f"SELECT m.id, m.created_at, m.body, m.title, m.external_key FROM memories m "
                                         f"WHERE {LIVE} AND {ns_sql} AND m.external_key LIKE 'rules:%'", ns_params)}
    index = {row[0]: i for i, row in enumerate(rows)}
    out = []
    for rule_id, (rule_at, rule_body, rule_title, key) in rules.items():
        if rule_id not in index:
            continue
        cosines = matrix @ matrix[index[rule_id]]
        for i in (int(j) for j in np.nonzero(cosines >= similarity)[0]):
            other = rows[i][0]
            if other in rules:
                continue
            rec = ctx.fetch(other)
            if rec is None or rec["kind"] == "session" or rec["created_at"] < rule_at:
                continue
            if negates(rec["body"]) == negates(rule_body) and not has_revision_marker(rec["body"]):
                continue
            out.append({"memory": format_id(other), "rule": format_id(rule_id), "similarity": round(float(cosines[i]), 4),
                        "file": key[len("rules:"):], "titles": [rec["title"], rule_title]})
    out.sort(key=lambda c: -c["similarity"])
    return out


def similar_pairs(matrix, threshold: float, block: int = 1024):
    """Every pair of rows (a < b) of a matrix of unit vectors whose cosine reaches `threshold`, as three
    arrays (a, b, cosine), most similar first. Each block of rows meets only the rows from its own start
    on, which halves the products of what is a quadratic check, and the pairs stay arrays: a store of
    near-copies has millions (seconds at 20k memories either way)."""
    import numpy as np

    found: tuple[list, list, list] = ([], [], [])
    for start in range(0, len(matrix), block):
        products = matrix[start:start + block] @ matrix[start:].T
        i, j = np.nonzero(products >= threshold)
        i, j = i[j > i], j[j > i]
        found[0].append(i + start)
        found[1].append(j + start)
        found[2].append(products[i, j])
    if not found[0]:
        return np.empty(0, dtype=int), np.empty(0, dtype=int), np.empty(0)
    a, b, cosines = (np.concatenate(part) for part in found)
    order = np.argsort(-cosines, kind="stable")
    return a[order], b[order], cosines[order]


def namespace_pairs(matrix, namespaces: list[str], threshold: float):
    """`similar_pairs` within each namespace only, as the same three arrays (a < b, most similar first): two
    projects' memories are never copies of each other, however close (merging one would move it into the other
    project), and comparing each namespace's rows among themselves is also less work than all against all."""
    import numpy as np

    groups: dict[str, list[int]] = {}
    for i, namespace in enumerate(namespaces):
        groups.setdefault(namespace, []).append(i)
    parts = []
    for members in groups.values():
        if len(members) > 1:
            index = np.asarray(members)
            a, b, cosines = similar_pairs(matrix[index], threshold)
            parts.append((index[a], index[b], cosines))
    if not parts:
        return np.empty(0, dtype=int), np.empty(0, dtype=int), np.empty(0)
    a, b, cosines = (np.concatenate(part) for part in zip(*parts))
    order = np.argsort(-cosines, kind="stable")
    return a[order], b[order], cosines[order]


def _texts(ctx: StoreContext, ids: list[int]) -> dict[int, str]:
    """The body of each memory, read in batches (only those in a close pair: bodies can be long). The body
    alone, as `writes.near_duplicates` reads it: a title made from the body would count its numbers twice."""
    out = {}
    for start in range(0, len(ids), 500):
        batch = ids[start:start + 500]
        out.update(ctx.q(f"SELECT id, body FROM memories WHERE id IN ({','.join('?' * len(batch))})", batch))
    return out


def sort_close_pairs(ctx: StoreContext, rows: list, first, second, below=None):
    """Which close pairs (index arrays into `rows`) are near-duplicates to merge and which may contradict each
    other, as two boolean arrays: `writes.read_close_pairs` (the `remember` hint reads its close memories so too)
    over the bodies of the rows involved (`below`: the pairs under the near-duplicate bound)."""
    import numpy as np

    involved = [int(i) for i in np.unique(np.concatenate([first, second]))]
    bodies = _texts(ctx, [rows[i][0] for i in involved])
    return writes.read_close_pairs({i: bodies.get(rows[i][0], "") for i in involved}, first, second, below=below)


def negated_pairs(ctx: StoreContext, rows: list, matrix, ns_sql: str, ns_params: list, *, floor: float,
                  bound: float):
    """Pairs of `rows` (a < b, index arrays, with their cosines) within one namespace, at least `floor` but less
    than `bound` close, that say the same words, one of the two negated (`text.traits.negated_twin`): what the
    cosine bound of `namespace_pairs` leaves out. Found by their words (the short texts grouped by what they say
    without their negations), not by comparing every vector again."""
    import itertools

    import numpy as np

    from supermemory.text.traits import NEGATED_TWIN_CHARS, negation_count, said_words

    index = {row[0]: i for i, row in enumerate(rows)}
    groups: dict[tuple, list[tuple[int, int]]] = {}
    for memory_id, body in ctx.q(f"SELECT m.id, m.body FROM memories m WHERE {LIVE} AND {ns_sql} "
                                 f"AND length(m.body) <= ?", ns_params + [NEGATED_TWIN_CHARS]):
        words = said_words(body) if memory_id in index else None
        if words:
            i = index[memory_id]
            groups.setdefault((rows[i][6], words), []).append((i, negation_count(body)))
    a, b = [], []
    for members in groups.values():
        for (i, said_i), (j, said_j) in itertools.combinations(members, 2):
            if said_i != said_j:
                a.append(min(i, j))
                b.append(max(i, j))
    a, b = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
    cosines = np.einsum("ij,ij->i", matrix[a], matrix[b]) if len(a) else np.empty(0)
    keep = (cosines >= floor) & (cosines < bound)
    return a[keep], b[keep], cosines[keep]


def _linked(ctx: StoreContext, rows: list, first, second):
    """Which pairs (index arrays into `rows`) a `supersedes` or `contradicts` link joins, either way, as a
    boolean array: someone already said how the two stand, so they are no open question."""
    import numpy as np

    links = {(src, dst) for src, dst in ctx.q("SELECT src, dst FROM links "
                                               "WHERE relation IN ('supersedes', 'contradicts')")}
    if not links:
        return np.zeros(len(first), dtype=bool)
    ids = [r[0] for r in rows]
    return np.fromiter(((ids[a], ids[b]) in links or (ids[b], ids[a]) in links for a, b in zip(first, second)),
                       dtype=bool, count=len(first))


def _stale(ctx: StoreContext, rows: list, first, second):
    """Which pairs (index arrays into `rows`) hold a memory a live one supersedes, as a boolean array: it is the
    record of an older fact (recall shows it as "was: …"), not a copy to fold into its neighbour."""
    import numpy as np

    stale = {dst for (dst,) in ctx.q(f"SELECT DISTINCT l.dst FROM links l JOIN memories m ON m.id = l.src "
                                     f"WHERE l.relation = 'supersedes' AND {LIVE}")}
    if not stale:
        return np.zeros(len(first), dtype=bool)
    marked = np.fromiter((r[0] in stale for r in rows), dtype=bool, count=len(rows))
    return marked[first] | marked[second]


def health(ctx: StoreContext, *, namespace: str | None = None, duplicate_similarity: float = 0.9,
           max_pairs: int = 50, rule_similarity: float = 0.75) -> dict:
    """Near-duplicate pairs (less those a supersedes or contradicts link joins, and those holding a superseded
    memory), contradictions (linked; close pairs where one text negates what the other
    says and no supersedes or contradicts link joins: `possible_contradictions`, both within one namespace, down to
    `store.negated_pair_similarity` for a pair that says the same words, one negated (`negated_pairs`); and new memories that contradict an imported rule:
    `rule_conflicts`), `supersedes` links that go round in a circle (`supersedes_cycles`), orphans,
    stale/expired counts, schema and model pin, the one-time passes still pending (`pending_passes`: the
    supersedes passes link some of the possible contradictions themselves). Lists hold the first
    `max_pairs` items, with counts of all (`near_duplicate_pairs`, `contradiction_count`,
    `possible_contradiction_count`); the chunks of these namespaces still waiting for a vector (`vectors_pending`:
    a long text's rest, filled in later) are work in progress, not a problem, so they do not make the store unclean.

    :param rule_similarity: how close (cosine) a memory must be to a rule to be checked against it.
    """
    import numpy as np

    now = ctx.clock()
    namespaces = nsm.for_read(ctx, namespace)
    ns_sql, ns_params = nsm.clause(namespaces)
    rows = ctx.q(f"SELECT m.id, v.embedding, m.importance, m.recall_count, m.updated_at, m.title, m.namespace "
                 f"FROM memories m "
                 f"JOIN chunks c ON c.memory_id = m.id AND c.seq = 0 JOIN vectors v ON v.chunk_id = c.id "
                 f"WHERE {LIVE} AND {ns_sql} ORDER BY m.id", ns_params)
    pairs, pair_count, opposed, opposed_count = [], 0, [], 0
    if len(rows) > 1:
        matrix = np.vstack([from_blob(r[1]) for r in rows])
        first, second, cosines = namespace_pairs(matrix, [r[6] for r in rows], duplicate_similarity)
        twins = negated_pairs(ctx, rows, matrix, ns_sql, ns_params, bound=duplicate_similarity,
                              floor=min(duplicate_similarity, float(ctx.config.get("store.negated_pair_similarity"))))
        if len(twins[0]):   # "uses REST" / "does not use REST": close pairs too, however far the "not" moved them
            first, second, cosines = (np.concatenate(part) for part in zip((first, second, cosines), twins))
            order = np.argsort(-cosines, kind="stable")
            first, second, cosines = first[order], second[order], cosines[order]
        copies, opposite = sort_close_pairs(ctx, rows, first, second, below=cosines < duplicate_similarity)
        settled = _linked(ctx, rows, first, second)   # a supersedes or contradicts link settled the pair
        opposite &= ~settled
        copies &= ~settled & ~_stale(ctx, rows, first, second)   # no merge of a stale fact into anything
        opposed_count = int(opposite.sum())
        opposed = [{"a": format_id(rows[int(a)][0]), "b": format_id(rows[int(b)][0]),
                    "similarity": round(float(similarity), 4), "titles": [rows[int(a)][5], rows[int(b)][5]]}
                   for a, b, similarity in zip(*(part[opposite][:max_pairs] for part in (first, second, cosines)))]
        first, second, cosines = first[copies], second[copies], cosines[copies]
        suggested = _merges(rows, first, second, cosines)
        pair_count = len(suggested)
        for keep, other, similarity in suggested[:max_pairs]:
            ra, rb = sorted((keep, other), key=lambda r: r[0])
            pairs.append({"a": format_id(ra[0]), "b": format_id(rb[0]), "similarity": round(float(similarity), 4),
                          "canonical": format_id(keep[0]), "merge": f"supermemory merge {format_id(keep[0])} "
                                                                    f"{format_id(other[0])}",
                          "titles": [ra[5], rb[5]]})
    contradictions = [{"src": format_id(a), "dst": format_id(b), "titles": [ta, tb]} for a, b, ta, tb in ctx.q(
        f"SELECT l.src, l.dst, m.title, n.title FROM links l JOIN memories m ON m.id = l.src "
        f"JOIN memories n ON n.id = l.dst WHERE l.relation = 'contradicts' AND {LIVE} "
        f"AND n.superseded_by IS NULL AND n.deleted_at IS NULL AND {ns_sql}", ns_params)]
    conflicts = rule_conflicts(ctx, rows, matrix if len(rows) > 1 else None, ns_sql, ns_params,
                               similarity=rule_similarity)[:max_pairs]
    orphans = {
        "chunks_without_memory": ctx.q("SELECT count(*) FROM chunks c LEFT JOIN memories m ON m.id = c.memory_id "
                                       "WHERE m.id IS NULL")[0][0],
        "fts_without_live_chunk": ctx.q(f"SELECT count(*) FROM fts f LEFT JOIN chunks c ON c.id = f.rowid "
                                        f"LEFT JOIN memories m ON m.id = c.memory_id WHERE m.id IS NULL OR NOT ({LIVE})")[0][0],
        "live_chunks_without_fts": ctx.q(f"SELECT count(*) FROM chunks c JOIN memories m ON m.id = c.memory_id "
                                         f"WHERE {LIVE} AND c.id NOT IN (SELECT rowid FROM fts)")[0][0],
    }
    stale = sweep(ctx, namespace=namespace, sample=0)["matched"]
    expired_rows = ctx.q(f"SELECT m.id, m.kind, m.title, m.expires_at FROM memories m WHERE {LIVE} AND {ns_sql} "
                         f"AND m.expires_at IS NOT NULL AND m.expires_at <= ? ORDER BY m.expires_at, m.id",
                         ns_params + [now])
    expired = len(expired_rows)
    pin = embedding.pin_check(ctx)
    pin_status = {"mismatch": "mismatch: run `supermemory reindex`",
                  "unavailable": pin["message"]}.get(pin["status"], pin["status"])
    cycles = versions.supersedes_cycles(ctx, namespaces, limit=max_pairs)   # each marks the next outdated
    problems = pair_count + opposed_count + len(contradictions) + len(conflicts) + sum(orphans.values()) + len(cycles)
    return {"near_duplicates": pairs, "near_duplicate_pairs": pair_count,
            "contradictions": contradictions[:max_pairs], "contradiction_count": len(contradictions),
            "possible_contradictions": opposed, "possible_contradiction_count": opposed_count,
            "rule_conflicts": conflicts, "supersedes_cycles": cycles, "orphans": orphans,
            "vectors_pending": embedding.waiting_chunks(ctx, namespaces),
            "windows_pending": windows.waiting(ctx, namespaces), "stale": stale, "expired": expired,
            "expired_items": [{"id": format_id(r[0]), "kind": r[1], "title": r[2], "expired_at": iso(r[3])}
                              for r in expired_rows[:max_pairs]],
            "schema_version": dbm.schema_version(ctx.conn), "model_pin": pin["pinned"], "model_pin_status": pin_status,
            "passes_pending": pending_passes(ctx), "clean": problems == 0}


def growth(ctx: StoreContext, *, namespace: str | None = None, bucket_days: float = 7, buckets: int = 12) -> dict:
    """Live memories by the period they were first written in (`created_at`, kept across versions),
    per kind and per namespace: the last `buckets` periods of `bucket_days` days, oldest first, plus
    the counts from before them (`before`), so a chart can show totals over time.

    Raises:
        InvalidInputError: bucket_days or buckets out of range.
    """
    bucket_days = rec_.number(bucket_days, "bucket_days", 1 / 24, 3650)
    buckets = rec_.integer(buckets, "buckets", 1, 520)
    span = bucket_days * 86400
    now = ctx.clock()
    start = now - buckets * span
    ns_sql, ns_params = nsm.clause(nsm.for_read(ctx, namespace))
    rows = ctx.q(f"SELECT CASE WHEN m.created_at < ? THEN -1 ELSE min(CAST((m.created_at - ?) / ? AS INTEGER), ?) END "
                 f"AS b, m.kind, m.namespace, count(*) FROM memories m WHERE {LIVE} AND {ns_sql} "
                 f"GROUP BY b, m.kind, m.namespace", [start, start, span, buckets - 1] + ns_params)
    periods = [{"start": iso(start + i * span), "by_kind": {}, "by_namespace": {}} for i in range(buckets)]
    before: dict = {"by_kind": {}, "by_namespace": {}}
    for b, kind, ns, n in rows:
        slot = before if b < 0 else periods[b]
        slot["by_kind"][kind] = slot["by_kind"].get(kind, 0) + n
        slot["by_namespace"][ns] = slot["by_namespace"].get(ns, 0) + n
    return {"bucket_days": bucket_days, "start": iso(start), "end": iso(now), "before": before, "buckets": periods}
