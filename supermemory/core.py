"""`MemoryStore`, the public API: wiring and delegation only, each method naming the function that does it.

The work is in `store/`, `retrieval/`, `briefing.py` and `capture.py`.

Data flows down and back once: a shell (CLI, MCP, hooks) calls one method here; the method calls
one function with the store's `StoreContext`; that function reads and writes through `store/`
(the only code that executes SQL) and returns plain data, which the shell renders.
"""
from __future__ import annotations

import functools
import logging
import os
import time
from typing import Callable

from supermemory import backfill as backfill_
from supermemory import briefing as briefing_
from supermemory import capture
from supermemory import rules as rules_
from supermemory.config import Config
from supermemory.errors import StorageError
from supermemory.retrieval import pipeline
from supermemory.retrieval.ranking import RankConfig
from supermemory.store import db as dbm
from supermemory.store import embedding, lifecycle, portability, reads, redaction, search_index, versions, windows, writes
from supermemory.store import namespaces as nsm
from supermemory.store.context import StoreContext
from supermemory.store.records import format_id, parse_id  # noqa: F401 - the id helpers are part of the API
from supermemory.text import TOKENIZER_VERSION

logger = logging.getLogger(__name__)


def _delegate(fn: Callable) -> Callable:
    """A method that calls `fn(self.context, ...)`, with fn's name, docstring and keywords."""
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        return fn(self.context, *args, **kwargs)
    return method


