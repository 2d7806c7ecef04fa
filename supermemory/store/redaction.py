"""Re-redact what is already stored: the one sanctioned overwrite of memory text.

A rule added to `redact.py` protects new writes only. Text stored before the rule existed keeps
the secret in every copy: memory bodies, titles, summaries and the caller's `source` (old versions and deleted rows
too), chunks, the FTS index, the vectors computed from them, the search log and the capture
state. Keeping a secret is worse than a changed version chain, so `redact_stored` rewrites those
rows in place, in one write transaction with `secure_delete` on, then VACUUMs the file and
truncates the WAL (space freed earlier, by an update or a forget, still holds the old bytes), and
records one `redactions` row per rewritten memory, which `history` reports.

`maintenance` runs the pass once per rule table: the store stamps `meta.redaction_rules` with
`redact.rules_fingerprint()` when a pass completes, and new stores are stamped at creation.
"""
from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from supermemory.store import db as dbm
from supermemory.errors import EmbeddingUnavailableError, ModelMismatchError, UnknownProviderError
from supermemory.redact import redact, rules_fingerprint
from supermemory.text import summarize
from supermemory.store import embedding, search_index, windows, writes
from supermemory.store.records import content_hash, embed_text, format_id, fts_tokens, to_blob

if TYPE_CHECKING:
    from supermemory.store.context import StoreContext

logger = logging.getLogger(__name__)

STAMP_KEY = "redaction_rules"


def _clean(text: str | None, counts: dict[str, int]) -> str:
    """Secrets out, nothing else changed (<private> spans were dropped when the text was written)."""
    out, found = redact(text or "", drop_private=False)
    for kind, n in found.items():
        counts[kind] = counts.get(kind, 0) + n
    return out


def _clean_tree(node: Any, counts: dict[str, int]) -> Any:
    if isinstance(node, str):
        return _clean(node, counts)
    if isinstance(node, list):
        return [_clean_tree(v, counts) for v in node]
    if isinstance(node, dict):
        return {(_clean(k, counts) if isinstance(k, str) else k): _clean_tree(v, counts) for k, v in node.items()}
    return node


@dataclass
class _Plan:
    """The redacted state of one memory row and what has to follow it."""

    memory_id: int
    kind: str
    namespace: str
    tags: str
    live: bool
    title: str
    body: str
    summary: str
    old_chunks: list[tuple[int, str]]
    pieces: list[str]
    rechunk: bool
    fields: list[str]
    types: dict[str, int] = field(default_factory=dict)
    source: str = "{}"

    @property
    def reindex(self) -> bool:
        """Chunk tokens and vectors depend on the title and the chunk text."""
        return "title" in self.fields or "chunks" in self.fields

    @property
    def refts(self) -> bool:
        """The FTS tokens depend on the tags as well (vectors do not)."""
        return self.reindex or "tags" in self.fields


