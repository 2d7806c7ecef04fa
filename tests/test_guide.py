"""The usage guide is generated from the live tool table and the live settings."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from supermemory.config import Config
from supermemory.settings import DEFAULTS, deep_merge as _deep_merge
from supermemory.guide import BEGIN_MARK, END_MARK, usage_guide
from supermemory.mcp.tools import TOOLS

REPO = Path(__file__).resolve().parents[1]


def test_the_guide_names_every_tool_in_the_live_table(tmp_path):
    text = usage_guide(Config(home=tmp_path), TOOLS)
    for tool in TOOLS:
        assert f"| `{tool.name}` |" in text


def test_the_guide_follows_a_changed_tool_list(tmp_path):
    tools = [{"name": "memory_brand_new", "description": "Use when testing. More words."}]
    text = usage_guide(Config(home=tmp_path), tools=tools)
    assert "| `memory_brand_new` | Use when testing |" in text
    assert "| `memory_stats` |" not in text


def test_the_guide_reflects_changed_settings(tmp_path):
    default = usage_guide(Config(home=tmp_path), TOOLS)
    settings = _deep_merge(DEFAULTS, {"recall": {"default_limit": 13, "max_limit": 77},
                                      "hooks": {"briefing_tokens": 432},
                                      "lifecycle": {"stale_days": 99, "importance_floor": 0.15},
                                      "mcp": {"max_response_bytes": 12345}})
    changed = usage_guide(Config(home=tmp_path, settings=settings), TOOLS)
    for needle in ("up to 13 ranked hits", "up to 77", "up to 432 tokens", "unused for 99 days",
                   "at or below 0.15", "capped at 12345 bytes"):
        assert needle in changed, needle
        assert needle not in default, needle


def test_the_guide_mentions_a_pinned_namespace(tmp_path):
    text = usage_guide(Config(home=tmp_path, explicit_namespace="team-memory"), TOOLS)
    assert "`team-memory`" in text and "SUPERMEMORY_NAMESPACE" in text


def test_the_guide_covers_writing_reading_revising_and_namespaces(tmp_path):
    text = usage_guide(Config(home=tmp_path), TOOLS)
    assert text.startswith(BEGIN_MARK) and text.endswith(END_MARK)
    for needle in ("memory_recall", "memory_remember", "memory_update", "memory_forget", "never secrets",
                   "`global`", "create_namespace", "decision", "gotcha", "preference", "task"):
        assert needle in text, needle
    assert len(text.splitlines()) <= 62


def test_supermemory_guide_prints_the_block(capsys):
    from supermemory.cli import main

    assert main(["guide"]) == 0
    out = capsys.readouterr().out
    assert BEGIN_MARK in out and "memory_usage_guide" in out


def test_building_the_guide_imports_no_numpy(tmp_path):
    script = ("import json, sys\n"
              "from supermemory.config import load_config\n"
              "from supermemory.guide import usage_guide\n"
              "from supermemory.mcp.tools import TOOLS\n"
              "usage_guide(load_config(), TOOLS)\n"
              "print(json.dumps(['numpy' in sys.modules, 'onnxruntime' in sys.modules]))")
    env = dict(os.environ, SUPERMEMORY_HOME=str(tmp_path),
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [False, False]