class MemoryStore:
    """One SQLite file of memories: remember, recall, revise, forget, brief, export.

    :param path: database file (default `config.db_path`); `":memory:"` for tests.
    :param config: resolved settings (default: with no `path`, `load_config()`: the CLI's data dir,
        `SUPERMEMORY_HOME` else ~/.supermemory, and its config file; with a `path`, built-in defaults
        under the file's folder).
    :param embedder: an `EmbeddingProvider`; None resolves the configured one lazily.
    :param namespace: default namespace (default `config.default_namespace()`).
    :param driver: force a SQLite driver ('sqlite3', 'sqlean', 'pysqlite3').
    :param vectors: 'auto' (sqlite-vec when loadable) or 'numpy' (brute force).
    :param cache_vectors: long-lived processes (the MCP server) keep the live vectors in RAM and
        search them with numpy (~10 ms at 100k instead of ~100 ms for a full vec0 scan); reloaded
        when another connection commits. Capped by `recall.ram_vector_limit` chunks.
    :param rebuild_index: re-tokenize the search index on open when the tokenizer changed (hooks
        and the MCP server pass False: they must answer fast; the old tokens still work meanwhile).
    Raises:
        StorageError, MigrationError: the file cannot be opened or upgraded.
        ConfigError: no `path` nor `config` was given and the config file has problems (as in the CLI).
    """

    def __init__(self, path: str | os.PathLike | None = None, *, config: Config | None = None,
                 embedder=None, namespace: str | None = None, driver: str | None = None,
                 vectors: str = "auto", clock: Callable[[], float] = time.time, cache_vectors: bool = False,
                 rebuild_index: bool = True):
        self.context = StoreContext(path, config=config, namespace=namespace, driver=driver, vectors=vectors,
                                    clock=clock, cache_vectors=cache_vectors, embedder=embedder)
        ctx = self.context
        if "m001_initial" in dbm.migrate(ctx.conn, ctx.driver):   # a new store: indexed by this tokenizer
            with ctx.txn():
                search_index.stamp_tokenizer(ctx)
                lifecycle.stamp_new_store(ctx)   # and redacted, summarised and linked by these rules
        if rebuild_index and self.index_stale:
            try:
                self.rebuild_search_index()
            except (StorageError, ctx.driver.Error) as exc:   # e.g. locked: old tokens still work
                logger.warning("search index not rebuilt for tokenizer v%s (will retry): %s", TOKENIZER_VERSION, exc)

    # --- the open store -----------------------------------------------------------------------------

    config = property(lambda self: self.context.config, doc="Resolved settings.")
    path = property(lambda self: self.context.path, doc="The database file.")
    conn = property(lambda self: self.context.conn, doc="The SQLite connection (autocommit; writes use txn()).")
    driver = property(lambda self: self.context.driver, doc="The SQLite driver in use.")
    clock = property(lambda self: self.context.clock, doc="The time source (seconds since the epoch).")
    embedder_warning = property(lambda self: self.context.embedder_warning,
                                doc="Why the `hash` fallback embedder is in use, if it is.")
    index_stale = property(lambda self: search_index.is_stale(self.context),
                           doc="True while the search index was made by an older tokenizer.")

    @property
    def namespace(self) -> str:
        """The default namespace (reads add `global`; '*' reads all)."""
        return self.context.namespace

    @namespace.setter
    def namespace(self, value: str) -> None:
        self.context.namespace = value

    @property
    def embedder(self):
        """The embedding provider, resolved and checked against the DB pin on first use.

        Raises:
            ModelMismatchError: the DB is pinned to a different model.
            EmbeddingUnavailableError: no provider can run.
        """
        return embedding.embedder(self.context)

    def defer_windows(self) -> None:
        """From now on `remember` and `update` leave the sentence windows of what they store to `close()`, so the
        CLI prints the id the moment the memory is stored (fresh-user run fu35 D4: a kill between the commit and
        the id left a memory its caller never heard of; a kill now leaves only windows, which the filling-in makes)."""
        if self.context.windows_owed is None:
            self.context.windows_owed = []

    def close(self) -> None:
        """Embed the windows deferred writes owe (`defer_windows`), then close the connection (idempotent)."""
        owed, self.context.windows_owed = self.context.windows_owed, None
        try:
            if owed and self.context.conn is not None:
                windows.after_write(self.context, owed)
        finally:
            self.context.close()

    def __enter__(self) -> "MemoryStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    pinned_model = _delegate(embedding.pinned_model)
    pin_check = _delegate(embedding.pin_check)
    namespaces = _delegate(nsm.existing)
    rebuild_search_index = _delegate(search_index.rebuild_search_index)

    # --- writes (store/writes.py, store/versions.py) --------------------------------------------------

    remember = _delegate(writes.remember)
    remember_many = _delegate(writes.remember_many)
    update = _delegate(versions.update)
    merge = _delegate(versions.merge)
    forget = _delegate(versions.forget)
    restore = _delegate(versions.restore)
    link = _delegate(versions.link)
    unlink = _delegate(versions.unlink)
    history = _delegate(versions.history)

    # --- reads (store/reads.py) -----------------------------------------------------------------------

    get = _delegate(reads.get)
    list = _delegate(reads.list_memories)
    graph = _delegate(reads.graph)

    # --- recall (retrieval/) ----------------------------------------------------------------------------

    recall = _delegate(pipeline.recall)
    candidates = _delegate(pipeline.candidates)

    def rank_config(self, query: str, **kwargs) -> RankConfig:
        """The ranker settings for one query: config file values plus per-call overrides
        (`min_similarity`, `relative_cutoff`, `has_vectors`, `doc_freq`, `gates`)."""
        return pipeline.rank_config(self.context, pipeline.analyse(self.context, query), **kwargs)

    def query_context(self, query: str, doc_freq: dict | None = None) -> dict:
        """Per-query ranker inputs: the CJK share, its words when it names nothing specific, and its
        names when no memory mentions any of them."""
        return pipeline.query_context(self.context, pipeline.analyse(self.context, query), doc_freq)

    # --- what an agent reads without asking, and session capture -----------------------------------------

    briefing = _delegate(briefing_.briefing)
    memory_index = _delegate(briefing_.memory_index)
    capture_session = _delegate(capture.capture_session)
    backfill = _delegate(backfill_.backfill)
    backfill_plan = _delegate(backfill_.plan)
    import_rules = _delegate(rules_.import_rules)

    # --- over time (store/lifecycle.py, store/redaction.py) -----------------------------------------------

    stats = _delegate(lifecycle.stats)
    sweep = _delegate(lifecycle.sweep)
    health = _delegate(lifecycle.health)
    growth = _delegate(lifecycle.growth)
    redact_stored = _delegate(redaction.redact_stored)
    fill_vectors = _delegate(lifecycle.fill_vectors)
    catch_up_vectors = _delegate(embedding.catch_up)

    def maintenance(self, *, sweep: bool = False, redact: bool | None = None, deadline: float | None = None,
                    progress: Callable[[int, int], None] | None = None) -> dict:
        """Expire TTLs, purge old soft-deletes, trim the search log, optimise FTS, checkpoint WAL,
        re-redact stored text (`redact_stored`) once after the redaction rules changed, and embed the
        chunks still without a vector (`fill_vectors`; `progress(done, total)` while it does).

        :param sweep: also archive stale, unimportant memories (`sweep(apply=True)`).
        :param redact: True re-redacts now, False never; None (default) when the rules changed
            since the last pass and `store.redact_secrets` is on.
        :param deadline: `time.monotonic()` value by which the once-per-store links pass and the filling-in of
            vectors pause (a hook's budget).

        It also captures the sessions hooks left owed under a write lock (`retry_captures`), so a user without the
        MCP server gets them at the next `supermemory maintenance` or session end.
        """
        out = lifecycle.maintenance(self.context, sweep_stale=sweep, redact=redact, deadline=deadline,
                                    progress=progress)
        out["sessions_captured"] = sum(1 for r in self.retry_captures(deadline=deadline) if r.get("status") != "failed")
        return out

    def retry_captures(self, *, deadline: float | None = None, limit: int | None = None) -> list[dict]:
        """Capture the sessions whose hooks could not (`capture.retry_pending`), oldest first, each once."""
        return capture.retry_pending(self.context, self.config.home, min_age=capture.pending_min_age(self.config),
                                     deadline=deadline, limit=limit)

    # --- moving a store (store/portability.py) --------------------------------------------------------

    export = _delegate(portability.export)
    import_file = _delegate(portability.import_file)
    reembed = _delegate(portability.reembed)
