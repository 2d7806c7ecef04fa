"""Listings (broad recall, `list`, `index`, MCP memory_list) name a superseded memory's successor and a broad answer
ranks it after the current ones, as recall does."""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from supermemory.core import MemoryStore
from supermemory.render import CLI_COMMANDS, render_index_md, render_list, render_recall
from tests.conftest import FakeEmbedder

ROOT = Path(__file__).resolve().parents[1]
NOW = dt.datetime(2026, 12, 2, 12, 0).timestamp()   # a Wednesday: "this week" began on Monday


@pytest.fixture
def ci(db_path, config):
    """The report's store: a current decision (GitHub Actions) and, written after it, an outdated one (Jenkins)
    that the current one supersedes, plus an older decision superseded the ordinary way (a change-announcing
    memory written later)."""
    now = [NOW - 3600]
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj", clock=lambda: now[0])
    ids = {"staging_old": s.remember("Staging deploys run from the Jenkins deploy-staging job every night.",
                                     kind="decision")["id"]}
    now[0] += 60
    current = s.remember("Staging deploys no longer run from the Jenkins deploy-staging job; they run from "
                         "GitHub Actions.", kind="decision")
    assert current["supersedes"] == [ids["staging_old"]]
    ids["current"] = current["id"]
    now[0] += 60
    ids["jenkins"] = s.remember("CI runs on Jenkins still", kind="decision", title="CI on Jenkins")["id"]
    s.link(ids["current"], ids["jenkins"], relation="supersedes")
    now[0] = NOW
    yield s, ids
    s.close()


@pytest.mark.parametrize("query", ["decisions", "本周的决定", "what did we decide"])
def test_a_broad_answer_lists_superseded_decisions_after_the_current_one_and_marks_them(ci, query):
    s, ids = ci
    result = s.recall(query)
    listed = [r["id"] for r in result["results"]]
    assert listed == [ids["current"], ids["jenkins"], ids["staging_old"]]   # the newest outdated one demoted
    marks = {r["id"]: r["superseded_by"] for r in result["results"]}
    assert marks == {ids["current"]: None, ids["jenkins"]: ids["current"], ids["staging_old"]: ids["current"]}
    text = render_recall(result)
    assert f"CI on Jenkins — CI runs on Jenkins still  [superseded by {ids['current']}]" in text
    assert text.count("[superseded by") == 2 and "superseded ones last" in result["note"]


def test_a_current_memory_just_past_the_limit_is_listed_before_an_outdated_one(ci):
    s, ids = ci
    assert [r["id"] for r in s.recall("decisions", limit=1)["results"]] == [ids["current"]]
    assert [r["id"] for r in s.recall("decisions", limit=2)["results"]] == [ids["current"], ids["jenkins"]]


def test_list_and_index_name_the_successor_of_a_superseded_memory(ci):
    s, ids = ci
    page = s.list(kinds=["decision"])
    assert [(m["id"], m["superseded_by"]) for m in page["items"]] == [
        (ids["jenkins"], ids["current"]), (ids["current"], None), (ids["staging_old"], ids["current"])]
    assert f"CI runs on Jenkins still  [superseded by {ids['current']}]" in render_list(page, commands=CLI_COMMANDS)
    index = s.memory_index()
    assert {m["id"]: m["superseded_by"] for m in index["items"]}[ids["jenkins"]] == ids["current"]
    assert f"[superseded by {ids['current']}]" in render_index_md(index)["text"]


def test_memory_list_over_mcp_carries_superseded_by_in_text_and_structured_content(ci):
    from tests.test_mcp_server import call

    s, ids = ci
    result = call(s, "memory_list", {"kinds": ["decision"]})["result"]
    assert not result["isError"]
    marks = {m["id"]: m["superseded_by"] for m in result["structuredContent"]["memories"]}
    assert marks[ids["jenkins"]] == ids["current"] and marks[ids["current"]] is None
    assert f"CI runs on Jenkins still  [superseded by {ids['current']}]" in result["content"][0]["text"]


def test_normal_recall_still_marks_a_superseded_hit_once(ci):
    s, ids = ci
    result = s.recall("Jenkins deploy-staging job")
    stale = [r for r in result["results"] if r.get("superseded_by")]
    assert stale and render_recall(result).count("[superseded by") == len(stale)


def test_the_cli_list_and_index_mark_a_superseded_memory(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY")}
    env.update(SUPERMEMORY_HOME=str(tmp_path / "home"), SUPERMEMORY_EMBED_PROVIDER="hash", PYTHONPATH=str(ROOT))

    def run(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "supermemory", *args, "--namespace", "proj"], env=env,
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    old = run("remember", "CI runs on Jenkins", "-k", "decision", "--create-namespace").strip()
    new = run("remember", "CI no longer runs on Jenkins; it runs on GitHub Actions", "-k", "decision").strip()
    run("link", new, old, "--relation", "supersedes")
    assert f"[superseded by {new}]" in run("list")
    assert f"[superseded by {new}]" in run("index")
    listed = json.loads(run("list", "--json"))["memories"]
    assert {m["id"]: m["superseded_by"] for m in listed} == {old: new, new: None}
    assert f"[superseded by {new}]" in run("recall", "decisions")


def test_get_names_the_memory_that_supersedes_a_live_one(ci):
    # Found by the listings fix: `get` of a live memory a link supersedes showed its successor only among its links.
    from supermemory.render import render_get

    s, ids = ci
    got = s.get(ids["jenkins"])["memories"][0]
    assert got["superseded_by"] == ids["current"] and "current" not in got
    assert f"superseded by {ids['current']}" in render_get(s.get(ids["jenkins"]), commands=CLI_COMMANDS)
    assert s.get(ids["current"])["memories"][0]["superseded_by"] is None
