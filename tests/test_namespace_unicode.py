"""Namespaces keep the letters and digits of every script, so projects named in Chinese, Cyrillic, ... stay apart.

Found by a fresh-user run: the slug kept only `[a-z0-9._-]`, so every folder named without Latin letters or
digits (客户系统, 支付网关, проект) mapped to `root` and two such projects read each other's memories, and an
explicit `namespace: "项目"` was refused.
"""
from __future__ import annotations

import http.client
import io
import json
import os
import re
import subprocess
import sys
import threading
import unicodedata
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supermemory import hooks, rules
from supermemory.config import Config, namespace_for_dir, normalize_namespace
from supermemory.core import MemoryStore
from supermemory.embed import HashProvider
from supermemory.errors import InvalidInputError
from supermemory.mcp.server import serve
from supermemory.ui.server import UIServer

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("客户系统", "支付网关")


def _git_project(parent: Path, name: str) -> Path:
    (parent / name / ".git").mkdir(parents=True)
    return parent / name


@pytest.fixture
def two_projects(tmp_path) -> dict[str, Path]:
    return {name: _git_project(tmp_path, name) for name in FOLDERS}


@pytest.fixture
def store(tmp_path):
    config = Config(home=tmp_path / "smhome")
    with MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="客户系统") as s:
        yield s


def _seed(store) -> dict[str, str]:
    """One memory per project, both about deploys (so a leak would show in a recall of 'deploys')."""
    return {ns: store.remember(f"The {ns} service deploys on {day}", namespace=ns, create_namespace=True)["id"]
            for ns, day in zip(FOLDERS, ("Fridays", "Mondays"))}


# --- the name itself --------------------------------------------------------------------------------

@pytest.mark.parametrize("given_name, expected", [
    ("客户系统", "客户系统"),
    ("Проект", "проект"),
    ("ＡＰＩ网关", "api网关"),                 # full-width Latin folds to ASCII (NFKC)
    ("cafe\u0301", "café"),                   # macOS spells folder names decomposed
    ("हिन्दी", "हिन्दी"),                       # combining vowel signs stay with their letter
    ("项目 名/子\\x", "项目-名-子-x"),
    ("\u202eevil\u200b", "evil"),             # bidi override and zero-width space are not letters
    ("My-Proj_2.x", "my-proj_2.x"),
])
def test_a_name_keeps_the_letters_and_digits_of_any_script(given_name, expected):
    assert normalize_namespace(given_name) == expected


@pytest.mark.parametrize("given_name", ["🚀", "..", "/", "\x00\x01", "—·—", "\u3164"])
def test_a_name_without_a_letter_or_digit_is_refused_with_what_it_needs(given_name):
    with pytest.raises(InvalidInputError, match="needs a letter or digit"):
        normalize_namespace(given_name)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=120))
def test_a_namespace_is_never_a_path_a_control_character_or_longer_than_64_and_normalises_once(text):
    try:
        ns = normalize_namespace(text)
    except InvalidInputError:
        return
    assert ns and len(ns) <= 64 and ns not in (".", "..") and ns[0] not in "-." and ns[-1] not in "-."
    assert not {"/", "\\", ",", '"', "*"} & set(ns)
    assert all(unicodedata.category(ch)[0] in "LNM" or ch in "._-" for ch in ns)
    assert normalize_namespace(ns) == ns


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_names_keep_the_namespace_they_had(text):
    old = re.sub(r"[^a-z0-9._\-]+", "-", text.strip().casefold()).strip("-.")[:64]
    try:
        assert normalize_namespace(text) == old.rstrip("-.")
    except InvalidInputError:
        assert not old


# --- folders ----------------------------------------------------------------------------------------

def test_two_projects_named_in_chinese_get_two_namespaces_named_after_them(two_projects):
    assert [namespace_for_dir(path / "src") for path in two_projects.values()] == list(FOLDERS)
    assert namespace_for_dir(_git_project(two_projects["客户系统"].parent, "Проект")) == "проект"


def test_folders_named_only_in_emoji_get_distinct_stable_names_never_root(tmp_path):
    rocket, sparkles = _git_project(tmp_path, "🚀"), _git_project(tmp_path, "✨!")
    names = {namespace_for_dir(rocket), namespace_for_dir(sparkles)}
    assert len(names) == 2 and all(re.fullmatch(r"project-[0-9a-f]{10}", n) for n in names)
    assert namespace_for_dir(rocket / "deep" / "er") == namespace_for_dir(rocket)
    assert normalize_namespace(namespace_for_dir(rocket)) == namespace_for_dir(rocket)


# --- end to end ---------------------------------------------------------------------------------------

