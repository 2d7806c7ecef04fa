"""Start-up and shut-down of a real `supermemory mcp` process with the real model: the warm-up
thread and the first tool call never import numpy at the same time, a warm-up that failed is tried
again, and EOF during the warm-up ends the process cleanly.

The delays below are the input under test (when the client's first call or its EOF arrives
relative to the warm-up), not waits for a result.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from helpers.common import McpClient, run_slow

pytestmark = pytest.mark.model

BOUNDED_SPAWNS = 20
SLOW_SPAWNS = 100


def _spawns(request) -> int:
    return SLOW_SPAWNS if run_slow(request.config) else BOUNDED_SPAWNS


def _client(home, cwd, model_dir) -> McpClient:
    return McpClient(home, cwd, SUPERMEMORY_EMBED_PROVIDER="onnx", SUPERMEMORY_MODEL_DIR=str(model_dir))


def _delay(i: int, n: int) -> float:
    """Delays over 0–300 ms, denser near 0 where the warm-up thread is importing numpy."""
    return 0.3 * ((i % 10) / 9) ** 2


def test_first_tool_call_at_any_delay_after_initialized_never_breaks_the_session(tmp_path, model_dir, request):
    n = _spawns(request)
    failures = []
    shared = tmp_path / "existing"
    for i in range(n):
        home = shared if i % 3 == 2 else tmp_path / f"fresh-{i}"     # a third over one store, the rest new
        client = _client(home, tmp_path, model_dir)
        try:
            client.initialize()
            time.sleep(_delay(i, n))
            recall = client.request("tools/call", {"name": "memory_recall", "arguments": {"query": "sqlite wal mode"}})
            remember = client.request("tools/call", {"name": "memory_remember",
                                                     "arguments": {"content": f"spawn {i}: sqlite runs in WAL mode"}})
            again = client.request("tools/call", {"name": "memory_recall", "arguments": {"query": "sqlite wal mode"}})
            code, err = client.close()
        finally:
            client.kill()
        broken = [r for r in (recall, remember, again) if "error" in r or r["result"].get("isError")]
        if broken or code != 0:
            failures.append((i, code, broken, err[-500:]))
        else:
            assert again["result"]["structuredContent"]["results"], f"spawn {i}: the memory just stored is not found"
    assert failures == [], f"{len(failures)} of {n} sessions broke: {failures[:3]}"


def test_stdin_closed_during_warm_up_exits_zero_within_five_seconds(tmp_path, model_dir, request):
    n = _spawns(request)
    outcomes = []
    for i in range(n):
        client = _client(tmp_path / "home", tmp_path, model_dir)
        try:
            client.initialize()
            time.sleep(_delay(i, n))
            client.proc.stdin.close()
            started = time.monotonic()
            try:
                code = client.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = "still running after 5 s"
            elapsed = time.monotonic() - started
        finally:
            client.kill()
        outcomes.append((code, round(elapsed, 2)))
    bad = [(i, o) for i, o in enumerate(outcomes) if o[0] != 0]
    assert bad == [], f"{len(bad)} of {n} exits were not a clean 0 (negative = killed by that signal): {bad[:5]}"


def test_a_missing_model_is_looked_for_again_at_the_next_call_once_installed(tmp_path, model_dir):
    """The warm-up fails while the model is missing; after `model install` the same session embeds."""
    models = tmp_path / "models"
    models.mkdir()
    client = McpClient(tmp_path / "home", tmp_path, SUPERMEMORY_EMBED_PROVIDER="onnx",
                       SUPERMEMORY_MODEL_DIR=str(models))
    try:
        client.initialize()
        early = client.tool("memory_remember", {"content": "the release checklist lives in docs/release.md"})
        assert early["isError"] is False
        for name in ("model.onnx", "tokenizer.json", "config.json"):
            if (model_dir / name).exists():
                os.symlink(model_dir / name, models / name)
        for name in os.listdir(model_dir):
            if name.endswith(".json") and not (models / name).exists():
                shutil.copy(model_dir / name, models / name)
        later = client.tool("memory_remember", {"content": "deploys go out on Tuesdays after the standup"})
        assert later["isError"] is False
        stats = client.tool("memory_stats", {})
        # The early memory gets its vector while the server idles between requests (not at exit, which
        # stays quick): wait for that, generously, instead of racing the close against it.
        deadline, missing = time.monotonic() + 60, None
        while time.monotonic() < deadline:
            missing = _chunks_without_vector(tmp_path / "home" / "memory.db")
            if missing == 0:
                break
            time.sleep(0.2)
        code, err = client.close()
    finally:
        client.kill()
    assert code == 0, err
    assert stats["structuredContent"]["embedder"]["provider"] == "onnx", stats["structuredContent"]["embedder"]
    assert "lexical-only until then" in err        # the first write said why it had no vectors
    assert missing == 0, "the memory written while the model was missing was never embedded"


def _chunks_without_vector(db: Path) -> int:
    """Chunks with no vector, read over a second connection while the server runs (WAL)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute("SELECT COUNT(*) FROM chunks c WHERE NOT EXISTS "
                            "(SELECT 1 FROM vectors v WHERE v.chunk_id = c.id)").fetchone()[0]
    finally:
        conn.close()
