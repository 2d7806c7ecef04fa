"""`MemoryStore`: the product. CLI, MCP server and hooks are thin shells over its methods.

Live rows (current version, not deleted) are the only ones in the FTS and vec0 indexes;
history and soft-deleted rows keep their chunks and vector BLOBs so restore needs no model.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from supermemory import db as dbm
from supermemory import ranking
from supermemory.config import (ALL_NAMESPACES, GLOBAL_NAMESPACE, KINDS, RELATIONS, TASK_STATUSES,
                                Config, normalize_namespace)
from supermemory.errors import (EmbeddingUnavailableError, InvalidInputError, ModelMismatchError,
                                NamespaceError, NotFoundError, StorageError, SupermemoryError)
from supermemory.glossary import cross_terms, english_gloss
from supermemory.text import (TOKENIZER_VERSION, asks_about_change, chunk, cjk_share, estimate_tokens, fts_match,
                              index_text, leading_word, name_forms, named_terms, normalize, query_terms, summarize,
                              vague_query)
from supermemory.timeparse import from_iso, iso, parse_when

logger = logging.getLogger(__name__)

_UNSET = object()
LIVE = "m.superseded_by IS NULL AND m.deleted_at IS NULL"
_MEMORY_COLUMNS = ("id, namespace, kind, title, body, summary, tags, source, platform, importance, "
                   "confidence, pinned, status, ttl_days, expires_at, created_at, updated_at, "
                   "last_recalled_at, recall_count, content_hash, root_id, superseded_by, valid_from, "
                   "valid_to, deleted_at, delete_reason, external_key")


def format_id(row_id: int) -> str:
    return f"M{row_id}"


def parse_id(value: Any) -> int:
    """`M12`, `m12`, `12` or 12 → 12.

    Raises:
        InvalidInputError: anything else.
    """
    if isinstance(value, bool):
        raise InvalidInputError(f"not a memory id: {value!r}")
    if isinstance(value, int):
        if value > 0:
            return value
    elif isinstance(value, str):
        text = value.strip()
        if text[:1] in ("M", "m"):
            text = text[1:]
        if text.isdigit() and 0 < len(text) <= 18:
            return int(text)
    raise InvalidInputError(f"not a memory id: {value!r} (expected something like M12)")


def clean_text(value: Any, field: str, *, max_chars: int, allow_empty: bool = False) -> str:
    """Validate user text: a str, no NUL bytes, valid UTF-8 (lone surrogates replaced), bounded.

    Raises:
        InvalidInputError: wrong type, empty, or too long.
    """
    if value is None and allow_empty:
        return ""
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}")
    if len(value) > max_chars:
        raise InvalidInputError(f"{field} is too long ({len(value)} characters; limit {max_chars})")
    text = value.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        bad = sum(1 for ch in text if "\ud800" <= ch <= "\udfff")
        text = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
        logger.warning("%s held %d character(s) that are not valid UTF-8; stored as U+FFFD", field, bad)
    if not text.strip() and not allow_empty:
        raise InvalidInputError(f"{field} must not be empty")
    return text


def _num(value: Any, field: str, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise InvalidInputError(f"{field} must be a number between {lo} and {hi}")
    if not lo <= float(value) <= hi:
        raise InvalidInputError(f"{field} must be between {lo} and {hi}, got {value}")
    return float(value)


def _int(value: Any, field: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{field} must be an integer between {lo} and {hi}")
    if not lo <= value <= hi:
        raise InvalidInputError(f"{field} must be between {lo} and {hi}, got {value}")
    return value


def _str_list(value: Any, field: str, *, max_items: int = 64) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise InvalidInputError(f"{field} must be a list of strings")
    if len(value) > max_items:
        raise InvalidInputError(f"{field} has too many items ({len(value)}; limit {max_items})")
    out: list[str] = []
    for item in value:
        item = clean_text(item, field, max_chars=200, allow_empty=True).strip()
        if item and item not in out:
            out.append(item)
    return out


def _kind(value: Any) -> str:
    if not isinstance(value, str) or value.strip().lower() not in KINDS:
        raise InvalidInputError(f"kind must be one of {', '.join(KINDS)}; got {value!r}")
    return value.strip().lower()


def _hash(kind: str, title: str, body: str) -> str:
    return hashlib.sha256(f"{kind}\x1f{normalize(title).strip()}\x1f{normalize(body).strip()}".encode()).hexdigest()


def _blob(vector) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def _unblob(data: bytes):
    import numpy as np

    return np.frombuffer(data, dtype="<f4")


def _embed_text(title: str, piece: str) -> str:
    """What a chunk's vector is computed from: its memory's title, then the chunk."""
    return (title + "\n" + piece).strip() if title else piece


def _dot(a, b) -> float:
    import numpy as np

    return float(np.dot(a, b))


def _fts_tokens(title: str, tags_json: str, chunk_text: str) -> str:
    """What the FTS `tokens` column holds for one chunk: its memory's title and tags, then its text."""
    return index_text(title, " ".join(json.loads(tags_json or "[]")), chunk_text)


def _coverage(terms: Sequence[str], idf: dict, tokens: set, cross: dict) -> float:
    """Share of the query's IDF mass found in these index tokens, a translation standing in for its word."""
    mass = sum(idf[t] for t in terms)
    if not mass:
        return 0.0
    found = sum(idf[t] for t in terms
                if t in tokens or any(all(x in tokens for x in form) for form in cross.get(t, ())))
    return found / mass


