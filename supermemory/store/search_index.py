"""The search index: FTS rows and vector rows of live memories, and the lookups recall makes on them.

Only live rows (current version, not deleted) are in `fts` and `vec_mem`; history keeps its chunks
and vector BLOBs (the canonical `vectors` table) so restore needs no model.
"""
from __future__ import annotations

import logging
import time
from typing import Sequence

from supermemory.store import db as dbm
from supermemory.store import namespaces as nsm
from supermemory.store.context import StoreContext
from supermemory.store.records import LIVE, fts_tokens, from_blob, to_blob
from supermemory.text import TOKENIZER_VERSION
from supermemory.text.tokenizer import fts_match

logger = logging.getLogger(__name__)

TOKENIZER_KEY = "tokenizer_version"   # meta: the tokenizer version the FTS rows were made with
SCOPED_FREQ_CACHE = 20000   # (namespaces, token) counts kept between writes: bounded for a long-running server


# --- keeping the index in step with the rows (inside write transactions) ---------------------------

def index_live(ctx: StoreContext, memory_id: int) -> None:
    """Put a memory's chunks into FTS and vec0 (inside a write transaction)."""
    rec = ctx.fetch(memory_id)
    for chunk_id, _seq, text in ctx.conn.execute(
            "SELECT id, seq, text FROM chunks WHERE memory_id = ? ORDER BY seq", (memory_id,)).fetchall():
        ctx.conn.execute("INSERT INTO fts(rowid, tokens, ns) VALUES (?, ?, ?)",
                         (chunk_id, fts_tokens(rec["title"], rec["tags"], text), "ns_" + rec["namespace"]))
    if vec_index_usable(ctx):
        ctx.conn.execute(
            "INSERT INTO vec_mem(chunk_id, namespace, embedding) SELECT c.id, c.namespace, v.embedding "
            "FROM chunks c JOIN vectors v ON v.chunk_id = c.id WHERE c.memory_id = ?", (memory_id,))
    else:
        mark_vec_dirty(ctx)
    ctx.changed()


def unindex(ctx: StoreContext, memory_id: int) -> None:
    """Take a memory's chunks out of FTS and vec0 (inside a write transaction)."""
    ids = [r[0] for r in ctx.conn.execute("SELECT id FROM chunks WHERE memory_id = ?", (memory_id,))]
    for chunk_id in ids:
        ctx.conn.execute("DELETE FROM fts WHERE rowid = ?", (chunk_id,))
        if vec_index_usable(ctx):
            ctx.conn.execute("DELETE FROM vec_mem WHERE chunk_id = ?", (chunk_id,))
    if not vec_index_usable(ctx):
        mark_vec_dirty(ctx)
    ctx.changed()


def erase_freed_text(ctx: StoreContext) -> None:
    """After a hard delete: fold the FTS index (its segments still list a deleted text's words until merged),
    and empty the WAL (it holds the pages as they were) when no reader needs it. With `secure_delete` on
    (`db.connect`) the freed pages are zeros: the text is gone from the file, not only from the tables."""
    with ctx.txn():
        ctx.conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    ctx.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()


def fill_vec_index(ctx: StoreContext) -> None:
    """Rebuild vec_mem from the canonical BLOB table (after writes by a non-vec driver)."""
    ctx.conn.execute("DELETE FROM vec_mem")
    ctx.conn.execute(
        f"INSERT INTO vec_mem(chunk_id, namespace, embedding) SELECT c.id, c.namespace, v.embedding "
        f"FROM chunks c JOIN vectors v ON v.chunk_id = c.id JOIN memories m ON m.id = c.memory_id WHERE {LIVE}")
    dbm.set_meta(ctx.conn, "vec_dirty", "0")


def vec_index_usable(ctx: StoreContext) -> bool:
    return ctx.driver.vec and dbm.vec_table_exists(ctx.conn)


def mark_vec_dirty(ctx: StoreContext) -> None:
    """A driver without sqlite-vec wrote vectors: vec_mem is rebuilt by the next one that has it."""
    if not ctx.driver.vec and dbm.vec_table_exists(ctx.conn):
        dbm.set_meta(ctx.conn, "vec_dirty", "1")