def _plan(store: "StoreContext", memory_id: int) -> _Plan | None:
    """What redaction changes in this memory row, or None when nothing."""
    row = store.conn.execute(
        "SELECT kind, namespace, tags, title, body, summary, superseded_by IS NULL AND deleted_at IS NULL, source "
        "FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None:
        return None
    kind, namespace, tags, title, body, summary, live, source = row
    chunks = [(cid, text) for cid, text in store.conn.execute(
        "SELECT id, text FROM chunks WHERE memory_id = ? ORDER BY seq", (memory_id,))]
    types: dict[str, int] = {}
    new_body = _clean(body, types)
    if new_body != body and title == summarize(body, max_chars=writes.TITLE_CHARS):
        # a title cut from the body may hold half a secret no rule recognises: cut it again
        new_title = summarize(new_body, max_chars=writes.TITLE_CHARS)
    else:
        new_title = _clean(title, types)
    new_tags = _clean_tags(tags, types)
    new_source = _clean_source(source, types)
    others: dict[str, int] = {}
    if new_body != body:
        # the old summary and chunks are cut from the old body (a secret may straddle two chunks)
        new_summary = summarize(new_body) if new_body else summarize(new_title)
        pieces = writes.chunk_body(store, new_body)
        rechunk = True
    else:
        new_summary = _clean(summary, others)
        pieces = [_clean(text, others) for _, text in chunks]
        rechunk = False
    fields = [name for name, old, new in (("title", title, new_title), ("body", body, new_body),
                                          ("summary", summary, new_summary), ("tags", tags, new_tags),
                                          ("source", source, new_source)) if old != new]
    if rechunk or pieces != [text for _, text in chunks]:
        fields.append("chunks")
    if not fields:
        return None
    return _Plan(memory_id, kind, namespace, new_tags, bool(live), new_title, new_body, new_summary, chunks, pieces,
                 rechunk, fields, types or others, new_source)


def _clean_tags(tags_json: str | None, counts: dict[str, int]) -> str:
    """The stored tags (a JSON list) with secrets out; the same string when none held one."""
    tags = json.loads(tags_json or "[]")
    clean = [_clean(tag, counts) for tag in tags]
    return tags_json if clean == tags else json.dumps(clean, ensure_ascii=False)


def _clean_source(source_json: str | None, counts: dict[str, int]) -> str | None:
    """The stored `source` (a JSON object a caller passed to remember: it may quote a secret, and stores written
    before remember redacted it hold it as given) with secrets out of every string, keys included."""
    try:
        tree = json.loads(source_json or "{}")
    except (TypeError, ValueError):
        return _clean(source_json, counts)
    clean = _clean_tree(tree, counts)
    return source_json if clean == tree else json.dumps(clean, ensure_ascii=False)


def _embed(store: "StoreContext", plans: list[_Plan]) -> dict[str, Any]:
    """Vectors for the redacted chunks, by embedded text; {} when no embedder can run."""

    texts = list(dict.fromkeys(embed_text(p.title, piece) for p in plans if p.reindex for piece in p.pieces))
    if not texts:
        return {}
    try:
        matrix = embedding.embedder(store).embed_multi(texts)
    except (EmbeddingUnavailableError, ModelMismatchError, UnknownProviderError) as exc:
        logger.warning("redacted chunks get new vectors once the model runs (MCP server idle time, maintenance): %s", exc)
        return {}
    return dict(zip(texts, matrix))


def _rewrite(store: "StoreContext", p: _Plan, vectors: dict[str, Any], now: float, report: dict) -> None:
    """Write one plan (inside the transaction): the row, its chunks, FTS, vectors, the record."""

    conn = store.conn
    conn.execute("UPDATE memories SET title = ?, body = ?, summary = ?, tags = ?, source = ?, content_hash = ? "
                 "WHERE id = ?", (p.title, p.body, p.summary, p.tags, p.source, content_hash(p.kind, p.title, p.body),
                                  p.memory_id))
    vec_index = search_index.vec_index_usable(store)
    old_ids = [cid for cid, _ in p.old_chunks]
    if p.live and p.refts:
        for cid in old_ids:
            conn.execute("DELETE FROM fts WHERE rowid = ?", (cid,))
            if vec_index and p.reindex:
                conn.execute("DELETE FROM vec_mem WHERE chunk_id = ?", (cid,))
    if p.rechunk:
        windows.drop(store, [p.memory_id])   # cut from the old body: filled in again from the new one
        conn.executemany("DELETE FROM vectors WHERE chunk_id = ?", [(cid,) for cid in old_ids])
        conn.executemany("DELETE FROM chunks WHERE id = ?", [(cid,) for cid in old_ids])
        ids = [conn.execute("INSERT INTO chunks(memory_id, seq, namespace, text) VALUES (?, ?, ?, ?)",
                            (p.memory_id, seq, p.namespace, piece)).lastrowid for seq, piece in enumerate(p.pieces)]
        report["chunks"] += len(ids)
    else:
        ids = old_ids
        for (cid, old), piece in zip(p.old_chunks, p.pieces):
            if piece != old:
                conn.execute("UPDATE chunks SET text = ? WHERE id = ?", (piece, cid))
                report["chunks"] += 1
    if p.reindex:
        found = [vectors.get(embed_text(p.title, piece)) for piece in p.pieces]
        if all(v is not None for v in found):
            conn.executemany("INSERT OR REPLACE INTO vectors(chunk_id, embedding) VALUES (?, ?)",
                             [(cid, to_blob(v)) for cid, v in zip(ids, found)])
            report["vectors_reembedded"] += len(ids)
        else:  # no vector beats one computed from the secret: lexical recall until `reindex`
            for cid in ids:
                report["vectors_dropped"] += conn.execute("DELETE FROM vectors WHERE chunk_id = ?", (cid,)).rowcount
    if p.live and p.refts:
        conn.executemany("INSERT INTO fts(rowid, tokens, ns) VALUES (?, ?, ?)",
                         [(cid, fts_tokens(p.title, p.tags, piece), "ns_" + p.namespace)
                          for cid, piece in zip(ids, p.pieces)])
        report["fts_rows"] += len(ids)
    if p.live and p.reindex:
        if vec_index:
            conn.execute("INSERT INTO vec_mem(chunk_id, namespace, embedding) SELECT c.id, c.namespace, "
                         "v.embedding FROM chunks c JOIN vectors v ON v.chunk_id = c.id WHERE c.memory_id = ?",
                         (p.memory_id,))
        else:
            search_index.mark_vec_dirty(store)
    conn.execute("INSERT INTO redactions(memory_id, at, types, fields) VALUES (?, ?, ?, ?)",
                 (p.memory_id, now, json.dumps(p.types, sort_keys=True), json.dumps(p.fields)))
    _count(report, p)


def _count(report: dict, p: _Plan) -> None:
    report["memories"] += 1
    report["ids"].append(p.memory_id)
    for name, key in (("title", "titles"), ("body", "bodies"), ("summary", "summaries")):
        report[key] += name in p.fields
    _add(report["types"], p.types)


def _add(total: dict[str, int], types: dict[str, int]) -> None:
    for kind, n in types.items():
        total[kind] = total.get(kind, 0) + n


def _candidates(store: "StoreContext") -> list[int]:
    """Memory rows with a secret in any stored text (one streaming read, no write lock)."""
    found: set[int] = set()
    for memory_id, title, body, summary, tags, source in store.conn.execute(
            "SELECT id, title, body, summary, tags, source FROM memories"):
        if (any(_clean(t, {}) != (t or "") for t in (title, body, summary)) or _clean_tags(tags, {}) != tags
                or _clean_source(source, {}) != source):
            found.add(memory_id)
    for memory_id, text in store.conn.execute("SELECT memory_id, text FROM chunks"):
        if memory_id not in found and _clean(text, {}) != text:
            found.add(memory_id)
    return sorted(found)


def _side_tables(store: "StoreContext") -> tuple[list[tuple[int, str]], list[tuple[str, str]], dict[str, int]]:
    """Redacted search-log queries and capture-state digests that differ from what is stored."""
    types: dict[str, int] = {}
    log = []
    for row_id, query in store.conn.execute("SELECT id, query FROM search_log"):
        clean = _clean(query, types)
        if clean != query:
            log.append((row_id, clean))
    capture = []
    for key, raw in store.conn.execute("SELECT session_key, digest FROM capture_state"):
        try:
            tree = json.loads(raw)
        except (TypeError, ValueError):
            clean = _clean(raw, types)
        else:
            redacted = _clean_tree(tree, types)
            clean = raw if redacted == tree else json.dumps(redacted, ensure_ascii=False)
        if clean != raw:
            capture.append((key, clean))
    return log, capture, types


@contextlib.contextmanager
def _secure_delete(store: "StoreContext") -> Iterator[None]:
    """Zero freed space while rewriting, so the secret's bytes do not linger in free pages."""
    before = store.conn.execute("PRAGMA secure_delete").fetchone()[0]
    store.conn.execute("PRAGMA secure_delete = ON")
    try:
        yield
    finally:
        store.conn.execute(f"PRAGMA secure_delete = {int(before)}")


def _vacuum(store: "StoreContext") -> bool:
    """Rebuild the file: space freed before the pass (an old version's FTS row, a forgotten
    body) still holds the secret's bytes, which only a VACUUM drops; then empty the WAL."""
    try:
        store.conn.execute("VACUUM")
    except store.driver.Error as exc:  # busy, or no room for the copy: the text itself is clean already
        logger.warning("redacted in place, but VACUUM failed (old bytes may stay in free pages until it runs): %s",
                       exc)
        return False
    with contextlib.suppress(store.driver.Error):  # a reader may hold the WAL; a later checkpoint ends it
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return True


def is_stale(store: "StoreContext") -> bool:
    """True when stored text was last redacted by another rule table (or never checked)."""
    return dbm.get_meta(store.conn, STAMP_KEY) != rules_fingerprint()


def stamp(store: "StoreContext") -> None:
    """Record that stored text is redacted by the current rules (inside a write transaction)."""
    dbm.set_meta(store.conn, STAMP_KEY, rules_fingerprint())


def redact_stored(store: "StoreContext", *, dry_run: bool = False) -> dict:
    """Re-redact every stored copy of every memory with the current rules, in place.

    The one sanctioned overwrite: bodies, titles, summaries (old versions and deleted rows
    too), chunks, live FTS rows, vectors (re-embedded, or dropped until `reindex` when no
    embedder can run), search log and capture state, in one write transaction with freed
    space zeroed, then VACUUM so no free page keeps the old bytes. Each rewritten row gets
    a redaction in `history`. Idempotent: a second pass finds nothing.

    :param dry_run: count what would change, write nothing.
    The caller's `source` object of each row is redacted as well (every string, keys included).

    :returns: counts per table, `types` (secrets by type), `ids` (memory rows rewritten), `rows`.
    Raises:
        StorageError: the database is busy or read-only.
    """

    report: dict[str, Any] = {"dry_run": dry_run, "memories": 0, "titles": 0, "bodies": 0, "summaries": 0,
                              "chunks": 0, "fts_rows": 0, "vectors_reembedded": 0, "vectors_dropped": 0,
                              "search_log": 0, "capture_state": 0, "types": {}, "ids": [], "vacuumed": False}
    plans = [p for p in (_plan(store, memory_id) for memory_id in _candidates(store)) if p is not None]
    if dry_run:
        log, capture, side_types = _side_tables(store)
        for p in plans:
            _count(report, p)
            report["chunks"] += len(p.pieces) if p.rechunk else sum(
                old != new for (_, old), new in zip(p.old_chunks, p.pieces))
    else:
        vectors = _embed(store, plans)
        now = store.clock()
        with _secure_delete(store), store.txn():
            for memory_id in [p.memory_id for p in plans]:
                fresh = _plan(store, memory_id)  # re-read under the lock: a writer may have come between
                if fresh is not None:
                    _rewrite(store, fresh, vectors, now, report)
            log, capture, side_types = _side_tables(store)
            store.conn.executemany("UPDATE search_log SET query = ? WHERE id = ?", [(q, i) for i, q in log])
            store.conn.executemany("UPDATE capture_state SET digest = ? WHERE session_key = ?",
                                   [(d, k) for k, d in capture])
            if report["fts_rows"]:
                store.conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")  # merge away the old segments
            stamp(store)
        if report["memories"]:
            store.changed()
        if store.path != ":memory:" and (report["memories"] or log or capture):
            report["vacuumed"] = _vacuum(store)
    report["search_log"], report["capture_state"] = len(log), len(capture)
    _add(report["types"], side_types)
    report["ids"] = [format_id(i) for i in report["ids"]]
    report["rows"] = report["memories"] + report["search_log"] + report["capture_state"]
    return report