def test_recall_list_briefing_and_stats_of_one_chinese_project_never_show_the_other(store):
    ids = _seed(store)
    for ns, other in (FOLDERS, FOLDERS[::-1]):
        store.namespace = ns
        found = store.recall("deploys", min_similarity=0, relative_cutoff=0, touch=False)["results"]
        assert [r["id"] for r in found] == [ids[ns]]
        assert [i["id"] for i in store.list()["items"]] == [ids[ns]]
        assert ids[other] not in json.dumps(store.briefing(), ensure_ascii=False)
        assert store.stats()["by_namespace"] == {ns: 1}
        assert [r["id"] for r in store.recall("deploys", namespace=other, touch=False)["results"]] == [ids[other]]


def test_the_cli_files_each_chinese_repo_under_its_own_name_and_takes_one_explicitly(two_projects, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY")}
    env.update(SUPERMEMORY_HOME=str(tmp_path / "home"), SUPERMEMORY_EMBED_PROVIDER="hash", PYTHONPATH=str(ROOT),
               PYTHONUTF8="1")

    def cli(cwd: Path, *args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "supermemory", *args], cwd=cwd, env=env, capture_output=True,
                              text=True, encoding="utf-8", timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    for name, path in two_projects.items():
        cli(path, "remember", f"{name} deploys on its own day")
    for name, path in two_projects.items():
        other = FOLDERS[1 - FOLDERS.index(name)]
        recalled = cli(path, "recall", "deploys")
        assert name in recalled and other not in recalled
        listed = json.loads(cli(path, "list", "--json"))
        assert {i["namespace"] for i in listed.get("memories", listed.get("items"))} == {name}
    cli(tmp_path, "remember", "一条项目笔记", "--namespace", "项目", "--create-namespace")
    assert "一条项目笔记" in cli(tmp_path, "list", "--namespace", "项目")


def test_mcp_tool_calls_take_a_chinese_namespace_argument(store):
    frames = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
              {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    calls = {"write": ("memory_remember", {"content": "网关 deploys canary", "namespace": "支付网关",
                                           "create_namespace": True}),
             "read": ("memory_recall", {"query": "deploys", "namespace": "支付网关"}),
             "own": ("memory_recall", {"query": "deploys"})}
    frames += [{"jsonrpc": "2.0", "id": key, "method": "tools/call", "params": {"name": name, "arguments": args}}
               for key, (name, args) in calls.items()]
    out = io.BytesIO()
    data = b"".join(json.dumps(f).encode() + b"\n" for f in frames)
    assert serve(io.BytesIO(data), out, config=store.config, store_factory=lambda ns: store) == 0
    answers = {r["id"]: r["result"] for r in map(json.loads, out.getvalue().splitlines()) if "result" in r}
    assert answers["write"]["isError"] is False and answers["write"]["structuredContent"]["namespace"] == "支付网关"
    assert [r["namespace"] for r in answers["read"]["structuredContent"]["results"]] == ["支付网关"]
    assert answers["own"]["structuredContent"]["results"] == []     # the session's project is 客户系统


def test_the_session_start_hook_briefs_the_chinese_project_it_runs_in(two_projects, monkeypatch, tmp_path):
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    config = Config(home=Path(os.environ["SUPERMEMORY_HOME"]))
    with MemoryStore(config.db_path, config=config, namespace="客户系统") as s:
        ids = _seed(s)
    out = io.StringIO()
    payload = {"cwd": str(two_projects["支付网关"]), "source": "startup"}
    assert hooks.run_hook("session-start", stdin=io.StringIO(json.dumps(payload)), stdout=out, budget=120) == 0
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "briefing (支付网关" in context and ids["支付网关"] in context and ids["客户系统"] not in context


def test_import_rules_files_a_chinese_projects_rules_under_its_name(store, two_projects):
    (two_projects["支付网关"] / "AGENTS.md").write_text("# 规则\n\n- 用 pnpm 安装依赖。\n", encoding="utf-8")
    result = store.import_rules([str(two_projects["支付网关"] / "AGENTS.md")])
    assert [f["namespace"] for f in result["files"]] == ["支付网关"]
    assert store.list(namespace="支付网关", kinds=["preference"])["total"] == 1


def test_the_ui_filters_by_a_percent_encoded_chinese_namespace(store):
    ids = _seed(store)
    server = UIServer(store, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        query = urllib.parse.urlencode({"namespace": "支付网关"})
        conn.request("GET", f"/api/memories?{query}", headers={"Host": f"127.0.0.1:{server.port}",
                                                              "X-Supermemory-Token": server.token})
        response = conn.getresponse()
        body = json.loads(response.read())
        conn.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert response.status == 200, body
    assert [m["id"] for m in body["items"]] == [ids["支付网关"]]