# --- the tokenizer version the FTS rows were made with ----------------------------------------------

def indexed_tokenizer(ctx: StoreContext) -> str:
    return dbm.get_meta(ctx.conn, TOKENIZER_KEY) or "1"   # stores from before the stamp: v1


def stamp_tokenizer(ctx: StoreContext) -> None:
    """A new store is indexed by this tokenizer (inside a write transaction)."""
    dbm.set_meta(ctx.conn, TOKENIZER_KEY, str(TOKENIZER_VERSION))


def is_stale(ctx: StoreContext) -> bool:
    return indexed_tokenizer(ctx) != str(TOKENIZER_VERSION)


def rebuild_search_index(ctx: StoreContext) -> dict:
    """Re-tokenize every live chunk into FTS when the tokenizer changed since it was indexed.

    One write transaction: all or nothing.
    """
    if not is_stale(ctx):
        return {"rebuilt": 0}
    started = time.perf_counter()
    with ctx.txn():
        rows = ctx.conn.execute(
            f"SELECT c.id, c.text, m.title, m.tags, m.namespace FROM chunks c JOIN memories m "
            f"ON m.id = c.memory_id WHERE {LIVE}").fetchall()
        ctx.conn.execute("DELETE FROM fts")
        ctx.conn.executemany(
            "INSERT INTO fts(rowid, tokens, ns) VALUES (?, ?, ?)",
            ((cid, fts_tokens(title, tags, text), "ns_" + ns) for cid, text, title, tags, ns in rows))
        stamp_tokenizer(ctx)
    ctx.changed()
    logger.info("search index rebuilt for tokenizer v%s: %d chunks in %.1f s", TOKENIZER_VERSION, len(rows),
                time.perf_counter() - started)
    return {"rebuilt": len(rows)}


# --- lookups for recall -----------------------------------------------------------------------------

def live_chunk_count(ctx: StoreContext, namespaces: list[str] | None = None) -> int:
    """Live chunks (each has exactly one `ns_` token), in `namespaces` (None: all)."""
    counts = namespace_chunk_counts(ctx)
    return sum(counts.values()) if namespaces is None else sum(counts.get(ns, 0) for ns in set(namespaces))


def namespace_chunk_counts(ctx: StoreContext) -> dict[str, int]:
    """Live chunks per namespace, read from the FTS vocabulary and cached until any connection writes."""
    key = (ctx.data_version(), ctx.generation)
    if ctx.total_cache and ctx.total_cache[0] == key:
        return ctx.total_cache[1]
    counts = {term[3:]: doc for term, doc in ctx.q(
        "SELECT term, doc FROM fts_vocab WHERE term >= 'ns_' AND term < 'ns`' AND col = 'ns'")}
    ctx.total_cache = (key, counts)
    return counts


def covers_all(ctx: StoreContext, namespaces: list[str] | None) -> bool:
    """Every live chunk is in `namespaces`: a namespace condition would select nothing less."""
    return namespaces is None or set(namespace_chunk_counts(ctx)) <= set(namespaces)


