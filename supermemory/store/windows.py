"""Vectors of the two-sentence windows inside a memory, so that a fact said in passing is matched by meaning.

Recall moves a memory's cosine part of the way to its best window's (`ranking.window_share`).

A live memory's windows are written right after the memory by `remember_many`, and by the CLI's `remember` / `update`
once it has printed the id (`MemoryStore.defer_windows`), when the model runs (the MCP server leaves them to its next
idle turn), else filled in after the chunks still without a vector (`embedding.embed_missing_vectors`: the MCP
server's idle turns, maintenance; a CLI command's catch-up only while chunks wait, since a memory without windows is
still matched by its whole text). A memory with none (one
sentence, code) gets a row of seq -1 without a vector, so it is looked at once.
"""
from __future__ import annotations

import logging
from typing import Sequence

from supermemory.store.context import StoreContext
from supermemory.store.records import LIVE, to_blob
from supermemory.text import code_share, sentence_windows

# A body that reads this much as code gets no windows: its lines are no sentences, and a function's lines
# matched alone drown its docstring (codesearch-dev R@5 fell with them; bench/RESULTS.md).
CODE_SHARE_LIMIT = 0.3
NONE = -1   # the seq of the row that says "looked at: no windows"
# Bumped when what a window is changes: bench stores seeded with other windows are not reused.
WINDOWS_VERSION = 3
_IDS_PER_READ = 500   # ids per `IN (…)`: under SQLite's variable limit on any build

logger = logging.getLogger(__name__)


def texts_of(body: str) -> list[str]:
    """The window texts a memory's body gets (none for one sentence or code)."""
    return [] if code_share(body) >= CODE_SHARE_LIMIT else sentence_windows(body)


def missing(ctx: StoreContext, limit: int, memory_ids: Sequence[int] | None = None) -> list[tuple[int, str]]:
    """(id, body) of live memories whose windows were never looked at, `memory_ids` only when given."""
    only = ""
    params: list = []
    if memory_ids is not None:
        if not memory_ids:
            return []
        only = f" AND m.id IN ({','.join('?' * len(memory_ids))})"
        params = list(memory_ids)
    return ctx.q(f"SELECT m.id, m.body FROM memories m WHERE {LIVE}{only} AND NOT EXISTS "
                 f"(SELECT 1 FROM windows w WHERE w.memory_id = m.id) ORDER BY m.id LIMIT ?", params + [limit])


def waiting(ctx: StoreContext, namespaces: list[str] | None = None) -> int:
    """How many live memories (of `namespaces`, None: all) were never given their windows (`health`, `maintenance`)."""
    from supermemory.store import namespaces as nsm

    ns_sql, ns_params = nsm.clause(namespaces)
    return ctx.q(f"SELECT count(*) FROM memories m WHERE {LIVE} AND {ns_sql} AND NOT EXISTS "
                 f"(SELECT 1 FROM windows w WHERE w.memory_id = m.id)", ns_params)[0][0]


def embed(ctx: StoreContext, rows: Sequence[tuple[int, str]], provider, *, wait_ms: int | None = None) -> int:
    """Embed (with `provider`, the store's checked embedder) and store the windows of these (id, body) rows, in one
    write transaction after the model ran (a memory forgotten or given windows by another process meanwhile is
    left alone); returns memories done."""
    texts = {memory_id: texts_of(body) for memory_id, body in rows}
    flat = [text for memory_id, _ in rows for text in texts[memory_id]]
    matrix = provider.embed_multi(flat) if flat else []
    done, at = 0, 0
    with ctx.txn(wait_ms=wait_ms):
        for memory_id, _ in rows:
            vectors = matrix[at:at + len(texts[memory_id])]
            at += len(texts[memory_id])
            if ctx.conn.execute(f"SELECT 1 FROM memories m WHERE m.id = ? AND {LIVE} AND NOT EXISTS "
                                f"(SELECT 1 FROM windows w WHERE w.memory_id = m.id)", (memory_id,)).fetchone() is None:
                continue
            ctx.conn.executemany("INSERT INTO windows(memory_id, seq, embedding) VALUES (?, ?, ?)",
                                 [(memory_id, seq, to_blob(v)) for seq, v in enumerate(vectors)]
                                 or [(memory_id, NONE, None)])
            done += 1
    if done:   # only the windows changed: the chunk vectors and word counts this process keeps stay good
        ctx.windows_cache = None
    return done


