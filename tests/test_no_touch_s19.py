"""A recall with touch=False (`recall --no-touch`, bench runs) is not counted at all: no recall counters and no
search-log row, so it is not in `stats` (searches, the no-result list) nor in the UI Health figures; on the plain
recall path and on the broad-question paths (a listing, a topic answered by a filtered recall) alike."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from supermemory.ui import api

ROOT = Path(__file__).resolve().parents[1]


def _log_rows(store) -> int:
    return store.conn.execute("SELECT count(*) FROM search_log").fetchone()[0]


@pytest.fixture
def seeded(store):
    ids = {
        "fact": store.remember("postgres connection pool size is 20", kind="fact")["id"],
        "task": store.remember("TODO: add retries to the webhook sender", kind="task")["id"],
    }
    return store, ids


@pytest.mark.parametrize("query", [
    "zebra crossing quux",            # plain recall, nothing found
    "postgres connection pool",       # plain recall with a hit
    "what tasks are open",            # a broad question: the listing (search_log.trace_page in broad.py)
    "open tasks about the webhook",   # a broad question with a topic (pipeline._trace of the answer)
    "what's left on my todo list",
])
def test_a_recall_without_touch_leaves_no_trace_in_the_log_counters_stats_or_health(seeded, query):
    store, ids = seeded
    store.recall(query, touch=False, origin="cli")
    assert _log_rows(store) == 0
    stats = store.stats()
    assert stats["searches"] == 0 and stats["recent_empty_queries"] == []
    assert all(store.get(i)["memories"][0]["recall_count"] == 0 for i in ids.values())
    health = api.health(store, {})["recall"]
    assert health["searches"] == 0 and health["hit_rate"] is None and health["recent_empty_queries"] == []
    # the same recall with touch is logged once, as before
    store.recall(query, origin="cli")
    assert _log_rows(store) == 1 and store.stats()["searches"] == 1


def test_bench_recalls_stay_unlogged_and_uncounted(seeded):
    store, ids = seeded
    found = store.recall("postgres connection pool", touch=False, origin="bench")
    assert found["results"] and found["results"][0]["id"] == ids["fact"]
    assert _log_rows(store) == 0 and store.get(ids["fact"])["memories"][0]["recall_count"] == 0


def test_cli_no_touch_is_not_in_stats(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY")}
    env.update(SUPERMEMORY_HOME=str(tmp_path / "home"), SUPERMEMORY_EMBED_PROVIDER="hash", PYTHONPATH=str(ROOT))

    def run(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "supermemory", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    run("remember", "postgres connection pool size is 20")
    run("recall", "zebra crossing quux", "--no-touch")
    run("recall", "what tasks are open", "--no-touch")
    out = run("stats")
    assert "searches     none yet" in out and "no result" not in out, out
    run("recall", "zebra crossing quux")
    out = run("stats")
    assert "searches     1 " in out and "no result: zebra crossing quux" in out, out