def doc_frequencies(ctx: StoreContext, terms: Sequence[str], namespaces: list[str] | None = None) -> dict[str, int]:
    """How many live chunks in `namespaces` (None: all) hold each index token (tokens no chunk holds are left out).

    A recall's word statistics are those of the namespaces it reads, as if each project had a store of its own:
    another project's memories never make a word common or rare here (bench/RESULTS.md, "Word statistics of the
    namespaces read"). Read from the FTS vocabulary when the namespaces hold every live chunk; else counted per
    token among theirs (one FTS count each, cached until any connection writes)."""
    lookup = list(dict.fromkeys(terms))
    if not lookup:
        return {}
    marks = ",".join("?" * len(lookup))
    store_wide = dict(ctx.q(f"SELECT term, doc FROM fts_vocab WHERE col = 'tokens' AND term IN ({marks})", lookup))
    if not store_wide or covers_all(ctx, namespaces):
        return store_wide
    chunks = namespace_chunk_counts(ctx)
    held = tuple(sorted(ns for ns in set(namespaces) if chunks.get(ns)))
    if not held:
        return {}
    # Count among the fewer chunks: those read, or those not read (then subtracted from the store-wide count).
    others = tuple(sorted(set(chunks) - set(held)))
    inverse = sum(chunks[ns] for ns in others) < sum(chunks[ns] for ns in held)
    key = (ctx.data_version(), ctx.generation)
    if ctx.scoped_freq is None or ctx.scoped_freq[0] != key or len(ctx.scoped_freq[1]) > SCOPED_FREQ_CACHE:
        ctx.scoped_freq = (key, {})
    cache = ctx.scoped_freq[1]
    scope = "ns : (" + fts_match(["ns_" + ns for ns in (others if inverse else held)]) + ") AND tokens : "
    counts = {}
    for term, everywhere in store_wide.items():
        n = cache.get((held, term))
        if n is None:
            found = ctx.q("SELECT count(*) FROM fts WHERE fts MATCH ?", [scope + fts_match([term])])[0][0]
            n = cache[(held, term)] = everywhere - found if inverse else found
        if n:
            counts[term] = n
    return counts


def lexical_hits(ctx: StoreContext, match: str, namespaces: list[str] | None, where: str, params: list,
                 limit: int) -> list[tuple[int, float, str, int]]:
    """(memory_id, bm25, chunk tokens, chunk seq) of the best `limit` chunks for an FTS MATCH expression,
    joined to live memories passing `where` (a `filters` clause)."""
    ns_sql, ns_params = nsm.clause(namespaces)
    return ctx.q(
        f"SELECT c.memory_id, f.bm25, f.tokens, c.seq FROM (SELECT rowid, bm25(fts, 1.0, 0.0) AS bm25, tokens FROM fts "
        f"WHERE fts MATCH ? ORDER BY bm25 LIMIT ?) f JOIN chunks c ON c.id = f.rowid "
        f"JOIN memories m ON m.id = c.memory_id WHERE {LIVE} AND {ns_sql} AND {where}",
        [match, limit] + ns_params + params)


def chunk_tokens(ctx: StoreContext, memory_ids: Sequence[int]) -> list[tuple[int, str]]:
    """(memory_id, FTS tokens) of every indexed chunk of these memories."""
    if not memory_ids:
        return []
    marks = ",".join("?" * len(memory_ids))
    return ctx.q(f"SELECT c.memory_id, f.tokens FROM chunks c JOIN fts f ON f.rowid = c.id "
                 f"WHERE c.memory_id IN ({marks})", list(memory_ids))


def chunk_counts(ctx: StoreContext, memory_ids: Sequence[int]) -> dict[int, int]:
    """How many chunks each of these memories has."""
    if not memory_ids:
        return {}
    marks = ",".join("?" * len(memory_ids))
    return dict(ctx.q(f"SELECT memory_id, count(*) FROM chunks WHERE memory_id IN ({marks}) GROUP BY memory_id",
                      list(memory_ids)))


def chunk_text(ctx: StoreContext, memory_id: int, seq: int) -> str:
    """The text of one chunk of a memory."""
    rows = ctx.q("SELECT text FROM chunks WHERE memory_id = ? AND seq = ?", (memory_id, seq))
    return rows[0][0] if rows else ""


def chunk_vectors_by_seq(ctx: StoreContext, memory_id: int) -> list[tuple[int, object]]:
    """(seq, vector) of every chunk of one memory that has a vector."""
    return [(seq, from_blob(blob)) for seq, blob in ctx.q(
        "SELECT c.seq, v.embedding FROM chunks c JOIN vectors v ON v.chunk_id = c.id WHERE c.memory_id = ?",
        (memory_id,))]


def chunk_vectors(ctx: StoreContext, memory_ids: Sequence[int]) -> list[tuple[int, object]]:
    """(memory_id, vector) of every chunk of these memories that has one."""
    if not memory_ids:
        return []
    marks = ",".join("?" * len(memory_ids))
    return [(memory_id, from_blob(blob)) for memory_id, blob in ctx.q(
        f"SELECT c.memory_id, v.embedding FROM chunks c CROSS JOIN vectors v ON v.chunk_id = c.id "
        f"WHERE c.memory_id IN ({marks})", list(memory_ids))]