def after_write(ctx: StoreContext, memory_ids: Sequence[int], *, interactive: bool = False) -> None:
    """The windows of memories just written, while the model is loaded for them anyway; left for the filling-in
    when it cannot run now (the memory itself is stored, and matched by its whole text meanwhile).

    :param interactive: one memory an agent waits on (`remember`, `update`): a long-lived store (the MCP server)
        leaves its windows to its next idle turn, so the answer comes as fast as before windows (they cost a
        three-sentence memory about 14 ms of model time).
    """
    from supermemory.errors import EmbeddingUnavailableError, ModelMismatchError, StorageError

    if interactive and ctx.cache_vectors:
        ctx.vectors_pending = True
        return
    if interactive and ctx.windows_owed is not None:   # the CLI: after it printed the id (`MemoryStore.defer_windows`)
        ctx.windows_owed.extend(memory_ids)
        return
    if ctx.embedder is None:   # no model loaded for the write: the filling-in does it
        return
    try:
        for at in range(0, len(memory_ids), _IDS_PER_READ):
            part = list(memory_ids[at:at + _IDS_PER_READ])
            rows = missing(ctx, len(part), part)
            if rows:
                embed(ctx, rows, ctx.embedder)
    except (EmbeddingUnavailableError, ModelMismatchError, StorageError) as exc:
        ctx.vectors_pending = True
        logger.info("windows left for later: %s", exc)


def _stacked(rows: list) -> tuple:
    """(one matrix of the windows, each memory id's first row, its end row; -1 where a memory has none) of
    (memory_id, blob) rows in memory id order: one contiguous block and two arrays indexed by memory id, so a recall
    gathers its candidates' rows with a few numpy calls (Python loops over a hundred candidates cost as much as the
    rest of the windows' share of a recall)."""
    import numpy as np

    if not rows:
        return None, np.full(1, -1), np.full(1, -1)
    owners = np.fromiter((memory_id for memory_id, _ in rows), dtype=np.int64, count=len(rows))
    first = np.full(int(owners[-1]) + 1, -1)
    end = np.full(int(owners[-1]) + 1, -1)
    first[owners[::-1]] = np.arange(len(rows) - 1, -1, -1)   # the lowest row of each id wins
    end[owners] = np.arange(1, len(rows) + 1)                # the highest row + 1 of each id wins
    return np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), -1), first, end


def _cached(ctx: StoreContext) -> tuple | None:
    """Every live memory's windows (`_stacked`), read once per database state by a long-lived store (`cache_vectors`,
    the MCP server, as it keeps the chunk vectors: `search_index._live_matrix`) while they number at most
    `recall.ram_vector_limit`; None otherwise (each recall reads its candidates' windows). At 10k memories reading
    a hundred candidates' windows per recall took a tenth of a warm recall."""
    if not ctx.cache_vectors:
        return None
    key = (ctx.data_version(), ctx.generation)
    if ctx.windows_cache is None or ctx.windows_cache[0] != key:
        limit = int(ctx.config.get("recall.ram_vector_limit"))
        rows = ctx.conn.execute(f"SELECT w.memory_id, w.embedding FROM windows w JOIN memories m ON m.id = w.memory_id "
                                f"WHERE {LIVE} AND w.embedding IS NOT NULL ORDER BY w.memory_id, w.seq LIMIT ?",
                                (limit + 1,)).fetchall()
        ctx.windows_cache = (key, _stacked(rows) if len(rows) <= limit else None)
    return ctx.windows_cache[1]


def best_cosines(ctx: StoreContext, memory_ids: Sequence[int], query_vec) -> dict[int, float]:
    """The best window cosine of each of these memories that has windows (one gather, one matrix product)."""
    import numpy as np

    cached = _cached(ctx)
    if cached is None:
        ids = list(dict.fromkeys(memory_ids))
        rows = [row for at in range(0, len(ids), _IDS_PER_READ) for row in ctx.conn.execute(
            f"SELECT memory_id, embedding FROM windows WHERE memory_id IN ({','.join('?' * len(ids[at:at + _IDS_PER_READ]))}) "
            f"AND embedding IS NOT NULL ORDER BY memory_id, seq", ids[at:at + _IDS_PER_READ])]
        cached = _stacked(sorted(rows, key=lambda row: row[0]))
    matrix, first, end = cached
    ids = np.unique(np.fromiter(memory_ids, dtype=np.int64))
    ids = ids[ids < len(first)]
    ids = ids[first[ids] >= 0]
    if not len(ids):
        return {}
    starts, lengths = first[ids], end[ids] - first[ids]
    offsets = np.cumsum(lengths) - lengths
    rows = np.repeat(starts - offsets, lengths) + np.arange(int(lengths.sum()))
    scores = matrix[rows] @ np.asarray(query_vec, dtype=np.float32)
    return dict(zip(ids.tolist(), np.maximum.reduceat(scores, offsets).tolist()))


def copy(ctx: StoreContext, source: int, target: int) -> int:
    """Give `target` the windows of `source` (inside a write transaction): a new version with the same body. Returns
    the rows copied (0: `source` had not been given its windows yet)."""
    return ctx.conn.execute("INSERT INTO windows(memory_id, seq, embedding) SELECT ?, seq, embedding FROM windows "
                            "WHERE memory_id = ?", (target, source)).rowcount


def drop(ctx: StoreContext, memory_ids: Sequence[int] | None = None) -> None:
    """Forget windows (inside a write transaction): of these memories, or all (`reindex`: another model)."""
    ctx.windows_cache = None
    if memory_ids is None:
        ctx.conn.execute("DELETE FROM windows")
        return
    ctx.conn.executemany("DELETE FROM windows WHERE memory_id = ?", [(i,) for i in memory_ids])
