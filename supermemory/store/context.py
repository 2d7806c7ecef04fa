"""One open store: the connection and what every store module shares (settings, clock, caches)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from supermemory.config import Config, data_dir, load_config, normalize_namespace
from supermemory.errors import StorageError
from supermemory.store import db as dbm
from supermemory.store.records import SELECT_COLUMNS, record


class StoreContext:
    """The state behind a `MemoryStore`: connection, driver, settings, clock, default namespace,
    the embedder (resolved lazily by `store.embedding`) and the search caches.

    :param path: database file, or ":memory:"; None: the CLI's (`config.db_path`).
    :param config: None: with no path, `load_config()`, so the data dir (`SUPERMEMORY_HOME`, else
        ~/.supermemory) and the config file are the CLI's; with a path, built-in defaults under its folder.
    :param cache_vectors: keep the live vectors in RAM (long-lived processes).
    """

    def __init__(self, path: str | os.PathLike | None, *, config: Config | None, namespace: str | None,
                 driver: str | None, vectors: str, clock: Callable[[], float], cache_vectors: bool, embedder=None):
        if config is None:
            config = (load_config() if path is None else
                      Config(home=data_dir() if str(path) == ":memory:" else Path(path).parent))
        self.config = config
        self.path = str(path) if path is not None else str(config.db_path)
        self.driver = dbm.choose_driver(driver, vectors=vectors)
        self.readonly = dbm.opens_read_only(self.path)   # reads work, writes say which chmod they need
        self.conn = dbm.connect(self.path, self.driver, readonly=self.readonly)
        self.clock = clock
        self.namespace = normalize_namespace(namespace or config.default_namespace(), allow_all=True)
        self.embedder = embedder              # None: resolved on first use
        self.embedder_checked = False
        self.embedder_warning: str | None = None
        self.cache_vectors = cache_vectors
        self.matrix_cache: dict = {}          # namespaces → (data_version, ids, matrix, rows per memory id)
        self.vectors_pending: bool | None = None   # live chunks wait for a vector (None: not looked yet)
        self.vectors_looked_at: int | None = None  # data_version when it last found none waiting
        self.fill_after: int | None = None   # chunk id the filling-in goes on after (`embedding._waiting_from`)
        self.generation = 0                   # our own commits do not change PRAGMA data_version
        self.total_cache: tuple | None = None  # ((data_version, generation), live chunks per namespace)
        self.scoped_freq: tuple | None = None  # ((data_version, generation), {(namespaces, token): live chunks})
        self.windows_cache: tuple | None = None  # ((data_version, generation), windows._stacked(…) or None)
        self.windows_owed: list[int] | None = None   # a list: interactive writes leave their windows to close()

    def txn(self, *, wait_ms: int | None = None):
        """A `BEGIN IMMEDIATE` write transaction (`wait_ms`: how long another writer's lock may hold it up)."""
        return dbm.write_txn(self.conn, self.driver, wait_ms=wait_ms)

    def data_version(self) -> int:
        """SQLite's `PRAGMA data_version`: it changes when another connection commits (not our own commits)."""
        return self.q("PRAGMA data_version")[0][0]

    def q(self, sql: str, params: Sequence = ()) -> list:
        """All rows of one statement; driver errors become StorageError."""
        try:
            return self.conn.execute(sql, params).fetchall()
        except self.driver.Error as exc:
            raise StorageError(f"database error: {exc}") from exc

    def fetch(self, row_id: int) -> dict | None:
        """One memory row (any state) as a record, or None."""
        rows = self.q(f"SELECT {SELECT_COLUMNS} FROM memories WHERE id = ?", (row_id,))
        return record(rows[0]) if rows else None

    def changed(self) -> None:
        """After writing index rows: cached counts and matrices are stale."""
        self.generation += 1
        self.matrix_cache.clear()
        self.total_cache = None
        self.scoped_freq = None
        self.windows_cache = None

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()
