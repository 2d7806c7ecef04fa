"""An update that names no field is an input error (CLI and MCP), and one whose values equal the current ones says
it changed nothing, instead of printing the id as if a version had been written."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from supermemory.errors import InvalidInputError
from tests.test_mcp_server import call

ROOT = Path(__file__).resolve().parents[1]


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY")}
    env.update(SUPERMEMORY_HOME=str(tmp_path / "home"), SUPERMEMORY_EMBED_PROVIDER="hash", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "supermemory", *args, "--namespace", "proj"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


def test_the_cli_refuses_an_update_without_a_field_and_says_when_nothing_changed(tmp_path):
    memory = cli(tmp_path, "remember", "The cache uses Redis.", "--create-namespace").stdout.strip()
    bare = cli(tmp_path, "update", memory)
    assert bare.returncode == 1 and bare.stdout == ""
    assert "nothing to update: give --content, --title" in bare.stderr and "--status" in bare.stderr
    same = cli(tmp_path, "update", memory, "--title", "The cache uses Redis.")
    assert same.returncode == 0 and same.stdout.strip() == memory
    assert f"{memory} unchanged: the new values equal the current ones." in same.stderr
    assert len(json.loads(cli(tmp_path, "history", memory, "--json").stdout)["versions"]) == 1   # nothing written
    changed = cli(tmp_path, "update", memory, "--importance", "0.9")
    assert changed.returncode == 0 and changed.stdout.strip() != memory and "unchanged" not in changed.stderr


def test_memory_update_without_a_field_is_an_input_error(store):
    memory = store.remember("The cache uses Redis.")["id"]
    result = call(store, "memory_update", {"id": memory})["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == ("nothing to update: give content, title, kind, tags, importance, pinned "
                                            "or status")
    same = call(store, "memory_update", {"id": memory, "importance": 0.5})["result"]
    assert same["isError"] is False and same["structuredContent"]["status"] == "unchanged"
    assert "unchanged" in same["content"][0]["text"]
    assert store.history(memory)["current"] == memory


def test_the_store_refuses_an_update_without_a_field_as_the_cli_and_mcp_do(store):
    """`MemoryStore.update(id)` answered "unchanged" where the CLI and MCP refuse the call: all three now agree."""
    memory = store.remember("The cache uses Redis.")["id"]
    for extra in ({}, {"namespace": "*"}, {"source": {"by": "cli"}}):
        with pytest.raises(InvalidInputError, match="^nothing to update: give content, title, kind, tags"):
            store.update(memory, **extra)
    with pytest.raises(InvalidInputError, match="nothing to update"):   # before the id is looked up, as MCP does
        store.update("M424242")
    assert store.history(memory)["current"] == memory and len(store.history(memory)["versions"]) == 1
    assert store.update(memory, importance=0.5)["status"] == "unchanged"   # a field equal to the current value
    assert store.update(memory, ttl_days=None)["status"] == "unchanged"
    assert store.update(memory, confidence=0.4)["status"] == "updated"
