"""The search log (redacted queries, hit counts, latency) and the recall counters of returned memories."""
from __future__ import annotations

import hashlib
import logging
from typing import Sequence

from supermemory.config import ALL_NAMESPACES
from supermemory.errors import StorageError
from supermemory.store import namespaces as nsm
from supermemory.store.context import StoreContext

logger = logging.getLogger(__name__)

# A recall's trace waits this long for another process's write lock, then is dropped with a warning: the
# answer is ready, and an agent must not wait out the 30 s busy timeout for its statistics.
STATS_WAIT_MS = 250


def trace_recall(ctx: StoreContext, **trace) -> None:
    """`record_recall` in its own short write transaction, best effort: when another process holds the write
    lock past `STATS_WAIT_MS` (or the write fails), the trace is dropped with a warning and recall goes on.
    A read-only store (`StoreContext.readonly`) keeps no trace and opens no transaction: its reads stay quiet."""
    if ctx.readonly:
        return
    try:
        with ctx.txn(wait_ms=STATS_WAIT_MS):
            record_recall(ctx, **trace)
    except StorageError as exc:
        logger.warning("could not record recall statistics: %s", exc)


def trace_page(ctx: StoreContext, page: dict, *, query: str, namespaces: list[str] | None, origin: str, touch: bool,
               counted_from: float | None = None) -> None:
    """`trace_recall` of a finished result page, when it is worth one (hits to count, or the search log on): the page
    a broad question returns after reading the store more than once is logged once, under the question asked.
    A recall with `touch` False (`recall --no-touch`, the page's searches, the briefing, bench runs) is not counted at
    all: no recall counters and no search-log row, so it stays out of `stats` and the Health figures.

    :param counted_from: only hits of at least this relevance count as recalled (None: every hit, as a listing's).
    """
    from supermemory.store.records import parse_id

    if not touch:
        return
    results = page["results"]
    hit_ids = [parse_id(r["id"]) for r in results]
    counted = hit_ids if counted_from is None else [
        parse_id(r["id"]) for r in results if r.get("relevance") is None or r["relevance"] >= counted_from]
    if counted or ctx.config.get("search_log.enabled"):
        trace_recall(ctx, query=query, namespaces=namespaces, candidates=page.get("candidates", 0), hit_ids=hit_ids,
                     top_score=results[0].get("score") if results else None, latency_ms=page.get("latency_ms", 0.0),
                     origin=origin, counted_ids=counted)


def record_recall(ctx: StoreContext, *, query: str, namespaces: list[str] | None, candidates: int,
                  hit_ids: Sequence[int], top_score: float | None, latency_ms: float, origin: str,
                  counted_ids: Sequence[int] | None = None) -> None:
    """One counted recall's trace (inside a write transaction): the recall counters of the returned memories, or of
    `counted_ids` when given, and a search-log row (when `search_log.enabled`), capped at `search_log.max_rows`.
    A recall that does not count (`touch` False) leaves none (`trace_page`)."""
    counted = list(hit_ids if counted_ids is None else counted_ids)
    if counted:
        marks = ",".join("?" * len(counted))
        ctx.conn.execute(f"UPDATE memories SET last_recalled_at = ?, recall_count = recall_count + 1 "
                         f"WHERE id IN ({marks})", [ctx.clock()] + counted)
    if not ctx.config.get("search_log.enabled"):
        return
    from supermemory.redact import redact

    text, _ = redact(query)
    if ctx.config.get("search_log.hash_queries"):
        text = "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]
    ctx.conn.execute("INSERT INTO search_log(at, namespace, query, origin, candidates, hits, top_score, "
                     "latency_ms) VALUES (?,?,?,?,?,?,?,?)",
                     (ctx.clock(), ",".join(namespaces or [ALL_NAMESPACES]), text, origin, candidates, len(hit_ids),
                      top_score, latency_ms))
    trim(ctx)


def trim(ctx: StoreContext) -> int:
    """Keep the newest `search_log.max_rows` rows (inside a write transaction); returns rows removed."""
    cap = int(ctx.config.get("search_log.max_rows"))
    last = ctx.conn.execute("SELECT max(id) FROM search_log").fetchone()[0] or 0
    return ctx.conn.execute("DELETE FROM search_log WHERE id <= ?", (last - cap,)).rowcount  # a PK range: cheap


def forget_erased_words(ctx: StoreContext, erased_tokens: set[str]) -> int:
    """After a hard delete, once its rows left the index (inside its write transaction): drop the search-log rows
    whose query names a word that only the erased memories held, so the log keeps no trace of what was erased
    (fresh-user run fu32 D9: `stats` still printed the queries about a hard-forgotten memory). Returns rows
    dropped."""
    from supermemory.store.search_index import doc_frequencies
    from supermemory.text import query_terms

    if not erased_tokens:
        return 0
    held = doc_frequencies(ctx, sorted(erased_tokens))
    gone = {token for token in erased_tokens if not held.get(token)}
    if not gone:
        return 0
    doomed = [row_id for row_id, query in ctx.conn.execute("SELECT id, query FROM search_log").fetchall()
              if gone.intersection(query_terms(query or ""))]
    ctx.conn.executemany("DELETE FROM search_log WHERE id = ?", [(row_id,) for row_id in doomed])
    return len(doomed)


# Searches from the local page (`supermemory ui`) carry this origin and are left out of the figures: a person
# browsing is not an agent recalling. They pass `touch=False`, so `trace_page` no longer logs them; the filter keeps
# out the rows an older version wrote.
UI_ORIGIN = "ui"


def figures(ctx: StoreContext, namespaces: list[str] | None) -> dict:
    """Latencies (ms, in log order), hit counts and the latest queries that found nothing (agents' recalls
    only: rows with origin `UI_ORIGIN` are left out)."""
    log_sql, log_params = nsm.clause([",".join(namespaces)] if namespaces else None, "namespace")
    log_sql = f"{log_sql} AND origin != '{UI_ORIGIN}'"
    log = ctx.q(f"SELECT latency_ms, hits FROM search_log WHERE {log_sql}", log_params)
    # A query counts as finding nothing only while its latest run (in that namespace) found nothing: one that
    # has returned hits since is working now (fresh-user run fu32 D9: `stats` kept listing them).
    recent_empty = [r[0] for r in ctx.q(
        f"SELECT s.query FROM search_log s WHERE s.hits = 0 AND {log_sql} AND NOT EXISTS (SELECT 1 FROM search_log t "
        f"WHERE t.query = s.query AND t.namespace = s.namespace AND t.id > s.id AND t.hits > 0) "
        f"ORDER BY s.id DESC LIMIT 10", log_params)]
    return {"latencies": [r[0] for r in log], "hits": [r[1] for r in log], "recent_empty": recent_empty}