class MemoryStore:
    """One SQLite file of memories: remember, recall, revise, forget, brief, export.

    :param path: database file (default `config.db_path`); `":memory:"` for tests.
    :param config: resolved settings (default: built-in defaults under the file's folder).
    :param embedder: an `EmbeddingProvider`; None resolves the configured one lazily.
    :param namespace: default namespace (default `config.default_namespace()`).
    :param driver: force a SQLite driver ('sqlite3', 'sqlean', 'pysqlite3').
    :param vectors: 'auto' (sqlite-vec when loadable) or 'numpy' (brute force).
    :param cache_vectors: long-lived processes (the MCP server) keep the live vectors in RAM and
        search them with numpy (~10 ms at 100k instead of ~100 ms for a full vec0 scan); reloaded
        when another connection commits. Capped by `recall.ram_vector_limit` chunks.
    Raises:
        StorageError, MigrationError: the file cannot be opened or upgraded.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, config: Config | None = None,
                 embedder=None, namespace: str | None = None, driver: str | None = None,
                 vectors: str = "auto", clock: Callable[[], float] = time.time, cache_vectors: bool = False,
                 upgrade_index: bool = True):
        if config is None:
            home = Path(path).parent if path not in (None, ":memory:") else Path.cwd()
            config = Config(home=home)
        self.config = config
        self.path = str(path) if path is not None else str(config.db_path)
        self.driver = dbm.choose_driver(driver, vectors=vectors)
        self.conn = dbm.connect(self.path, self.driver)
        self.clock = clock
        self.namespace = normalize_namespace(namespace or config.default_namespace(), allow_all=True)
        self._embedder = embedder
        self._embedder_checked = False
        self.embedder_warning: str | None = None
        self._matrix_cache: dict = {}
        self._generation = 0
        self._total_cache: tuple | None = None
        self.cache_vectors = cache_vectors
        if "m001_initial" in dbm.migrate(self.conn, self.driver):   # a new store: indexed by this tokenizer
            from supermemory import reredact

            with self._txn():
                dbm.set_meta(self.conn, "tokenizer_version", str(TOKENIZER_VERSION))
                reredact.stamp(self)   # and redacted by these rules
        self.index_stale = self._index_version() != str(TOKENIZER_VERSION)
        if self.index_stale and upgrade_index:
            try:
                self.upgrade_index()
            except (StorageError, self.driver.Error) as exc:   # e.g. locked: old tokens still work
                logger.warning("search index not rebuilt for tokenizer v%s (will retry): %s", TOKENIZER_VERSION, exc)

    # --- plumbing -------------------------------------------------------------------------

    def _index_version(self) -> str:
        return dbm.get_meta(self.conn, "tokenizer_version") or "1"   # stores from before the stamp: v1

    def upgrade_index(self) -> dict:
        """Re-tokenize every live chunk into FTS when the tokenizer changed since it was indexed.

        Runs on open (hooks skip it: `upgrade_index=False`, they must stay fast; the old tokens
        still work there, a little worse). One write transaction: all or nothing.
        """
        if self._index_version() == str(TOKENIZER_VERSION):
            self.index_stale = False
            return {"rebuilt": 0}
        started = time.perf_counter()
        with self._txn():
            rows = self.conn.execute(
                f"SELECT c.id, c.text, m.title, m.tags, m.namespace FROM chunks c JOIN memories m "
                f"ON m.id = c.memory_id WHERE {LIVE}").fetchall()
            self.conn.execute("DELETE FROM fts")
            self.conn.executemany(
                "INSERT INTO fts(rowid, tokens, ns) VALUES (?, ?, ?)",
                ((cid, _fts_tokens(title, tags, text), "ns_" + ns) for cid, text, title, tags, ns in rows))
            dbm.set_meta(self.conn, "tokenizer_version", str(TOKENIZER_VERSION))
        self._generation += 1
        self._total_cache = None
        self.index_stale = False
        logger.info("search index rebuilt for tokenizer v%s: %d chunks in %.1f s", TOKENIZER_VERSION, len(rows),
                    time.perf_counter() - started)
        return {"rebuilt": len(rows)}

    def close(self) -> None:
        """Close the connection (idempotent)."""
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()

    def __enter__(self) -> "MemoryStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _txn(self):
        return dbm.write_txn(self.conn, self.driver)

    def _q(self, sql: str, params: Sequence = ()) -> list:
        try:
            return self.conn.execute(sql, params).fetchall()
        except self.driver.Error as exc:
            raise StorageError(f"database error: {exc}") from exc

    @property
    def embedder(self):
        """The embedding provider, resolved and checked against the DB pin on first use.

        Raises:
            ModelMismatchError: the DB is pinned to a different model.
            EmbeddingUnavailableError: no provider can run.
        """
        if self._embedder is None:
            self._embedder = self._resolve_embedder()
        if not self._embedder_checked:
            fresh = self.pinned_model() is None
            self._check_pin(self._embedder)
            self._embedder_checked = True
            if fresh:
                self._embed_missing_vectors()
        return self._embedder

    def _resolve_embedder(self):
        """The configured provider; the `hash` fallback only for a database already pinned to it.

        A missing model is a state that passes (`supermemory model install`), so it is never
        cached: until then writes are lexical-only and the next call looks for the model again,
        instead of pinning a fresh database to the fallback for good.
        """
        from supermemory.embed import resolve_provider

        provider, warning = resolve_provider(self.config, self.pinned_model())
        if warning:
            logger.warning(warning)
            self.embedder_warning = warning
        return provider

    def _embed_missing_vectors(self) -> int:
        """Embed the live chunks written while no model could run (right after the first pin)."""
        rows = self._q(f"SELECT c.id, c.text, m.title FROM chunks c JOIN memories m ON m.id = c.memory_id "
                       f"WHERE {LIVE} AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id)")
        if not rows:
            return 0
        matrix = self._embedder.embed_multi([_embed_text(title, text) for _, text, title in rows])
        with self._txn():
            for (chunk_id, _, _), vector in zip(rows, matrix):
                self.conn.execute("INSERT OR IGNORE INTO vectors(chunk_id, embedding) VALUES (?, ?)",
                                  (chunk_id, _blob(vector)))
            if self._vec_index_usable():
                self._fill_vec_index()
            else:
                self._mark_vec_dirty()
        self._generation += 1
        logger.info("embedded %d chunks stored while the model was missing", len(rows))
        return len(rows)

    def pinned_model(self) -> dict | None:
        """The embedding model fingerprint pinned in this database, if any."""
        raw = dbm.get_meta(self.conn, "embedder")
        return json.loads(raw) if raw else None

    def _check_pin(self, embedder) -> None:
        fingerprint = embedder.fingerprint()
        pinned = self.pinned_model()
        if pinned is None:
            with self._txn():
                if self.pinned_model() is None:
                    dbm.set_meta(self.conn, "embedder", json.dumps(fingerprint, sort_keys=True))
                    if self.driver.vec:
                        dbm.create_vec_table(self.conn, fingerprint["dimensions"])
            return
        if pinned != fingerprint:
            raise ModelMismatchError(
                f"this database is pinned to embedder {pinned.get('provider')}/{pinned.get('model')} "
                f"({pinned.get('dimensions')}-d, checksum {str(pinned.get('checksum'))[:12]}) but the configured "
                f"one is {fingerprint['provider']}/{fingerprint['model']} ({fingerprint['dimensions']}-d, checksum "
                f"{str(fingerprint['checksum'])[:12]}); run `supermemory reindex` to re-embed every memory")
        if self.driver.vec and not dbm.vec_table_exists(self.conn):
            with self._txn():
                dbm.create_vec_table(self.conn, fingerprint["dimensions"])
                self._fill_vec_index()
        elif self.driver.vec and dbm.get_meta(self.conn, "vec_dirty") == "1":
            with self._txn():
                self._fill_vec_index()

    def _fill_vec_index(self) -> None:
        """Rebuild vec_mem from the canonical BLOB table (after writes by a non-vec driver)."""
        self.conn.execute("DELETE FROM vec_mem")
        self.conn.execute(
            f"INSERT INTO vec_mem(chunk_id, namespace, embedding) SELECT c.id, c.namespace, v.embedding "
            f"FROM chunks c JOIN vectors v ON v.chunk_id = c.id JOIN memories m ON m.id = c.memory_id WHERE {LIVE}")
        dbm.set_meta(self.conn, "vec_dirty", "0")

    def _vec_index_usable(self) -> bool:
        return self.driver.vec and dbm.vec_table_exists(self.conn)

    def _mark_vec_dirty(self) -> None:
        if not self.driver.vec and dbm.vec_table_exists(self.conn):
            dbm.set_meta(self.conn, "vec_dirty", "1")

    def namespaces(self) -> list[str]:
        """Namespaces that hold at least one memory (any state)."""
        return [r[0] for r in self._q("SELECT DISTINCT namespace FROM memories ORDER BY namespace")]

    def _write_namespace(self, namespace: str | None, create: bool) -> str:
        if namespace is None:
            ns = self.namespace
            if ns == ALL_NAMESPACES:
                raise InvalidInputError("the default namespace is '*'; give an explicit namespace to write to")
            return ns
        ns = normalize_namespace(namespace)
        if ns in (self.namespace, GLOBAL_NAMESPACE) or create:
            return ns
        if not self._q("SELECT 1 FROM memories WHERE namespace = ? LIMIT 1", (ns,)):
            raise NamespaceError(
                f"namespace {ns!r} does not exist yet (current project is {self.namespace!r}){self._near(ns)}; "
                "pass create_namespace=true (CLI: --create-namespace) to start it")
        return ns

    def _near(self, ns: str) -> str:
        """', did you mean …' with the existing namespaces closest to a mistyped one."""
        import difflib

        names = [n for n in self.namespaces() if n != GLOBAL_NAMESPACE]
        close = difflib.get_close_matches(ns, names, n=3, cutoff=0.6)
        if close:
            return "; did you mean " + " or ".join(repr(n) for n in close) + "?"
        return ("; existing namespaces: " + ", ".join(names[:10]) + (" …" if len(names) > 10 else "")) if names else ""

    def _read_namespaces(self, namespace: str | None, *, must_exist: bool = False) -> list[str] | None:
        """Namespaces a read covers: project + global, one given namespace (+ global), or all (None).

        `must_exist` (recall, list): an explicitly named namespace that holds no memory is a typo
        more often than an empty project, so it is refused with the near names instead of
        answering "nothing found".
        """
        ns = self.namespace if namespace is None else normalize_namespace(namespace, allow_all=True)
        if ns == ALL_NAMESPACES:
            return None
        if (must_exist and namespace is not None and ns not in (self.namespace, GLOBAL_NAMESPACE)
                and not self._q("SELECT 1 FROM memories WHERE namespace = ? LIMIT 1", (ns,))):
            raise NamespaceError(f"namespace {ns!r} does not exist (no memory was ever stored in it){self._near(ns)}")
        return [ns] if ns == GLOBAL_NAMESPACE else [ns, GLOBAL_NAMESPACE]

    @staticmethod
    def _ns_clause(namespaces: list[str] | None, column: str = "m.namespace") -> tuple[str, list]:
        if namespaces is None:
            return "1", []
        return f"{column} IN ({','.join('?' * len(namespaces))})", list(namespaces)

    # --- rows ---------------------------------------------------------------------------------

    def _row(self, row) -> dict:
        keys = [k.strip() for k in _MEMORY_COLUMNS.split(",")]
        return dict(zip(keys, row))

    def _public(self, rec: dict, *, body: bool = True) -> dict:
        out = {
            "id": format_id(rec["id"]),
            "namespace": rec["namespace"],
            "kind": rec["kind"],
            "title": rec["title"],
            "summary": rec["summary"],
            "tags": json.loads(rec["tags"] or "[]"),
            "importance": rec["importance"],
            "confidence": rec["confidence"],
            "pinned": bool(rec["pinned"]),
            "status": rec["status"],
            "source": json.loads(rec["source"] or "{}"),
            "created_at": iso(rec["created_at"]),
            "updated_at": iso(rec["updated_at"]),
            "last_recalled_at": iso(rec["last_recalled_at"]),
            "recall_count": rec["recall_count"],
            "expires_at": iso(rec["expires_at"]),
            "valid_from": iso(rec["valid_from"]),
            "valid_to": iso(rec["valid_to"]),
            "superseded_by": format_id(rec["superseded_by"]) if rec["superseded_by"] else None,
            "version_of": format_id(rec["root_id"]) if rec["root_id"] else None,
            "deleted_at": iso(rec["deleted_at"]),
        }
        if body:
            out["body"] = rec["body"]
        return out

    def _fetch(self, row_id: int) -> dict | None:
        rows = self._q(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ?", (row_id,))
        return self._row(rows[0]) if rows else None

    def _index_live(self, memory_id: int) -> None:
        """Put a memory's chunks into FTS and vec0 (inside a write transaction)."""
        rec = self._fetch(memory_id)
        for chunk_id, seq, text in self.conn.execute(
                "SELECT id, seq, text FROM chunks WHERE memory_id = ? ORDER BY seq", (memory_id,)).fetchall():
            self.conn.execute("INSERT INTO fts(rowid, tokens, ns) VALUES (?, ?, ?)",
                              (chunk_id, _fts_tokens(rec["title"], rec["tags"], text), "ns_" + rec["namespace"]))
        self._generation += 1  # our own commits do not change PRAGMA data_version
        if self._vec_index_usable():
            self.conn.execute(
                "INSERT INTO vec_mem(chunk_id, namespace, embedding) SELECT c.id, c.namespace, v.embedding "
                "FROM chunks c JOIN vectors v ON v.chunk_id = c.id WHERE c.memory_id = ?", (memory_id,))
        else:
            self._mark_vec_dirty()
        self._matrix_cache.clear()

    def _unindex(self, memory_id: int) -> None:
        ids = [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE memory_id = ?", (memory_id,))]
        self._generation += 1
        for chunk_id in ids:
            self.conn.execute("DELETE FROM fts WHERE rowid = ?", (chunk_id,))
            if self._vec_index_usable():
                self.conn.execute("DELETE FROM vec_mem WHERE chunk_id = ?", (chunk_id,))
        if not self._vec_index_usable():
            self._mark_vec_dirty()
        self._matrix_cache.clear()

    def _chunk(self, body: str) -> list[str]:
        return chunk(body, max_tokens=int(self.config.get("store.chunk_max_tokens", 260)),
                     overlap_tokens=int(self.config.get("store.chunk_overlap_tokens", 48)))

    def _embed_chunks(self, title: str, pieces: list[str], progress: Callable[[int, int], None] | None = None):
        """Vectors for chunk texts, or None when no embedder can run (lexical-only, loudly)."""
        texts = [_embed_text(title, p) for p in pieces]
        try:
            return self.embedder.embed_multi(texts, progress=progress)
        except EmbeddingUnavailableError as exc:
            logger.warning("storing without vectors (lexical recall only until `supermemory reindex`): %s", exc)
            return None

    def _insert(self, *, namespace: str, kind: str, title: str, body: str, tags: list[str], source: dict,
                importance: float, confidence: float, pinned: bool, status: str | None,
                ttl_days: float | None, now: float, root_id: int | None, external_key: str | None,
                created_at: float | None, content_hash: str, pieces: list[str], vectors,
                extra: dict | None = None) -> int:
        expires = now + ttl_days * 86400 if ttl_days else None
        extra = extra or {}
        cur = self.conn.execute(
            "INSERT INTO memories(namespace, kind, title, body, summary, tags, source, platform, importance, "
            "confidence, pinned, status, ttl_days, expires_at, created_at, updated_at, last_recalled_at, "
            "recall_count, content_hash, root_id, valid_from, external_key, id) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (namespace, kind, title, body, summarize(body) if body else summarize(title),
             json.dumps(tags, ensure_ascii=False), json.dumps(source, ensure_ascii=False, sort_keys=True),
             str(source.get("platform", "")), importance, confidence, int(pinned), status, ttl_days,
             extra.get("expires_at", expires), created_at if created_at is not None else now,
             extra.get("updated_at", now), extra.get("last_recalled_at"), extra.get("recall_count", 0),
             content_hash, root_id, extra.get("valid_from", now), external_key, extra.get("id")))
        memory_id = cur.lastrowid
        for seq, piece in enumerate(pieces):
            chunk_id = self.conn.execute(
                "INSERT INTO chunks(memory_id, seq, namespace, text) VALUES (?, ?, ?, ?)",
                (memory_id, seq, namespace, piece)).lastrowid
            if vectors is not None:
                self.conn.execute("INSERT INTO vectors(chunk_id, embedding) VALUES (?, ?)",
                                  (chunk_id, _blob(vectors[seq])))
        return memory_id

    def _prepare_content(self, content: str, title: str) -> tuple[str, str, dict]:
        from supermemory.redact import redact

        enabled = bool(self.config.get("store.redact_secrets", True))
        body, counts = redact(content, enabled=enabled)
        title, title_counts = redact(title, enabled=enabled)
        for key, value in title_counts.items():
            counts[key] = counts.get(key, 0) + value
        return body.strip(), title.strip(), counts

    # --- writes -------------------------------------------------------------------------------

    def remember(self, content: str, *, title: str | None = None, kind: str = "note",
                 tags: Sequence[str] | None = None, importance: float | None = None,
                 confidence: float = 1.0, pinned: bool = False, ttl_days: float | None = None,
                 namespace: str | None = None, source: dict | None = None, status: str | None = None,
                 create_namespace: bool = False, external_key: str | None = None,
                 progress: Callable[[int, int], None] | None = None) -> dict:
        """Store a memory (chunked, redacted, embedded); exact repeats return the existing id.

        :param content: the memory text.
        :param kind: fact, decision, preference, task, gotcha, note or session.
        :param namespace: target namespace; one that does not exist yet needs `create_namespace`.
        :param progress: `progress(chunks embedded, chunks)` for long texts (the CLI shows it).
        :returns: {"id", "status": "created"|"duplicate", "near_duplicates", "chunks", "redacted", ...}
        Raises:
            InvalidInputError: bad arguments. NamespaceError: unknown namespace without consent.
        """
        limit = int(self.config.get("store.max_content_chars", 1_000_000))
        content = clean_text(content, "content", max_chars=limit)
        title = clean_text(title, "title", max_chars=500, allow_empty=True)
        kind = _kind(kind)
        tags = _str_list(tags, "tags")
        importance = _num(self.config.get("store.default_importance", 0.5) if importance is None else importance,
                          "importance", 0, 1)
        confidence = _num(confidence, "confidence", 0, 1)
        if not isinstance(pinned, bool):
            raise InvalidInputError("pinned must be true or false")
        if ttl_days is not None:
            ttl_days = _num(ttl_days, "ttl_days", 0, 36500) or None
        if status is not None or kind == "task":
            status = status or "open"
            if status not in TASK_STATUSES:
                raise InvalidInputError(f"status must be one of {', '.join(TASK_STATUSES)}")
        if source is not None and not isinstance(source, dict):
            raise InvalidInputError("source must be an object")
        ns = self._write_namespace(namespace, create_namespace)
        body, title, redacted = self._prepare_content(content, title)
        if not body:
            raise InvalidInputError("content is empty after removing <private> spans")
        if not title:
            title = summarize(body, max_chars=80)
        digest = _hash(kind, title, body)
        existing = self._q(f"SELECT m.id FROM memories m WHERE m.namespace = ? AND m.kind = ? AND "
                           f"m.content_hash = ? AND {LIVE}", (ns, kind, digest))
        if existing:
            return {"id": format_id(existing[0][0]), "status": "duplicate", "namespace": ns,
                    "duplicate_of": format_id(existing[0][0]), "near_duplicates": [], "chunks": 0,
                    "redacted": redacted}
        pieces = self._chunk(body)
        vectors = self._embed_chunks(title, pieces, progress)
        near = self._near_duplicates(vectors[0], [ns]) if vectors is not None else []
        now = self.clock()
        with self._txn():
            again = self.conn.execute(f"SELECT m.id FROM memories m WHERE m.namespace = ? AND m.kind = ? AND "
                                      f"m.content_hash = ? AND {LIVE}", (ns, kind, digest)).fetchone()
            if again:
                return {"id": format_id(again[0]), "status": "duplicate", "namespace": ns,
                        "duplicate_of": format_id(again[0]), "near_duplicates": [], "chunks": 0,
                        "redacted": redacted}
            memory_id = self._insert(
                namespace=ns, kind=kind, title=title, body=body, tags=tags, source=dict(source or {}),
                importance=importance, confidence=confidence, pinned=pinned, status=status,
                ttl_days=ttl_days, now=now, root_id=None, external_key=external_key, created_at=None,
                content_hash=digest, pieces=pieces, vectors=vectors)
            self._index_live(memory_id)
        return {"id": format_id(memory_id), "status": "created", "namespace": ns, "kind": kind,
                "title": title, "near_duplicates": near, "chunks": len(pieces), "redacted": redacted,
                "embedded": vectors is not None}

    def remember_many(self, items: Iterable[dict], *, progress: Callable[[int, int], None] | None = None,
                      create_namespace: bool = False) -> list[str]:
        """Bulk remember: validate all, embed in batches, insert in one transaction; returns ids.

        Exact repeats (also within the batch) map to the existing id. No near-duplicate hints.
        Raises:
            InvalidInputError: any item is invalid (nothing is written then).
        """
        limit = int(self.config.get("store.max_content_chars", 1_000_000))
        prepared = []
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise InvalidInputError(f"item {index} must be an object")
            content = clean_text(item.get("content"), f"item {index} content", max_chars=limit)
            kind = _kind(item.get("kind") or "note")
            body, title, _ = self._prepare_content(content, clean_text(item.get("title"), "title", max_chars=500,
                                                                       allow_empty=True))
            if not body:
                raise InvalidInputError(f"item {index} is empty after redaction")
            title = title or summarize(body, max_chars=80)
            ns = self._write_namespace(item.get("namespace"), create_namespace)
            importance = item.get("importance")
            importance = _num(self.config.get("store.default_importance", 0.5) if importance is None else importance,
                              "importance", 0, 1)
            pieces = self._chunk(body)
            prepared.append({"ns": ns, "kind": kind, "title": title, "body": body,
                             "tags": _str_list(item.get("tags"), "tags"), "importance": importance,
                             "pinned": bool(item.get("pinned", False)), "pieces": pieces,
                             "hash": _hash(kind, title, body), "source": dict(item.get("source") or {})})
        texts = [_embed_text(p["title"], piece) for p in prepared for piece in p["pieces"]]
        try:
            matrix = self.embedder.embed_multi(texts, progress=progress)
        except EmbeddingUnavailableError as exc:
            logger.warning("storing without vectors: %s", exc)
            matrix = None
        now = self.clock()
        ids: list[str] = []
        offset = 0
        seen: dict[tuple, int] = {}
        with self._txn():
            for p in prepared:
                n = len(p["pieces"])
                vectors = matrix[offset:offset + n] if matrix is not None else None
                offset += n
                key = (p["ns"], p["kind"], p["hash"])
                existing = seen.get(key) or (self.conn.execute(
                    f"SELECT m.id FROM memories m WHERE m.namespace = ? AND m.kind = ? AND m.content_hash = ? "
                    f"AND {LIVE}", key).fetchone() or [None])[0]
                if existing:
                    ids.append(format_id(existing))
                    continue
                memory_id = self._insert(
                    namespace=p["ns"], kind=p["kind"], title=p["title"], body=p["body"], tags=p["tags"],
                    source=p["source"], importance=p["importance"], confidence=1.0, pinned=p["pinned"],
                    status="open" if p["kind"] == "task" else None, ttl_days=None, now=now, root_id=None,
                    external_key=None, created_at=None, content_hash=p["hash"], pieces=p["pieces"],
                    vectors=vectors)
                self._index_live(memory_id)
                seen[key] = memory_id
                ids.append(format_id(memory_id))
        return ids

    def _near_duplicates(self, vector, namespaces: list[str]) -> list[dict]:
        threshold = float(self.config.get("store.near_duplicate_similarity", 0.9))
        hits = self._vector_search(vector, namespaces, k=5)
        out = []
        seen = set()
        for memory_id, cosine in hits:
            if cosine >= threshold and memory_id not in seen:
                seen.add(memory_id)
                rec = self._fetch(memory_id)
                out.append({"id": format_id(memory_id), "title": rec["title"], "similarity": round(cosine, 4),
                            "hint": "similar memory exists: update it instead if this revises it"})
        return out

    def _live(self, memory_id: int, namespaces: list[str] | None) -> dict:
        rec = self._fetch(memory_id)
        if rec is None or (namespaces is not None and rec["namespace"] not in namespaces):
            raise NotFoundError(f"no memory {format_id(memory_id)} in namespace(s) "
                                f"{', '.join(namespaces) if namespaces else '*'}")
        if rec["deleted_at"] is not None:
            raise NotFoundError(f"memory {format_id(memory_id)} is deleted; `restore` brings it back")
        if rec["superseded_by"] is not None:
            head = self._head(memory_id)
            raise InvalidInputError(f"memory {format_id(memory_id)} was superseded; the current version is "
                                    f"{format_id(head)}")
        return rec

    def _head(self, memory_id: int) -> int:
        seen = set()
        while True:
            row = self.conn.execute("SELECT superseded_by FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if not row or row[0] is None or memory_id in seen:
                return memory_id
            seen.add(memory_id)
            memory_id = row[0]

    def update(self, id: Any, *, content: str | None = None, title: str | None = None,
               kind: str | None = None, tags: Sequence[str] | None = None, importance: float | None = None,
               confidence: float | None = None, pinned: bool | None = None, status: str | None = None,
               ttl_days: Any = _UNSET, namespace: str | None = None, source: dict | None = None,
               force: bool = False) -> dict:
        """Revise a memory: a new row supersedes the old one (history kept, never overwritten).

        :param force: write a new version even when nothing changed (used by merge).

        Raises:
            NotFoundError: unknown id. InvalidInputError: bad arguments or nothing changed.
        """
        old = self._live(parse_id(id), self._read_namespaces(namespace))
        limit = int(self.config.get("store.max_content_chars", 1_000_000))
        new_kind = _kind(kind) if kind is not None else old["kind"]
        if content is not None:
            content = clean_text(content, "content", max_chars=limit)
        if title is not None:
            title = clean_text(title, "title", max_chars=500, allow_empty=True)
        if title is None and content is not None and old["title"] == summarize(old["body"], max_chars=80):
            title = ""   # the old title was made from the old text: make a new one from the new text
        body, new_title, redacted = self._prepare_content(
            content if content is not None else old["body"], title if title is not None else old["title"])
        if not body:
            raise InvalidInputError("content is empty after removing <private> spans")
        new_title = new_title or summarize(body, max_chars=80)
        new_tags = _str_list(tags, "tags") if tags is not None else json.loads(old["tags"])
        new_importance = _num(importance, "importance", 0, 1) if importance is not None else old["importance"]
        new_confidence = _num(confidence, "confidence", 0, 1) if confidence is not None else old["confidence"]
        if pinned is not None and not isinstance(pinned, bool):
            raise InvalidInputError("pinned must be true or false")
        new_pinned = bool(old["pinned"]) if pinned is None else pinned
        new_status = old["status"]
        if status is not None:
            if status not in TASK_STATUSES:
                raise InvalidInputError(f"status must be one of {', '.join(TASK_STATUSES)}")
            new_status = status
        elif new_kind == "task" and not new_status:
            new_status = "open"
        new_ttl = old["ttl_days"]
        if ttl_days is not _UNSET:
            new_ttl = _num(ttl_days, "ttl_days", 0, 36500) or None if ttl_days is not None else None
        new_source = dict(json.loads(old["source"] or "{}"))
        if source:
            new_source.update(source)
        digest = _hash(new_kind, new_title, body)
        same = (digest == old["content_hash"] and new_tags == json.loads(old["tags"]) and
                new_importance == old["importance"] and new_confidence == old["confidence"] and
                new_pinned == bool(old["pinned"]) and new_status == old["status"] and new_ttl == old["ttl_days"])
        if same and not force:
            return {"id": format_id(old["id"]), "previous": None, "status": "unchanged", "redacted": redacted}
        if digest == old["content_hash"]:
            pieces = [r[0] for r in self._q("SELECT text FROM chunks WHERE memory_id = ? ORDER BY seq", (old["id"],))]
            vectors = self._stored_vectors(old["id"])
        else:
            pieces = self._chunk(body)
            vectors = self._embed_chunks(new_title, pieces)
        now = self.clock()
        with self._txn():
            current = self.conn.execute("SELECT superseded_by, deleted_at FROM memories WHERE id = ?",
                                        (old["id"],)).fetchone()
            if current[0] is not None or current[1] is not None:
                raise InvalidInputError(f"memory {format_id(old['id'])} changed meanwhile; fetch it again")
            new_id = self._insert(
                namespace=old["namespace"], kind=new_kind, title=new_title, body=body, tags=new_tags,
                source=new_source, importance=new_importance, confidence=new_confidence, pinned=new_pinned,
                status=new_status, ttl_days=new_ttl, now=now, root_id=old["root_id"] or old["id"],
                external_key=old["external_key"], created_at=old["created_at"], content_hash=digest,
                pieces=pieces, vectors=vectors,
                extra={"recall_count": old["recall_count"], "last_recalled_at": old["last_recalled_at"]})
            self._unindex(old["id"])
            self.conn.execute("UPDATE memories SET superseded_by = ?, valid_to = ? WHERE id = ?",
                              (new_id, now, old["id"]))
            self.conn.execute("UPDATE OR IGNORE links SET src = ? WHERE src = ?", (new_id, old["id"]))
            self.conn.execute("UPDATE OR IGNORE links SET dst = ? WHERE dst = ?", (new_id, old["id"]))
            self._index_live(new_id)
        return {"id": format_id(new_id), "previous": format_id(old["id"]), "status": "updated",
                "redacted": redacted}

    def _stored_vectors(self, memory_id: int):
        import numpy as np

        rows = self._q("SELECT v.embedding FROM chunks c JOIN vectors v ON v.chunk_id = c.id "
                       "WHERE c.memory_id = ? ORDER BY c.seq", (memory_id,))
        count = self._q("SELECT count(*) FROM chunks WHERE memory_id = ?", (memory_id,))[0][0]
        if not rows or len(rows) != count:
            return None
        return np.vstack([_unblob(r[0]) for r in rows])

    def forget(self, ids: Any, *, hard: bool = False, namespace: str | None = None, reason: str = "forget") -> dict:
        """Soft-delete (default) or hard-delete memories; soft deletes can be restored.

        Raises:
            NotFoundError: an id does not exist in the namespaces read.
        """
        id_list = [parse_id(i) for i in (ids if isinstance(ids, (list, tuple)) else [ids])]
        if not id_list:
            raise InvalidInputError("ids must not be empty")
        if not isinstance(hard, bool):
            raise InvalidInputError("hard must be true or false")
        namespaces = self._read_namespaces(namespace)
        now = self.clock()
        done = []
        with self._txn():
            for memory_id in id_list:
                rec = self._fetch(memory_id)
                if rec is None or (namespaces is not None and rec["namespace"] not in namespaces):
                    raise NotFoundError(f"no memory {format_id(memory_id)}")
                if hard:
                    chain = [r[0] for r in self.conn.execute(
                        "SELECT id FROM memories WHERE id = ? OR root_id = ? OR id = ?",
                        (rec["root_id"] or memory_id, rec["root_id"] or memory_id, memory_id))]
                    for row_id in chain:
                        self._unindex(row_id)
                        self.conn.execute("DELETE FROM links WHERE src = ? OR dst = ?", (row_id, row_id))
                        self.conn.execute(
                            "DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE memory_id = ?)",
                            (row_id,))
                        self.conn.execute("DELETE FROM chunks WHERE memory_id = ?", (row_id,))
                        self.conn.execute("DELETE FROM memories WHERE id = ?", (row_id,))
                    done.append(format_id(memory_id))
                    continue
                if rec["superseded_by"] is not None:
                    raise InvalidInputError(f"{format_id(memory_id)} is an old version; forget the current one, "
                                            f"{format_id(self._head(memory_id))}")
                if rec["deleted_at"] is None:
                    self._unindex(memory_id)
                if rec["deleted_at"] is None:
                    self.conn.execute("UPDATE memories SET deleted_at = ?, delete_reason = ? WHERE id = ?",
                                      (now, reason, memory_id))
                done.append(format_id(memory_id))
        return {"forgotten": done, "hard": hard}

    def restore(self, ids: Any, *, namespace: str | None = None) -> dict:
        """Bring soft-deleted or archived memories back, refreshing their access time.

        Raises:
            NotFoundError: unknown id, or it was hard-deleted.
        """
        id_list = [parse_id(i) for i in (ids if isinstance(ids, (list, tuple)) else [ids])]
        namespaces = self._read_namespaces(namespace)
        now = self.clock()
        restored = []
        with self._txn():
            for memory_id in id_list:
                rec = self._fetch(memory_id)
                if rec is None or (namespaces is not None and rec["namespace"] not in namespaces):
                    raise NotFoundError(f"no memory {format_id(memory_id)}")
                if rec["deleted_at"] is None:
                    continue
                self.conn.execute("UPDATE memories SET deleted_at = NULL, delete_reason = NULL, "
                                  "last_recalled_at = ? WHERE id = ?", (now, memory_id))
                if rec["superseded_by"] is None:
                    self._index_live(memory_id)
                restored.append(format_id(memory_id))
        return {"restored": restored}

    def link(self, src: Any, dst: Any, *, relation: str = "related", weight: float = 1.0,
             namespace: str | None = None) -> dict:
        """Record a typed relation between two live memories (idempotent; weight updated).

        Raises:
            InvalidInputError: unknown relation or a self-link. NotFoundError: unknown ids.
        """
        if relation not in RELATIONS:
            raise InvalidInputError(f"relation must be one of {', '.join(RELATIONS)}")
        weight = _num(weight, "weight", 0, 100)
        namespaces = self._read_namespaces(namespace)
        a = self._live(parse_id(src), namespaces)
        b = self._live(parse_id(dst), namespaces)
        if a["id"] == b["id"]:
            raise InvalidInputError("a memory cannot link to itself")
        with self._txn():
            self.conn.execute("INSERT INTO links(src, dst, relation, weight, created_at) VALUES (?,?,?,?,?) "
                              "ON CONFLICT(src, dst, relation) DO UPDATE SET weight = excluded.weight",
                              (a["id"], b["id"], relation, weight, self.clock()))
        return {"src": format_id(a["id"]), "dst": format_id(b["id"]), "relation": relation, "weight": weight}

    # --- reads --------------------------------------------------------------------------------

    def get(self, ids: Any, *, namespace: str | None = None) -> dict:
        """Full records by id (superseded versions too, marked); missing ids are listed, and the
        forgotten ones among them also under `forgotten` (`restore` brings them back).

        Raises:
            InvalidInputError: malformed ids.
        """
        id_list = [parse_id(i) for i in (ids if isinstance(ids, (list, tuple)) else [ids])]
        if not id_list:
            raise InvalidInputError("ids must not be empty")
        if len(id_list) > 100:
            raise InvalidInputError("at most 100 ids per call")
        namespaces = self._read_namespaces(namespace)
        found, missing, forgotten = [], [], []
        for memory_id in id_list:
            rec = self._fetch(memory_id)
            if rec is None or rec["deleted_at"] is not None or (
                    namespaces is not None and rec["namespace"] not in namespaces):
                missing.append(format_id(memory_id))
                if rec is not None and rec["deleted_at"] is not None and (
                        namespaces is None or rec["namespace"] in namespaces):
                    forgotten.append(format_id(memory_id))
                continue
            item = self._public(rec)
            item["links"] = self._links_of(memory_id)
            found.append(item)
        return {"memories": found, "missing": missing, "forgotten": forgotten}

    def _links_of(self, memory_id: int) -> list[dict]:
        rows = self._q("SELECT src, dst, relation, weight FROM links WHERE src = ? OR dst = ?", (memory_id, memory_id))
        return [{"src": format_id(s), "dst": format_id(d), "relation": r, "weight": w} for s, d, r, w in rows]

    def history(self, id: Any, *, namespace: str | None = None) -> dict:
        """Every version of a memory's chain, oldest first, and the in-place redactions of any of
        them (`redactions`: id, at, types, fields rewritten).

        Raises:
            NotFoundError: unknown id.
        """
        memory_id = parse_id(id)
        rec = self._fetch(memory_id)
        namespaces = self._read_namespaces(namespace)
        if rec is None or (namespaces is not None and rec["namespace"] not in namespaces):
            raise NotFoundError(f"no memory {format_id(memory_id)}")
        root = rec["root_id"] or rec["id"]
        rows = self._q(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ? OR root_id = ? ORDER BY valid_from, id",
                       (root, root))
        chain = [r[0] for r in rows]
        marks = ",".join("?" * len(chain))
        merged = self._q(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE superseded_by IN ({marks}) AND id NOT IN "
                         f"({marks}) ORDER BY valid_from, id", chain + chain)
        versions = [self._public(self._row(r)) for r in rows]
        for row in merged:
            item = self._public(self._row(row))
            item["merged_into"] = item["superseded_by"]
            versions.append(item)
        versions.sort(key=lambda v: (v["valid_from"] or "", int(v["id"][1:])))
        ids = [parse_id(v["id"]) for v in versions]
        redactions = [{"id": format_id(row_id), "at": iso(at), "types": json.loads(types), "fields": json.loads(fields)}
                      for row_id, at, types, fields in self._q(
                          f"SELECT memory_id, at, types, fields FROM redactions WHERE memory_id IN "
                          f"({','.join('?' * len(ids))}) ORDER BY at, id", ids)]
        return {"id": format_id(memory_id), "current": format_id(self._head(root)), "versions": versions,
                "redactions": redactions}

    def _filters(self, *, kinds=None, tags=None, since=None, until=None, platform=None,
                 status=None, now: float) -> tuple[str, list]:
        clauses, params = [], []
        if kinds:
            kinds = [_kind(k) for k in _str_list(kinds, "kinds")]
            clauses.append(f"m.kind IN ({','.join('?' * len(kinds))})")
            params.extend(kinds)
        for tag in _str_list(tags, "tags"):
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
        clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        params.append(now)
        return " AND ".join(clauses), params

    def list(self, *, namespace: str | None = None, kinds: Sequence[str] | None = None,
             tags: Sequence[str] | None = None, status: str | None = None, since: Any = None,
             until: Any = None, limit: int = 50, offset: int = 0, order: str = "recent") -> dict:
        """A cheap index of live memories: titles and summaries, no bodies.

        :param order: 'recent' (updated first) or 'importance'.
        """
        limit = _int(limit, "limit", 1, 1000)
        offset = _int(offset, "offset", 0, 10**9)
        now = self.clock()
        where, params = self._filters(kinds=kinds, tags=tags, since=since, until=until, status=status, now=now)
        ns_sql, ns_params = self._ns_clause(self._read_namespaces(namespace, must_exist=True))
        order_sql = {"recent": "m.updated_at DESC, m.id DESC",
                     "importance": "m.pinned DESC, m.importance DESC, m.updated_at DESC"}.get(order)
        if order_sql is None:
            raise InvalidInputError("order must be 'recent' or 'importance'")
        base = f"FROM memories m WHERE {LIVE} AND {ns_sql} AND {where}"
        total = self._q(f"SELECT count(*) {base}", ns_params + params)[0][0]
        rows = self._q(f"SELECT {', '.join('m.' + c.strip() for c in _MEMORY_COLUMNS.split(','))} {base} "
                       f"ORDER BY {order_sql} LIMIT ? OFFSET ?", ns_params + params + [limit, offset])
        items = [self._public(self._row(r), body=False) for r in rows]
        return {"items": items, "total": total, "limit": limit, "offset": offset,
                "truncated": offset + len(items) < total}

    # --- recall -------------------------------------------------------------------------------

    def _vector_search(self, vector, namespaces: list[str] | None, k: int,
                       live_chunks: int | None = None) -> list[tuple[int, float]]:
        """(memory_id, best cosine) for the k nearest live chunks, best first."""
        import numpy as np

        vector = np.asarray(vector, dtype=np.float32)
        hits: dict[int, float] = {}
        use_ram = self.cache_vectors and (live_chunks if live_chunks is not None else self._live_chunk_count()) <= int(
            self.config.get("recall.ram_vector_limit", 250_000))
        if not use_ram and self._vec_index_usable() and dbm.get_meta(self.conn, "vec_dirty") != "1":
            blob = _blob(vector)
            groups = namespaces if namespaces is not None else [None]
            for ns in groups:
                if ns is None:
                    sql = ("SELECT c.memory_id, v.distance FROM vec_mem v JOIN chunks c ON c.id = v.chunk_id "
                           "WHERE v.embedding MATCH ? AND k = ?")
                    params = (blob, k)
                else:
                    sql = ("SELECT c.memory_id, v.distance FROM vec_mem v JOIN chunks c ON c.id = v.chunk_id "
                           "WHERE v.embedding MATCH ? AND k = ? AND v.namespace = ?")
                    params = (blob, k, ns)
                for memory_id, distance in self._q(sql, params):
                    if distance is None:
                        continue
                    cosine = 1.0 - float(distance)
                    if cosine > hits.get(memory_id, -2.0):
                        hits[memory_id] = cosine
        else:
            ids, matrix = self._live_matrix(namespaces)
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

    def _live_chunk_count(self) -> int:
        """Live chunks (each has exactly one `ns_` token), cached until any connection writes."""
        key = (self.conn.execute("PRAGMA data_version").fetchone()[0], self._generation)
        if self._total_cache and self._total_cache[0] == key:
            return self._total_cache[1]
        total = self._q("SELECT coalesce(sum(doc), 0) FROM fts_vocab WHERE term >= 'ns_' AND term < 'ns`' "
                        "AND col = 'ns'")[0][0]
        self._total_cache = (key, total)
        return total

    def _live_matrix(self, namespaces: list[str] | None):
        """Brute-force path: live vectors as one float32 matrix, cached until the DB changes."""
        import numpy as np

        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        key = tuple(namespaces) if namespaces is not None else None
        cached = self._matrix_cache.get(key)
        if cached and cached[0] == version:
            return cached[1], cached[2]
        ns_sql, ns_params = self._ns_clause(namespaces, "c.namespace")
        rows = self._q(f"SELECT c.memory_id, v.embedding FROM chunks c JOIN vectors v ON v.chunk_id = c.id "
                       f"JOIN memories m ON m.id = c.memory_id WHERE {LIVE} AND {ns_sql}", ns_params)
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = (np.vstack([_unblob(r[1]) for r in rows]) if rows
                  else np.zeros((0, 1), dtype=np.float32))
        self._matrix_cache[key] = (version, ids, matrix)
        return ids, matrix

    def _idf(self, terms: list[str], extra: Sequence[str] = ()) -> tuple[dict[str, float], dict[str, int], int]:
        """IDF of each query term over live chunks, plus document frequencies and the chunk count.

        The chunk count comes from the namespace column's vocabulary (every chunk has exactly one
        `ns_` token), which is O(namespaces) instead of a full scan of the FTS table.
        """
        total = self._live_chunk_count() or 1
        counts: dict[str, int] = {}
        lookup = list(dict.fromkeys([*terms, *extra]))   # `extra`: document frequencies only (name forms)
        if lookup:
            marks = ",".join("?" * len(lookup))
            counts = dict(self._q(f"SELECT term, doc FROM fts_vocab WHERE col = 'tokens' AND term IN ({marks})", lookup))
        idf = {}
        for term in terms:
            n = counts.get(term, 0)
            idf[term] = math.log(1 + (total - n + 0.5) / (n + 0.5))
        return idf, counts, total

    def recall(self, query: str, *, limit: int | None = None, namespace: str | None = None,
               kinds: Sequence[str] | None = None, tags: Sequence[str] | None = None,
               since: Any = None, until: Any = None, platform: str | None = None,
               max_tokens: int | None = None, explain: bool = False, explain_all: bool = False,
               min_similarity: float | None = None, relative_cutoff: float | None = None,
               gates: bool = True, touch: bool = True, lexical_only: bool = False, origin: str = "",
               channels: Sequence[str] = ("lexical", "vector")) -> dict:
        """Find the memories that answer `query`: hybrid candidates → ranker → gates → budget.

        :param min_similarity: cosine floor override (0 disables the absolute floor).
        :param relative_cutoff: attention-ratio cutoff override (0 disables).
        :param gates: False turns every relevance gate off for this call (the query gate, the floors
            and the relative cutoff): ranked candidates come back up to `limit` and the budget.
        :param touch: bump recall counters of returned hits (False for benchmarks).
        :param lexical_only: never load the embedding model (hooks).
        :param channels: candidate sources, for baselines: ("lexical",), ("vector",) or both.
        Raises:
            InvalidInputError: bad arguments.
        """
        started = time.perf_counter()
        query = clean_text(query, "query", max_chars=10_000)
        default_limit = int(self.config.get("recall.default_limit", 8))
        limit = _int(limit if limit is not None else default_limit, "limit", 1,
                     int(self.config.get("recall.max_limit", 100)))
        if max_tokens is not None:
            max_tokens = _int(max_tokens, "max_tokens", 1, 1_000_000)
        for name, value in (("min_similarity", min_similarity), ("relative_cutoff", relative_cutoff)):
            if value is not None:
                _num(value, name, 0, 1)
        now = self.clock()
        namespaces = self._read_namespaces(namespace, must_exist=True)
        where, params = self._filters(kinds=kinds, tags=tags, since=since, until=until, platform=platform, now=now)
        settings = self.config.section("ranking")
        n_cand = max(limit * 3, int(settings.get("candidates", 60)))
        filtered = bool(kinds or tags or since or until or platform)
        final, records, query_vec, vector_error, doc_freq = self._gather(
            query, namespaces, where, params, n_cand=n_cand, channels=channels, lexical_only=lexical_only,
            filtered=filtered, now=now)
        if not final:
            return self._finish_recall(query, namespaces, [], [], 0, started, touch, explain, explain_all,
                                       origin, vector_error)
        cfg = self.rank_config(query, min_similarity=min_similarity, relative_cutoff=relative_cutoff,
                               has_vectors=query_vec is not None, doc_freq=doc_freq, gates=gates)
        selected, dropped = ranking.rank(final, cfg, limit=limit, max_tokens=max_tokens,
                                         cosine_fn=_dot if query_vec is not None else None)
        return self._finish_recall(query, namespaces, selected, dropped, len(final), started, touch, explain,
                                   explain_all, origin, vector_error, records)

    def rank_config(self, query: str, *, min_similarity: float | None = None, relative_cutoff: float | None = None,
                    has_vectors: bool = True, doc_freq: dict | None = None, gates: bool = True) -> ranking.RankConfig:
        """The ranker settings for one query: config file values plus per-call overrides."""
        settings = self.config.section("ranking")
        floor = min_similarity if min_similarity is not None else self._default_floor()
        extra = {}
        if not has_vectors:
            extra["lexical_floor"] = min(float(settings.get("lexical_floor", 0.5)), 0.34)
        if not gates:
            floor, relative_cutoff = 0.0, 0.0
            extra.update(lexical_floor=0.0, query_gate=False)
        if getattr(self._embedder, "provider_id", "onnx") != "onnx":
            extra["supersede_cosine"] = 0.0   # calibrated on bge-small; other providers use word overlap
        return ranking.RankConfig.from_settings(settings, vector_floor=floor, relative_cutoff=relative_cutoff,
                                                **self.query_context(query, doc_freq), **extra)

    def _translations(self, query: str) -> dict:
        """The query's glossary translations (`ranking.glossary` false: none)."""
        return cross_terms(query) if self.config.get("ranking.glossary", True) else {}

    def _embedded_query(self, query: str) -> str:
        """What the embedder reads: the query with the Chinese words the glossary knows in English."""
        return english_gloss(query) if self._translations(query) else query

    def query_context(self, query: str, doc_freq: dict | None = None) -> dict:
        """Per-query ranker inputs: the CJK share, its words when it names nothing specific, and its
        names when no memory mentions any of them.

        :param doc_freq: document frequencies already looked up for this query (`_gather` fetches
            the name forms with the query terms); looked up here when not given.
        """
        # What the embedder reads is the glossed query: translated Chinese words are English to it.
        context: dict = {"cjk_share": cjk_share(self._embedded_query(query))}
        vague = vague_query(query)
        if vague:
            context["vague_words"] = vague
        if asks_about_change(query):
            context["asks_change"] = True
        names = named_terms(query)
        lead = leading_word(query)
        if not names and not lead:
            return context
        if doc_freq is None:
            doc_freq = self._idf([], extra=name_forms(query))[1]
        known = {term for term, n in doc_freq.items() if n}
        # A capitalised first word outside the model's everyday vocabulary is a name too ("Kotlin").
        # It only matters when no memory has it, or when it could anchor other names: only then is
        # the vocabulary read (once per process).
        if lead and (names or not known & set(lead[1])):
            from supermemory.embed import vocabulary_words

            if lead[0] not in vocabulary_words(self.config.model_dir):
                names = [(lead[1],), *names]
        # A name is known when every word of it is ("Azure Functions" is not, for all the memories
        # about functions); one known name anchors the query.
        if names and not any(all(known & set(word) for word in name) for name in names):
            context["unknown_names"] = tuple(" ".join(max(word, key=len) for word in name) for name in names)
        return context

    def _gather(self, query: str, namespaces, where: str, params: list, *, n_cand: int, channels, lexical_only: bool,
                filtered: bool, now: float):
        """Candidates from FTS5 bm25 top-N ∪ vector KNN top-N, with every ranking feature filled in."""
        ns_sql, ns_params = self._ns_clause(namespaces)
        terms = query_terms(query)
        cands: dict[int, ranking.Candidate] = {}
        term_sets: dict[int, set] = {}
        # Translations (部署 ↔ deploy) find memories written in the other language; they match as
        # phrases of their index tokens and count for coverage as the query word they translate.
        cross = self._translations(query)
        forms = list(dict.fromkeys(form for t in terms for form in cross.get(t, ())))
        translated_tokens = {tok for form in forms for tok in form}
        idf, doc_freq, total = self._idf(terms, extra=[*name_forms(query), *translated_tokens])
        # Terms found in most chunks cost a scan of most postings and barely move bm25: leave them out
        # of MATCH (they still count for coverage), unless nothing else would be left.
        common = max(50, int(float(self.config.get("ranking.match_max_df", 0.2)) * total))
        match_terms = [t for t in terms if doc_freq.get(t, 0) <= common] or sorted(terms, key=lambda t: doc_freq.get(t, 0))[:3]
        # A translation no chunk contains cannot match; a very common one is left out like a common term.
        translated = [" ".join(form) for form in forms if all(0 < doc_freq.get(tok, 0) <= common for tok in form)]
        # lexical candidates
        if terms and "lexical" in channels:
            ns_match = ""
            if namespaces is not None:
                ns_match = "ns : (" + " OR ".join('"ns_' + n + '"' for n in namespaces) + ") AND "
            match = ns_match + "tokens : (" + fts_match(list(dict.fromkeys(match_terms + translated))) + ")"
            lex_rows = self._q(
                f"SELECT c.memory_id, f.bm25, f.tokens FROM (SELECT rowid, bm25(fts, 1.0, 0.0) AS bm25, tokens FROM fts "
                f"WHERE fts MATCH ? ORDER BY bm25 LIMIT ?) f JOIN chunks c ON c.id = f.rowid "
                f"JOIN memories m ON m.id = c.memory_id WHERE {LIVE} AND {ns_sql} AND {where}",
                [match, n_cand * (4 if filtered else 1)] + ns_params + params)
            for memory_id, bm25, tokens in lex_rows:
                cand = cands.get(memory_id)
                if cand is None or bm25 < (cand.bm25 or 0):
                    cands[memory_id] = ranking.Candidate(id=memory_id, bm25=bm25)
                term_sets.setdefault(memory_id, set()).update(tokens.split())
        # vector candidates
        coverage: dict[int, float] = {}   # per memory, filled once: the lexical ones before embedding
        query_vec = None
        vector_error = None
        if not lexical_only and "vector" in channels:
            # A query its best lexical match covers poorly is worded unlike its answer: the case
            # bge's retrieval instruction was trained for.
            evidence = max((coverage.setdefault(memory_id, _coverage(terms, idf, tokens, cross))
                            for memory_id, tokens in term_sets.items()), default=0.0)
            instructed = evidence < float(self.config.get("embedder.query_instruction_below", 0.3))
            try:
                query_vec = self.embedder.embed_query(self._embedded_query(query), instructed=instructed)
            except (EmbeddingUnavailableError, ModelMismatchError) as exc:
                vector_error = str(exc)
                logger.warning("recall without vectors: %s", exc)
        if query_vec is not None and not query_vec.any():  # e.g. a query of punctuation only
            query_vec = None
        if query_vec is not None:
            for memory_id, _cos in self._vector_search(query_vec, namespaces, n_cand, live_chunks=total):
                cands.setdefault(memory_id, ranking.Candidate(id=memory_id))
        if not cands:
            return [], {}, query_vec, vector_error, doc_freq
        ids = list(cands)
        marks = ",".join("?" * len(ids))
        rows = self._q(f"SELECT {', '.join('m.' + c.strip() for c in _MEMORY_COLUMNS.split(','))} FROM memories m "
                       f"WHERE m.id IN ({marks}) AND {LIVE} AND +{ns_sql} AND {where}", ids + ns_params + params)
        records = {r[0]: self._row(r) for r in rows}
        missing_terms = [i for i in records if i not in term_sets]
        if missing_terms:
            m2 = ",".join("?" * len(missing_terms))
            for memory_id, tokens in self._q(f"SELECT c.memory_id, f.tokens FROM chunks c JOIN fts f ON f.rowid = c.id "
                                             f"WHERE c.memory_id IN ({m2})", missing_terms):
                term_sets.setdefault(memory_id, set()).update(tokens.split())
        vectors: dict[int, Any] = {}
        if query_vec is not None:
            import numpy as np

            m3 = ",".join("?" * len(records))
            for memory_id, blob in self._q(f"SELECT c.memory_id, v.embedding FROM chunks c CROSS JOIN vectors v ON "
                                           f"v.chunk_id = c.id WHERE c.memory_id IN ({m3})", list(records)):
                vec = _unblob(blob)
                cos = float(np.dot(vec, query_vec))
                cand = cands[memory_id]
                if cand.cosine is None or cos > cand.cosine:
                    cand.cosine = cos
                    vectors[memory_id] = vec
        final = []
        for memory_id, rec in records.items():
            cand = cands[memory_id]
            tset = term_sets.get(memory_id, set())
            cand.coverage = coverage[memory_id] if memory_id in coverage else _coverage(terms, idf, tset, cross)
            cand.importance = rec["importance"]
            cand.confidence = rec["confidence"]
            cand.pinned = bool(rec["pinned"])
            last = max(rec["updated_at"], rec["last_recalled_at"] or 0)
            cand.age_days = max(0.0, (now - last) / 86400)
            cand.recall_count = rec["recall_count"]
            cand.tokens = estimate_tokens(rec["title"]) + estimate_tokens(rec["summary"]) + 12
            cand.vector = vectors.get(memory_id)
            cand.terms = frozenset(tset)
            cand.text = rec["body"]
            cand.created_at = rec["created_at"]
            final.append(cand)
        return final, records, query_vec, vector_error, doc_freq

    def _default_floor(self) -> float:
        """`ranking.vector_floor`: a number (0 = no floor), or "auto": calibrated per embedder."""
        configured = self.config.get("ranking.vector_floor", "auto")
        if configured != "auto":
            return float(configured)
        provider = getattr(self._embedder, "provider_id", "onnx")
        return {"onnx": 0.6, "hash": 0.35}.get(provider, 0.5)

    def _finish_recall(self, query, namespaces, selected, dropped, n_candidates, started, touch, explain,
                       explain_all, origin, vector_error, records=None) -> dict:
        now = self.clock()
        results = []
        for item in selected:
            rec = records[item.candidate.id]
            out = self._public(rec)
            out["score"] = round(item.score, 6)
            out["attention"] = round(item.attention, 6)
            if explain or explain_all:
                out["features"] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in item.features.items()}
                for key in ("superseded_by", "supersedes"):
                    if key in out["features"]:
                        out["features"][key] = format_id(out["features"][key])
                out["contributions"] = {k: round(v, 4) for k, v in item.contributions.items()}
            results.append(out)
        latency = (time.perf_counter() - started) * 1000
        hit_ids = [item.candidate.id for item in selected]
        if (touch and hit_ids) or self.config.get("search_log.enabled", True):
            try:
                with self._txn():
                    if touch and hit_ids:
                        marks = ",".join("?" * len(hit_ids))
                        self.conn.execute(f"UPDATE memories SET last_recalled_at = ?, recall_count = recall_count + 1 "
                                          f"WHERE id IN ({marks})", [now] + hit_ids)
                    self._log_search(query, namespaces, n_candidates, len(results),
                                     results[0]["score"] if results else None, latency, origin)
            except StorageError as exc:
                logger.warning("could not record recall statistics: %s", exc)
        out = {"query": query, "namespaces": namespaces or [ALL_NAMESPACES], "results": results,
               "candidates": n_candidates, "latency_ms": round(latency, 2),
               "tokens": sum(estimate_tokens(r["title"]) + estimate_tokens(r["summary"]) for r in results)}
        if vector_error:
            out["warning"] = "vector search unavailable: " + vector_error
        if not results and dropped and all(d.gated == dropped[0].gated for d in dropped):
            out["note"] = dropped[0].gated   # the query gate turned every candidate away: say why
        if explain_all:
            out["dropped"] = [{"id": format_id(d.candidate.id),
                               "title": records[d.candidate.id]["title"] if records else "",
                               "reason": d.gated, "score": round(d.score, 4),
                               "features": {k: (round(v, 4) if isinstance(v, float) else v)
                                            for k, v in d.features.items()}} for d in dropped]
        return out

    def _log_search(self, query, namespaces, candidates, hits, top_score, latency, origin) -> None:
        if not self.config.get("search_log.enabled", True):
            return
        from supermemory.redact import redact

        text, _ = redact(query)
        if self.config.get("search_log.hash_queries", False):
            text = "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]
        self.conn.execute("INSERT INTO search_log(at, namespace, query, origin, candidates, hits, top_score, "
                          "latency_ms) VALUES (?,?,?,?,?,?,?,?)",
                          (self.clock(), ",".join(namespaces or [ALL_NAMESPACES]), text, origin, candidates, hits,
                           top_score, latency))
        cap = int(self.config.get("search_log.max_rows", 5000))
        last = self.conn.execute("SELECT max(id) FROM search_log").fetchone()[0] or 0
        self.conn.execute("DELETE FROM search_log WHERE id <= ?", (last - cap,))  # a PK range: cheap

    # --- briefing -----------------------------------------------------------------------------

    def briefing(self, *, query: str | None = None, max_tokens: int | None = None,
                 namespace: str | None = None) -> dict:
        """The session-start hand-off: pinned rules, open tasks, decisions, preferences, gotchas,
        recent changes; never loads the embedding model.
        """
        from supermemory.render import render_briefing

        budget = _int(max_tokens if max_tokens is not None else int(self.config.get("briefing.max_tokens", 900)),
                      "max_tokens", 50, 100_000)
        now = self.clock()
        namespaces = self._read_namespaces(namespace)
        ns_sql, ns_params = self._ns_clause(namespaces)
        alive = f"{LIVE} AND {ns_sql} AND (m.expires_at IS NULL OR m.expires_at > ?)"
        cols = ", ".join("m." + c.strip() for c in _MEMORY_COLUMNS.split(","))

        def fetch(extra: str, order: str, n: int = 20, more: Sequence = ()) -> list[dict]:
            rows = self._q(f"SELECT {cols} FROM memories m WHERE {alive} AND {extra} ORDER BY {order} LIMIT ?",
                           ns_params + [now] + list(more) + [n])
            return [self._public(self._row(r)) for r in rows]

        sections = {
            "pinned": fetch("m.pinned = 1", "m.importance DESC, m.updated_at DESC"),
            "tasks": fetch("m.kind = 'task' AND m.status = 'open' AND m.pinned = 0", "m.importance DESC, m.updated_at DESC"),
            "decisions": fetch("m.kind = 'decision' AND m.pinned = 0", "m.importance DESC, m.updated_at DESC"),
            "preferences": fetch("m.kind = 'preference' AND m.pinned = 0", "m.importance DESC, m.updated_at DESC"),
            "gotchas": fetch("m.kind = 'gotcha' AND m.pinned = 0", "m.importance DESC, m.updated_at DESC"),
        }
        recent_days = float(self.config.get("briefing.recent_days", 14))
        shown = {item["id"] for items in sections.values() for item in items}
        sections["recent"] = [r for r in fetch("m.updated_at >= ? AND m.kind NOT IN ('session')",
                                               "m.updated_at DESC", 20, [now - recent_days * 86400])
                              if r["id"] not in shown][:10]
        sessions = fetch("m.kind = 'session'", "m.updated_at DESC", 2)
        sections["sessions"] = sessions
        relevant = []
        if query:
            found = self.recall(query, namespace=namespace, limit=8, lexical_only=True, touch=False, origin="briefing")
            relevant = [r for r in found["results"] if r["id"] not in shown]
        sections["relevant"] = relevant
        text, used = render_briefing(sections, budget=budget, namespace=",".join(namespaces or ["*"]))
        counts = {name: len(items) for name, items in sections.items()}
        return {"text": text, "tokens": used, "sections": counts,
                "namespaces": namespaces or [ALL_NAMESPACES],
                "items": {name: [i["id"] for i in items] for name, items in sections.items()}}

    # --- session capture ----------------------------------------------------------------------

    def capture_session(self, path: str | None, *, session_id: str | None = None, platform: str | None = None,
                        model: str | None = None, cwd: str | None = None, namespace: str | None = None,
                        deadline: float | None = None) -> dict:
        """Fold new transcript lines into the session's digest and store it as one `session` memory.

        Reads incrementally (a byte offset per transcript, complete lines only); a repeat capture of
        the same session writes a new version of the same memory, never a duplicate, and a capture
        with nothing new writes nothing. Sessions are keyed by platform + session id, so a Claude
        Code and a Codex session that share an id stay apart. Transcript lines are redacted before
        they are parsed (the digest clips long texts, which would otherwise keep half a secret).

        :param platform: 'claude-code' or 'codex' as the caller sees it; the transcript's own lines win.
        :param deadline: a `time.monotonic()` value after which no further chunk is read (the next
            capture continues from there); None reads to the end.
        :returns: {"status": created|updated|unchanged|empty|disabled|"no transcript", "id", "lines", ...}
        """
        from supermemory import transcripts
        from supermemory.redact import redact

        def flag(value) -> bool:
            if isinstance(value, str):
                return value.strip().lower() not in ("0", "false", "no", "off", "")
            return value is None or bool(value)

        def same_file(a, b) -> bool:
            try:
                return a == b or os.path.realpath(a) == os.path.realpath(b)
            except (TypeError, ValueError, OSError):
                return False

        def strings(node, out: list) -> list:
            if isinstance(node, str):
                out.append(node)
            elif isinstance(node, list):
                for item in node:
                    strings(item, out)
            elif isinstance(node, dict):
                for item in node.values():
                    strings(item, out)
            return out

        def redact_lines(objs: list, batch: int = 64) -> list:
            # One redact() call per batch of lines (their strings joined by newlines; no rule
            # matches across a newline, and any change falls back to string-by-string), which is
            # ~40x faster than redacting every string of a multi-megabyte transcript separately.
            out = []
            for start in range(0, len(objs), batch):
                group = objs[start:start + batch]
                texts = ["\n".join(strings(obj, [])) for obj in group]
                joined = "\n".join(texts)
                clean, counts = redact(joined)
                if clean == joined and not counts:
                    out.extend(group)
                    continue
                for obj, text in zip(group, texts):
                    clean, counts = redact(text)
                    out.append(obj if clean == text and not counts else _redact_tree(obj))
            return out

        if not flag(self.config.get("capture.enabled", True)):
            return {"status": "disabled"}
        if not path or not isinstance(path, (str, os.PathLike)):
            return {"status": "no transcript"}
        path = os.path.abspath(os.path.expanduser(os.fspath(path)))
        if not os.path.isfile(path):
            return {"status": "no transcript", "path": path}
        known = ("claude-code", "codex")
        sniffed = transcripts.detect_platform(transcripts.read_new_lines(path, 0, max_bytes=256 * 1024)[0])
        plat = sniffed if sniffed in known else (platform if platform in known else None)
        session = session_id.strip() if isinstance(session_id, str) and session_id.strip() else None
        key_id = f"{plat or 'unknown'}:{session or 'file:' + path}"

        query = "SELECT offset, digest, memory_id, path FROM capture_state WHERE session_key = ?"
        rows = self._q(query, (key_id,))
        legacy_key = None
        if not rows:  # state written before keys carried the platform: adopt it for the same file
            old = session or os.path.basename(path)
            legacy = self._q(query, (old,))
            if legacy and same_file(legacy[0][3], path):
                rows, legacy_key = legacy, old
        offset, digest, memory_id = 0, None, None
        if rows:
            offset, raw, memory_id, old_path = rows[0]
            try:
                digest = transcripts.digest_from_dict(json.loads(raw))
            except (TypeError, ValueError):
                offset, digest = 0, None
            if not same_file(old_path, path):
                offset = 0  # the session moved to another file: read it all; the digest dedupes repeats
        try:
            offset = max(0, int(offset or 0))
            if offset > os.path.getsize(path):
                offset, digest = 0, None  # truncated or rotated: start over
        except (TypeError, ValueError, OSError):
            offset, digest = 0, None

        n_lines, new_offset, drained = 0, offset, False
        step = 4 * 1024 * 1024 if deadline is not None else 16 * 1024 * 1024
        while True:
            more, further = transcripts.read_new_lines(path, new_offset, max_bytes=step)
            if further <= new_offset:
                drained = True
                break
            new_offset = further
            if more:
                n_lines += len(more)
                digest = transcripts.parse(redact_lines(more), digest, platform=plat)
            if deadline is not None and time.monotonic() >= deadline:
                break
        if n_lines == 0 and digest is not None and new_offset == offset:
            return {"status": "unchanged", "id": format_id(memory_id) if memory_id else None, "lines": 0}
        if digest is None:
            digest = transcripts.parse([], None, platform=plat)
        digest = transcripts.digest_from_dict(_redact_tree(transcripts.digest_to_dict(digest)))
        if digest.platform == "unknown" and plat:
            digest.platform = plat
        model = model or digest.model
        title, body = transcripts.render_digest(digest, max_chars=int(self.config.get("capture.max_chars", 6000)))
        if memory_id is None:  # state lost (e.g. the hook was killed between the two writes)
            found = self._q(f"SELECT m.id FROM memories m WHERE m.external_key = ? AND m.kind = 'session' AND {LIVE} "
                            f"ORDER BY m.id DESC LIMIT 1", (key_id,))
            memory_id = found[0][0] if found else None
        if not digest.requests and not digest.files and not digest.commands:
            self._save_capture(key_id, path, new_offset, digest, memory_id, drop_key=legacy_key)
            return {"status": "empty", "id": format_id(memory_id) if memory_id else None, "lines": n_lines}
        source = {"platform": digest.platform, "model": model, "cwd": cwd or digest.cwd, "session": session}
        source = {k: v for k, v in source.items() if v}
        result = None
        if memory_id:
            for _attempt in range(2):  # a concurrent capture may have just written a newer version
                rec = self._fetch(self._head(memory_id))
                if rec is None or rec["deleted_at"] is not None:
                    break
                try:
                    result = self.update(rec["id"], content=body, title=title, source=source, namespace="*")
                    break
                except (InvalidInputError, NotFoundError):
                    if _attempt:
                        raise
        if result is None:
            ns = namespace
            if ns is None and self.namespace == ALL_NAMESPACES:
                from supermemory.config import namespace_for_dir

                ns = namespace_for_dir(cwd or digest.cwd or os.getcwd())
            result = self.remember(body, title=title, kind="session", source=source, namespace=ns,
                                   external_key=key_id, importance=0.4, create_namespace=True)
        memory_id = parse_id(result["id"])
        self._save_capture(key_id, path, new_offset, digest, memory_id, drop_key=legacy_key)
        return {"status": result["status"], "id": format_id(memory_id), "lines": n_lines,
                "platform": digest.platform, "complete": drained}

    def _save_capture(self, key, path, offset, digest, memory_id, *, drop_key: str | None = None) -> None:
        from supermemory import transcripts

        with self._txn():
            if drop_key and drop_key != key:
                self.conn.execute("DELETE FROM capture_state WHERE session_key = ?", (drop_key,))
            self.conn.execute(
                "INSERT INTO capture_state(session_key, path, offset, digest, memory_id, updated_at) "
                "VALUES (?,?,?,?,?,?) ON CONFLICT(session_key) DO UPDATE SET path = excluded.path, "
                "offset = excluded.offset, digest = excluded.digest, memory_id = excluded.memory_id, "
                "updated_at = excluded.updated_at",
                (key, str(path), offset, json.dumps(transcripts.digest_to_dict(digest), ensure_ascii=False),
                 memory_id, self.clock()))

    # --- maintenance --------------------------------------------------------------------------

    def stats(self, *, namespace: str | None = None) -> dict:
        """Counts by kind and namespace, DB size, embedder, search-log figures."""
        namespaces = self._read_namespaces(namespace)
        ns_sql, ns_params = self._ns_clause(namespaces)
        by_kind = dict(self._q(f"SELECT m.kind, count(*) FROM memories m WHERE {LIVE} AND {ns_sql} GROUP BY m.kind",
                               ns_params))
        by_ns = dict(self._q(f"SELECT m.namespace, count(*) FROM memories m WHERE {LIVE} AND {ns_sql} "
                             f"GROUP BY m.namespace", ns_params))
        history = self._q(f"SELECT count(*) FROM memories m WHERE m.superseded_by IS NOT NULL AND {ns_sql}", ns_params)[0][0]
        deleted = self._q(f"SELECT count(*) FROM memories m WHERE m.deleted_at IS NOT NULL AND {ns_sql}", ns_params)[0][0]
        log_sql, log_params = self._ns_clause([",".join(namespaces)] if namespaces else None, "namespace")
        log = self._q(f"SELECT latency_ms, hits FROM search_log WHERE {log_sql}", log_params)
        latencies = sorted(r[0] for r in log)
        empty = [r for r in log if r[1] == 0]
        recent_empty = [r[0] for r in self._q(
            f"SELECT query FROM search_log WHERE hits = 0 AND {log_sql} ORDER BY id DESC LIMIT 10", log_params)]
        size = 0
        if self.path != ":memory:":
            for suffix in ("", "-wal"):
                try:
                    size += os.path.getsize(self.path + suffix)
                except OSError:
                    pass
        return {
            "namespace": namespaces or [ALL_NAMESPACES],
            "memories": sum(by_kind.values()), "by_kind": by_kind, "by_namespace": by_ns,
            "versions_superseded": history, "deleted": deleted, "db_bytes": size, "db_path": self.path,
            "embedder": self.pinned_model(), "driver": self.driver.name,
            "vector_index": "sqlite-vec" if self.driver.vec else "numpy brute force",
            "searches": len(log), "empty_result_rate": round(len(empty) / len(log), 4) if log else 0.0,
            "mean_hits": round(sum(r[1] for r in log) / len(log), 3) if log else 0.0,
            "latency_ms_p50": _percentile(latencies, 50), "latency_ms_p95": _percentile(latencies, 95),
            "recent_empty_queries": recent_empty,
        }

    def sweep(self, *, stale_days: float | None = None, importance_floor: float | None = None,
              apply: bool = False, namespace: str | None = None, sample: int = 20) -> dict:
        """Archive memories that are stale AND unimportant (never pinned); dry run unless `apply`.

        `matched` is exactly what `apply` archives; `sample` lists the stalest first.
        """
        stale_days = _num(stale_days if stale_days is not None else self.config.get("lifecycle.stale_days", 180),
                          "stale_days", 0, 36500)
        floor = _num(importance_floor if importance_floor is not None else
                     self.config.get("lifecycle.importance_floor", 0.3), "importance_floor", 0, 1)
        now = self.clock()
        ns_sql, ns_params = self._ns_clause(self._read_namespaces(namespace))
        where = (f"{LIVE} AND {ns_sql} AND m.pinned = 0 AND m.importance <= ? AND "
                 f"max(m.updated_at, coalesce(m.last_recalled_at, 0)) < ?")
        params = ns_params + [floor, now - stale_days * 86400]

        def select(conn):
            return conn.execute(f"SELECT m.id, m.kind, m.title, max(m.updated_at, coalesce(m.last_recalled_at, 0)) "
                                f"AS used FROM memories m WHERE {where} ORDER BY used, m.id", params).fetchall()

        if not apply:
            rows = select(self.conn)
        else:
            with self._txn():
                rows = select(self.conn)
                for memory_id, *_ in rows:
                    self._unindex(memory_id)
                    self.conn.execute("UPDATE memories SET deleted_at = ?, delete_reason = 'archived' WHERE id = ?",
                                      (now, memory_id))
        return {"matched": len(rows), "applied": bool(apply), "stale_days": stale_days, "importance_floor": floor,
                "sample": [{"id": format_id(r[0]), "kind": r[1], "title": r[2], "last_used": iso(r[3])}
                           for r in rows[:sample]],
                "truncated": len(rows) > sample}

    def redact_stored(self, *, dry_run: bool = False) -> dict:
        """Re-redact every stored copy of every memory with the current rules, in place.

        The one sanctioned overwrite: bodies, titles, summaries (old versions and deleted rows
        too), chunks, live FTS rows, vectors (re-embedded, or dropped until `reindex` when no
        embedder can run), search log and capture state, in one write transaction with freed
        space zeroed, then VACUUM so no free page keeps the old bytes. Each rewritten row gets
        a redaction in `history`. Idempotent: a second pass finds nothing.

        :param dry_run: count what would change, write nothing.
        :returns: counts per table, `types` (secrets by type), `ids` (memory rows rewritten), `rows`.
        Raises:
            StorageError: the database is busy or read-only.
        """
        from supermemory import reredact

        return reredact.redact_stored(self, dry_run=dry_run)

    def maintenance(self, *, sweep: bool = False, redact: bool | None = None) -> dict:
        """Expire TTLs, purge old soft-deletes, trim the search log, optimise FTS, checkpoint WAL,
        and re-redact stored text (`redact_stored`) once after the redaction rules changed.

        :param redact: True re-redacts now, False never; None (default) when the rules changed
            since the last pass and `store.redact_secrets` is on.
        """
        from supermemory import reredact

        now = self.clock()
        retention = float(self.config.get("lifecycle.purge_after_days", 30)) * 86400
        with self._txn():
            expired = [r[0] for r in self.conn.execute(
                f"SELECT m.id FROM memories m WHERE {LIVE} AND m.expires_at IS NOT NULL AND m.expires_at <= ?", (now,))]
            for memory_id in expired:
                self._unindex(memory_id)
                self.conn.execute("UPDATE memories SET deleted_at = ?, delete_reason = 'expired' WHERE id = ?",
                                  (now, memory_id))
        old = [r[0] for r in self._q("SELECT id FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? "
                                     "AND coalesce(delete_reason, 'forget') IN ('forget', 'expired')",
                                     (now - retention,))]
        if old:
            self.forget(old, hard=True, namespace="*")
        pruned = self._prune_session_versions(keep=int(self.config.get("lifecycle.session_versions_kept", 2)))
        cap = int(self.config.get("search_log.max_rows", 5000))
        with self._txn():
            last = self.conn.execute("SELECT max(id) FROM search_log").fetchone()[0] or 0
            trimmed = self.conn.execute("DELETE FROM search_log WHERE id <= ?", (last - cap,)).rowcount
            self.conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        redacted = 0
        enabled = bool(self.config.get("store.redact_secrets", True))
        if redact or (redact is None and enabled and reredact.is_stale(self)):
            redacted = self.redact_stored()["rows"]
        elif redact is None and not enabled and not reredact.is_stale(self):
            with self._txn():   # text written from now on is not redacted: re-check it once re-enabled
                self.conn.execute("DELETE FROM meta WHERE key = ?", (reredact.STAMP_KEY,))
        swept = self.sweep(apply=True, namespace="*")["matched"] if sweep else 0
        if self.path != ":memory:":
            with contextlib.suppress(self.driver.Error):
                self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        return {"expired": len(expired), "purged": len(old), "log_trimmed": max(0, trimmed), "swept": swept,
                "session_versions_pruned": pruned, "redacted": redacted}

    def _prune_session_versions(self, *, keep: int) -> int:
        """Session memories get a new version at every capture (Codex: every turn); keep only the
        newest `keep` superseded versions of each session chain."""
        with self._txn():
            doomed = [r[0] for r in self.conn.execute(
                "SELECT m.id FROM memories m WHERE m.kind = 'session' AND m.superseded_by IS NOT NULL AND "
                "(SELECT count(*) FROM memories n WHERE coalesce(n.root_id, n.id) = coalesce(m.root_id, m.id) "
                "AND n.superseded_by IS NOT NULL AND n.id > m.id) >= ?", (keep,))]
            for row_id in doomed:
                self.conn.execute("DELETE FROM links WHERE src = ? OR dst = ?", (row_id, row_id))
                self.conn.execute("DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE memory_id = ?)",
                                  (row_id,))
                self.conn.execute("DELETE FROM chunks WHERE memory_id = ?", (row_id,))
                self.conn.execute("DELETE FROM memories WHERE id = ?", (row_id,))
        return len(doomed)

    # --- health, graph, merge, index -----------------------------------------------------------

    def health(self, *, namespace: str | None = None, duplicate_similarity: float = 0.9, max_pairs: int = 50) -> dict:
        """Near-duplicate pairs, contradictions, orphans, stale/expired counts, schema and model pin."""
        import numpy as np

        now = self.clock()
        namespaces = self._read_namespaces(namespace)
        ns_sql, ns_params = self._ns_clause(namespaces)
        rows = self._q(f"SELECT m.id, v.embedding, m.importance, m.recall_count, m.updated_at, m.title FROM memories m "
                       f"JOIN chunks c ON c.memory_id = m.id AND c.seq = 0 JOIN vectors v ON v.chunk_id = c.id "
                       f"WHERE {LIVE} AND {ns_sql} ORDER BY m.id", ns_params)
        pairs = []
        if len(rows) > 1:
            matrix = np.vstack([_unblob(r[1]) for r in rows])
            for start in range(0, len(rows), 1024):
                block = matrix[start:start + 1024] @ matrix.T
                for i, j in zip(*np.nonzero(block >= duplicate_similarity)):
                    a, b = start + int(i), int(j)
                    if b <= a:
                        continue
                    ra, rb = rows[a], rows[b]
                    keep, other = (ra, rb) if (ra[2], ra[3], ra[4]) >= (rb[2], rb[3], rb[4]) else (rb, ra)
                    pairs.append({"a": format_id(ra[0]), "b": format_id(rb[0]), "similarity": round(float(block[i, j]), 4),
                                  "canonical": format_id(keep[0]), "merge": f"supermemory merge {format_id(keep[0])} "
                                                                            f"{format_id(other[0])}",
                                  "titles": [ra[5], rb[5]]})
            pairs.sort(key=lambda p: -p["similarity"])
        contradictions = [{"src": format_id(a), "dst": format_id(b), "titles": [ta, tb]} for a, b, ta, tb in self._q(
            f"SELECT l.src, l.dst, m.title, n.title FROM links l JOIN memories m ON m.id = l.src "
            f"JOIN memories n ON n.id = l.dst WHERE l.relation = 'contradicts' AND {LIVE} "
            f"AND n.superseded_by IS NULL AND n.deleted_at IS NULL AND {ns_sql}", ns_params)]
        orphans = {
            "chunks_without_memory": self._q("SELECT count(*) FROM chunks c LEFT JOIN memories m ON m.id = c.memory_id "
                                             "WHERE m.id IS NULL")[0][0],
            "fts_without_live_chunk": self._q(f"SELECT count(*) FROM fts f LEFT JOIN chunks c ON c.id = f.rowid "
                                              f"LEFT JOIN memories m ON m.id = c.memory_id WHERE m.id IS NULL OR NOT ({LIVE})")[0][0],
            "live_chunks_without_fts": self._q(f"SELECT count(*) FROM chunks c JOIN memories m ON m.id = c.memory_id "
                                               f"WHERE {LIVE} AND c.id NOT IN (SELECT rowid FROM fts)")[0][0],
            "live_chunks_without_vector": self._q(f"SELECT count(*) FROM chunks c JOIN memories m ON m.id = c.memory_id "
                                                  f"LEFT JOIN vectors v ON v.chunk_id = c.id WHERE {LIVE} AND v.chunk_id IS NULL")[0][0],
        }
        stale = self.sweep(namespace=namespace, sample=0)["matched"]
        expired = self._q(f"SELECT count(*) FROM memories m WHERE {LIVE} AND {ns_sql} AND m.expires_at IS NOT NULL "
                          f"AND m.expires_at <= ?", ns_params + [now])[0][0]
        pin = self.pinned_model()
        pin_status = "not pinned yet"
        if pin is not None:
            try:
                from supermemory.embed import get_provider

                configured = (self._embedder or get_provider(self.config)).fingerprint()
                pin_status = "ok" if configured == pin else "mismatch: run `supermemory reindex`"
            except SupermemoryError as exc:
                pin_status = f"configured embedder unavailable: {exc}"
        problems = len(pairs) + len(contradictions) + sum(orphans.values())
        return {"near_duplicates": pairs[:max_pairs], "near_duplicate_pairs": len(pairs),
                "contradictions": contradictions, "orphans": orphans, "stale": stale, "expired": expired,
                "schema_version": dbm.schema_version(self.conn), "model_pin": pin, "model_pin_status": pin_status,
                "clean": problems == 0}

    def graph(self, *, id: Any = None, depth: int = 2, namespace: str | None = None, limit: int = 500) -> dict:
        """Nodes and typed edges: the neighbourhood of `id` up to `depth` hops, or all live links."""
        depth = _int(depth, "depth", 0, 10)
        namespaces = self._read_namespaces(namespace)
        edges: dict[tuple, dict] = {}
        if id is None:
            ns_sql, ns_params = self._ns_clause(namespaces)
            for src, dst, rel, w in self._q(f"SELECT l.src, l.dst, l.relation, l.weight FROM links l JOIN memories m "
                                            f"ON m.id = l.src WHERE {LIVE} AND {ns_sql} LIMIT ?", ns_params + [limit]):
                edges[(src, dst, rel)] = {"src": src, "dst": dst, "relation": rel, "weight": w}
            node_ids = {e["src"] for e in edges.values()} | {e["dst"] for e in edges.values()}
        else:
            start = self._live(parse_id(id), namespaces)["id"]
            node_ids, frontier = {start}, {start}
            for _ in range(depth):
                nxt = set()
                for node in frontier:
                    for src, dst, rel, w in self._q("SELECT src, dst, relation, weight FROM links WHERE src = ? OR dst = ?",
                                                    (node, node)):
                        edges[(src, dst, rel)] = {"src": src, "dst": dst, "relation": rel, "weight": w}
                        nxt.update((src, dst))
                frontier = nxt - node_ids
                node_ids |= nxt
                if len(node_ids) > limit:
                    break
        nodes = []
        for node in sorted(node_ids):
            rec = self._fetch(node)
            if rec is None or (namespaces is not None and rec["namespace"] not in namespaces):
                continue
            nodes.append({"id": format_id(node), "kind": rec["kind"], "title": rec["title"],
                          "live": rec["superseded_by"] is None and rec["deleted_at"] is None})
        shown = {n["id"] for n in nodes}
        out_edges = [{"src": format_id(e["src"]), "dst": format_id(e["dst"]), "relation": e["relation"],
                      "weight": e["weight"]} for e in edges.values()
                     if format_id(e["src"]) in shown and format_id(e["dst"]) in shown]
        return {"nodes": nodes, "edges": out_edges}

    def merge(self, keep: Any, other: Any, *, content: str | None = None, namespace: str | None = None) -> dict:
        """Close OTHER into KEEP: KEEP gets a new version (tags unioned, links moved, optional new text);
        OTHER is superseded by it, so both bodies stay in history. Never automatic.

        Raises:
            InvalidInputError: same id twice. NotFoundError: unknown ids.
        """
        namespaces = self._read_namespaces(namespace)
        a = self._live(parse_id(keep), namespaces)
        b = self._live(parse_id(other), namespaces)
        if a["id"] == b["id"]:
            raise InvalidInputError("cannot merge a memory into itself")
        tags = json.loads(a["tags"]) + [t for t in json.loads(b["tags"]) if t not in json.loads(a["tags"])]
        result = self.update(a["id"], content=content, tags=tags, importance=max(a["importance"], b["importance"]),
                             pinned=bool(a["pinned"] or b["pinned"]), namespace="*", force=True)
        new_id = parse_id(result["id"])
        now = self.clock()
        with self._txn():
            self._unindex(b["id"])
            self.conn.execute("UPDATE memories SET superseded_by = ?, valid_to = ? WHERE id = ?", (new_id, now, b["id"]))
            self.conn.execute("UPDATE OR IGNORE links SET src = ? WHERE src = ?", (new_id, b["id"]))
            self.conn.execute("UPDATE OR IGNORE links SET dst = ? WHERE dst = ?", (new_id, b["id"]))
            self.conn.execute("DELETE FROM links WHERE src = dst")
            self.conn.execute("DELETE FROM links WHERE src = ? OR dst = ?", (b["id"], b["id"]))
            self.conn.execute("INSERT OR IGNORE INTO links(src, dst, relation, weight, created_at) VALUES (?,?,?,?,?)",
                              (new_id, b["id"], "supersedes", 1.0, now))
        return {"id": format_id(new_id), "kept": format_id(a["id"]), "merged": format_id(b["id"])}

    def index(self, *, max_lines: int = 200, namespace: str | None = None) -> dict:
        """A MEMORY.md-style index: one line per memory, pinned and preference/gotcha first."""
        max_lines = _int(max_lines, "max_lines", 1, 100_000)
        now = self.clock()
        ns_sql, ns_params = self._ns_clause(self._read_namespaces(namespace))
        cols = ", ".join("m." + c.strip() for c in _MEMORY_COLUMNS.split(","))
        rows = self._q(f"SELECT {cols} FROM memories m WHERE {LIVE} AND {ns_sql} AND "
                       f"(m.expires_at IS NULL OR m.expires_at > ?) AND m.kind != 'session' ORDER BY m.pinned DESC, "
                       f"CASE m.kind WHEN 'preference' THEN 0 WHEN 'gotcha' THEN 0 ELSE 1 END, m.importance DESC, "
                       f"m.updated_at DESC", ns_params + [now])
        from supermemory.render import memory_line

        items = [self._public(self._row(r), body=False) for r in rows]
        lines = [memory_line(i, max_chars=160) for i in items[:max_lines]]
        more = max(0, len(items) - max_lines)
        if more:
            lines.append(f"…and {more} more — use memory_recall / `supermemory recall`")
        return {"text": "\n".join(lines) + "\n", "lines": len(lines), "total": len(items), "more": more}

    # --- export / import ------------------------------------------------------------------------

    _EXPORT_FIELDS = ("id", "namespace", "kind", "title", "body", "tags", "source", "importance", "confidence",
                      "pinned", "status", "ttl_days", "expires_at", "created_at", "updated_at", "last_recalled_at",
                      "recall_count", "valid_from", "valid_to", "deleted_at", "delete_reason", "external_key",
                      "superseded_by", "root_id")
    _TIME_FIELDS = ("expires_at", "created_at", "updated_at", "last_recalled_at", "valid_from", "valid_to",
                    "deleted_at")

    def _export_record(self, rec: dict) -> dict:
        out = {}
        for key in self._EXPORT_FIELDS:
            value = rec[key]
            if key in self._TIME_FIELDS:
                value = iso(value)
            elif key in ("tags", "source"):
                value = json.loads(value or ("[]" if key == "tags" else "{}"))
            elif key in ("id", "superseded_by", "root_id"):
                value = format_id(value) if value else None
            elif key == "pinned":
                value = bool(value)
            out[key] = value
        return out

    def export(self, path: str | os.PathLike, *, namespaces: Sequence[str] | None = None) -> dict:
        """Write JSONL: one memory chain per line (head + history + links), no vectors.

        :param namespaces: only these namespaces (default: all).
        """
        ns_list = [normalize_namespace(n) for n in namespaces] if namespaces else None
        ns_sql, ns_params = self._ns_clause(ns_list)
        heads = self._q(f"SELECT {', '.join('m.' + c.strip() for c in _MEMORY_COLUMNS.split(','))} FROM memories m "
                        f"WHERE m.superseded_by IS NULL AND {ns_sql} ORDER BY m.id", ns_params)
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".part")
        count = 0
        with open(tmp, "w", encoding="utf-8") as handle:
            for row in heads:
                rec = self._row(row)
                line = self._export_record(rec)
                root = rec["root_id"] or rec["id"]
                older = self._q(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE (id = ? OR root_id = ?) AND id != ? "
                                f"ORDER BY valid_from, id", (root, root, rec["id"]))
                line["history"] = [self._export_record(self._row(r)) for r in older]
                line["links"] = [{"dst": format_id(d), "relation": r, "weight": w, "created_at": iso(c)}
                                 for d, r, w, c in self._q("SELECT dst, relation, weight, created_at FROM links "
                                                           "WHERE src = ? ORDER BY dst, relation", (rec["id"],))]
                handle.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
                count += 1
        os.replace(tmp, target)
        with contextlib.suppress(OSError):
            os.chmod(target, 0o600)
        return {"path": str(target), "memories": count}

    def import_file(self, path: str | os.PathLike, *, progress: Callable[[int, int], None] | None = None) -> dict:
        """Import a JSONL export: ids and timestamps preserved, existing ids skipped, re-embedded.

        Raises:
            InvalidInputError: a line is not a valid export record (nothing is written then).
        """
        from supermemory.bench import read_jsonl

        lines = read_jsonl(path)
        todo, skipped = [], 0
        for number, line in enumerate(lines, 1):
            if not isinstance(line, dict) or "id" not in line or "body" not in line:
                raise InvalidInputError(f"{path}:{number}: not a supermemory export record")
            versions = list(line.get("history") or []) + [line]
            if any(self._fetch(parse_id(v["id"])) is not None for v in versions):
                skipped += 1
                continue
            todo.append((line, versions))
        texts, slots = [], []
        for line, versions in todo:
            for version in versions:
                pieces = self._chunk(version["body"])
                slots.append((version["id"], pieces))
                texts.extend(_embed_text(version.get("title", ""), p) for p in pieces)
        try:
            matrix = self.embedder.embed_multi(texts, progress=progress) if texts else None
        except EmbeddingUnavailableError as exc:
            logger.warning("importing without vectors: %s", exc)
            matrix = None
        vec_of, offset = {}, 0
        for vid, pieces in slots:
            vec_of[vid] = (pieces, matrix[offset:offset + len(pieces)] if matrix is not None else None)
            offset += len(pieces)
        with self._txn():
            if todo:   # exported text is stored as it was: the next maintenance re-redacts it
                from supermemory.reredact import STAMP_KEY

                self.conn.execute("DELETE FROM meta WHERE key = ?", (STAMP_KEY,))
            for line, versions in todo:
                for version in versions:
                    pieces, vectors = vec_of[version["id"]]
                    self._insert_exported(version, pieces, vectors)
                head = parse_id(line["id"])
                rec = self._fetch(head)
                if rec["deleted_at"] is None:
                    self._index_live(head)
            for line, _ in todo:
                for link in line.get("links") or []:
                    dst = parse_id(link["dst"])
                    if self._fetch(dst) is not None:
                        self.conn.execute("INSERT OR IGNORE INTO links(src, dst, relation, weight, created_at) "
                                          "VALUES (?,?,?,?,?)", (parse_id(line["id"]), dst, link["relation"],
                                                                 link.get("weight", 1.0),
                                                                 from_iso(link.get("created_at")) or self.clock()))
        return {"imported": len(todo), "skipped": skipped, "lines": len(lines)}

    def _insert_exported(self, v: dict, pieces: list[str], vectors) -> None:
        kind = _kind(v.get("kind", "note"))
        memory_id = self._insert(
            namespace=normalize_namespace(v["namespace"]), kind=kind, title=v.get("title", ""), body=v["body"],
            tags=list(v.get("tags") or []), source=dict(v.get("source") or {}),
            importance=float(v.get("importance", 0.5)), confidence=float(v.get("confidence", 1.0)),
            pinned=bool(v.get("pinned")), status=v.get("status"), ttl_days=v.get("ttl_days"),
            now=from_iso(v.get("updated_at")) or self.clock(),
            root_id=parse_id(v["root_id"]) if v.get("root_id") else None, external_key=v.get("external_key"),
            created_at=from_iso(v.get("created_at")), content_hash=_hash(kind, v.get("title", ""), v["body"]),
            pieces=pieces, vectors=vectors,
            extra={"id": parse_id(v["id"]), "expires_at": from_iso(v.get("expires_at")),
                   "updated_at": from_iso(v.get("updated_at")), "last_recalled_at": from_iso(v.get("last_recalled_at")),
                   "recall_count": int(v.get("recall_count") or 0), "valid_from": from_iso(v.get("valid_from"))})
        self.conn.execute("UPDATE memories SET superseded_by = ?, valid_to = ?, deleted_at = ?, delete_reason = ? "
                          "WHERE id = ?", (parse_id(v["superseded_by"]) if v.get("superseded_by") else None,
                                           from_iso(v.get("valid_to")), from_iso(v.get("deleted_at")),
                                           v.get("delete_reason"), memory_id))

    def reindex(self, *, progress: Callable[[int, int], None] | None = None) -> dict:
        """Re-embed every chunk with the configured embedder and re-pin the DB, in one transaction.

        Raises:
            EmbeddingUnavailableError: the configured embedder cannot run.
        """
        from supermemory.embed import get_provider

        embedder = self._embedder or get_provider(self.config)
        rows = self._q("SELECT c.id, m.title, c.text FROM chunks c JOIN memories m ON m.id = c.memory_id ORDER BY c.id")
        texts = [_embed_text(title, text) for _, title, text in rows]
        vectors = embedder.embed_multi(texts, progress=progress)
        fingerprint = embedder.fingerprint()
        with self._txn():
            self.conn.execute("DELETE FROM vectors")
            for (chunk_id, _, _), vector in zip(rows, vectors):
                self.conn.execute("INSERT INTO vectors(chunk_id, embedding) VALUES (?, ?)", (chunk_id, _blob(vector)))
            if dbm.vec_table_exists(self.conn):
                if not self.driver.vec:
                    raise StorageError("this SQLite driver cannot load sqlite-vec, so it cannot rebuild the "
                                       "vector index; run reindex where sqlean.py is installed")
                self.conn.execute("DROP TABLE vec_mem")
            if self.driver.vec:
                dbm.create_vec_table(self.conn, fingerprint["dimensions"])
                self._fill_vec_index()
            dbm.set_meta(self.conn, "embedder", json.dumps(fingerprint, sort_keys=True))
        self._embedder = embedder
        self._embedder_checked = True
        self._matrix_cache.clear()
        return {"chunks": len(rows), "embedder": fingerprint}


def _redact_tree(node: Any) -> Any:
    """Redact every string inside a JSON-like tree (session digests are persisted too)."""
    from supermemory.redact import redact

    if isinstance(node, str):
        return redact(node)[0]
    if isinstance(node, list):
        return [_redact_tree(v) for v in node]
    if isinstance(node, dict):
        return {k: _redact_tree(v) for k, v in node.items()}
    return node


def _percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile of sorted values (None when empty)."""
    if not values:
        return None
    rank = max(1, math.ceil(pct / 100 * len(values)))
    return round(float(values[rank - 1]), 3)
