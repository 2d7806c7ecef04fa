"""Driver choice, migrations and both vector paths."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from supermemory.store import db as dbm
from supermemory.store import search_index
from supermemory.core import MemoryStore
from supermemory.errors import MigrationError, StorageError

from conftest import FakeEmbedder


def test_migrate_blank_gives_the_final_schema(db_path):
    driver = dbm.choose_driver()
    conn = dbm.connect(db_path, driver)
    dbm.migrate(conn, driver)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"meta", "memories", "chunks", "vectors", "links", "fts", "fts_vocab", "search_log",
            "capture_state", "_supermemory_migrations"} <= names
    assert dbm.schema_version(conn) == len(dbm.MIGRATIONS)
    assert dbm.migrate(conn, driver) == []


def test_older_database_opens_and_upgrades(db_path, config):
    driver = dbm.choose_driver()
    conn = dbm.connect(db_path, driver)
    dbm._applied(conn)
    with dbm.write_txn(conn, driver):
        dbm.MIGRATIONS[0].fn(conn)
        conn.execute("INSERT INTO _supermemory_migrations VALUES (?, 0)", (dbm.MIGRATIONS[0].name,))
    conn.close()
    store = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    assert dbm.schema_version(store.conn) == len(dbm.MIGRATIONS)
    store.close()


def test_newer_database_is_refused_clearly(db_path, config):
    store = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    store.conn.execute("INSERT INTO _supermemory_migrations VALUES ('m999_from_the_future', 0)")
    store.close()
    with pytest.raises(MigrationError, match="newer supermemory"):
        MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")


def test_garbage_file_is_refused_and_left_untouched(db_path, config):
    db_path.write_bytes(b"this is not sqlite" * 100)
    before = db_path.read_bytes()
    with pytest.raises(StorageError, match="left untouched"):
        MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    assert db_path.read_bytes() == before


def test_an_empty_db_file_warns_only_when_it_is_not_a_first_start_in_progress(db_path, caplog):
    db_path.write_bytes(b"")   # another process has just created it and not written its schema yet
    with caplog.at_level("WARNING", logger="supermemory"):
        dbm._secure_file(db_path)
    assert caplog.records == []
    os.utime(db_path, (1_600_000_000, 1_600_000_000))   # empty for years: something emptied it
    with caplog.at_level("WARNING", logger="supermemory"):
        dbm._secure_file(db_path)
    assert [r.getMessage() for r in caplog.records] == [
        f"{db_path} exists but is empty (0 bytes): starting a new database in it"]


def test_stdlib_driver_path_works_with_numpy_vectors(db_path, config):
    driver = dbm.choose_driver("sqlite3")
    assert driver.name == "sqlite3" and driver.fts5
    store = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", driver="sqlite3")
    m = store.remember("stdlib driver memory about caching")
    assert store.recall("caching memory")["results"][0]["id"] == m["id"]
    store.close()


def test_sqlean_driver_loads_sqlite_vec():
    if importlib.util.find_spec("sqlean") is None:
        pytest.skip("sqlean.py not installed on this platform")
    driver = dbm.choose_driver("sqlean")
    assert driver.name == "sqlean" and driver.vec and driver.fts5


def test_pysqlite3_driver_is_used_or_reported_clearly(db_path, config):
    if importlib.util.find_spec("pysqlite3") is None:
        with pytest.raises(StorageError, match="pysqlite3"):
            dbm.choose_driver("pysqlite3")
    else:
        store = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", driver="pysqlite3")
        store.remember("pysqlite3 path")
        store.close()


def test_forced_numpy_vectors_ignore_sqlite_vec(db_path, config):
    store = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", vectors="numpy")
    assert not store.driver.vec
    store.remember("brute force path")
    assert store.recall("brute force")["results"]
    store.close()


class RandomEmbedder(FakeEmbedder):
    """Continuous pseudo-random unit vectors per text: no ties between distinct memories."""

    def embed_batch(self, texts):
        import hashlib

        out = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dimensions).astype(np.float32)
            out.append(v / np.linalg.norm(v))
        return np.vstack(out)


def _fixture_store(path, config, **kwargs):
    store = MemoryStore(path, config=config, embedder=RandomEmbedder(), namespace="p", **kwargs)
    rng = np.random.default_rng(7)
    words = ["cache", "deploy", "postgres", "redis", "auth", "token", "queue", "retry", "docker", "lint",
             "test", "build", "schema", "index", "vector", "search", "config", "logging", "metrics", "alert"]
    items = [{"content": " ".join(rng.choice(words, size=8)) + f" item{i}"} for i in range(1000)]
    store.remember_many(items)
    return store


def test_both_vector_paths_return_the_same_top10_on_1k_memories(tmp_path, config):
    if not dbm.choose_driver().vec:
        pytest.skip("no driver here can load sqlite-vec")
    vec_store = _fixture_store(tmp_path / "vec.db", config)
    np_store = _fixture_store(tmp_path / "np.db", config, vectors="numpy")
    assert search_index.vec_index_usable(vec_store.context) and not search_index.vec_index_usable(np_store.context)
    for query in ["cache redis retry", "postgres schema index", "docker build lint", "auth token alert"]:
        qv = RandomEmbedder().embed_query(query)
        a = [m for m, _ in search_index.vector_search(vec_store.context, qv, ["p"], 10)]
        b = [m for m, _ in search_index.vector_search(np_store.context, qv, ["p"], 10)]
        assert a == b, query
    vec_store.close()
    np_store.close()


def test_vector_index_is_rebuilt_after_writes_by_a_driver_without_sqlite_vec(db_path, config):
    if not dbm.choose_driver().vec:
        pytest.skip("no driver here can load sqlite-vec")
    first = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    first.remember("written with sqlite-vec")
    first.close()
    plain = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", driver="sqlite3")
    added = plain.remember("written without sqlite-vec about kubernetes")
    plain.close()
    again = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    assert again.recall("kubernetes")["results"][0]["id"] == added["id"]
    count = again.conn.execute("SELECT count(*) FROM vec_mem").fetchone()[0]
    assert count == 2
    again.close()