def live_chunk_vectors(ctx: StoreContext, memory_ids: Sequence[int],
                       namespaces: list[str] | None) -> list[tuple[int, object]]:
    """`chunk_vectors` of live memories in `namespaces`, taken from the matrix `vector_search` keeps in RAM
    when it holds a current one (a server's warm recall), so recall reads each vector BLOB only once."""
    cached = ctx.matrix_cache.get(tuple(namespaces) if namespaces is not None else None)
    if not cached or cached[0] != ctx.data_version():
        return chunk_vectors(ctx, memory_ids)
    _version, _ids, matrix, rows = cached
    return [(memory_id, matrix[row]) for memory_id in memory_ids for row in rows.get(memory_id, ())]


def vector_search(ctx: StoreContext, vector, namespaces: list[str] | None, k: int,
                  live_chunks: int | None = None) -> list[tuple[int, float]]:
    """(memory_id, best cosine) for the k nearest live chunks, best first."""
    import numpy as np

    vector = np.asarray(vector, dtype=np.float32)
    hits: dict[int, float] = {}
    use_ram = ctx.cache_vectors and (live_chunks if live_chunks is not None else live_chunk_count(ctx)) <= int(
        ctx.config.get("recall.ram_vector_limit"))
    if not use_ram and vec_index_usable(ctx) and dbm.get_meta(ctx.conn, "vec_dirty") != "1":
        blob = to_blob(vector)
        for ns in namespaces if namespaces is not None else [None]:
            if ns is None:
                sql = ("SELECT c.memory_id, v.distance FROM vec_mem v JOIN chunks c ON c.id = v.chunk_id "
                       "WHERE v.embedding MATCH ? AND k = ?")
                params = (blob, k)
            else:
                sql = ("SELECT c.memory_id, v.distance FROM vec_mem v JOIN chunks c ON c.id = v.chunk_id "
                       "WHERE v.embedding MATCH ? AND k = ? AND v.namespace = ?")
                params = (blob, k, ns)
            for memory_id, distance in ctx.q(sql, params):
                if distance is None:
                    continue
                cosine = 1.0 - float(distance)
                if cosine > hits.get(memory_id, -2.0):
                    hits[memory_id] = cosine
    else:
        ids, matrix = _live_matrix(ctx, namespaces)
        if len(ids):
            scores = matrix @ vector
            m = min(k * 2, len(scores))
            top = np.argpartition(-scores, m - 1)[:m]
            top = top[np.argsort(-scores[top])]
            for index in top:
                memory_id = int(ids[index])
                cosine = float(scores[index])
                if cosine > hits.get(memory_id, -2.0):
                    hits[memory_id] = cosine
    return sorted(hits.items(), key=lambda kv: -kv[1])[:k]


def _live_matrix(ctx: StoreContext, namespaces: list[str] | None):
    """Brute-force path: live vectors as one float32 matrix, cached until the DB changes."""
    import numpy as np

    version = ctx.data_version()
    key = tuple(namespaces) if namespaces is not None else None
    cached = ctx.matrix_cache.get(key)
    if cached and cached[0] == version:
        return cached[1], cached[2]
    ns_sql, ns_params = nsm.clause(namespaces, "c.namespace")
    rows = ctx.q(f"SELECT c.memory_id, v.embedding FROM chunks c JOIN vectors v ON v.chunk_id = c.id "
                 f"JOIN memories m ON m.id = c.memory_id WHERE {LIVE} AND {ns_sql}", ns_params)
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    matrix = (np.vstack([from_blob(r[1]) for r in rows]) if rows
              else np.zeros((0, 1), dtype=np.float32))
    rows_of: dict[int, list[int]] = {}
    for row, memory_id in enumerate(ids.tolist()):
        rows_of.setdefault(memory_id, []).append(row)
    ctx.matrix_cache[key] = (version, ids, matrix, rows_of)
    return ids, matrix
