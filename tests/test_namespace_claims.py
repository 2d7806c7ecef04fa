"""When a project's derived namespace is claimed: at its first write (CLI, MCP server, hooks), never at a read.

Two fresh-user reports drive these tests. (1) On a fresh store the MCP server never recorded its claim: a
second project with the same folder name took the name, and the first project's memories with it. (2) Read-only
commands claimed names: `supermemory stats` in /tmp recorded `namespaces/tmp`. A read still resolves to the name
its project would get, so it never shows another project's memories as its own.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.common import McpClient, subprocess_env
from supermemory import cli
from supermemory.config import load_config
from supermemory.core import MemoryStore
from supermemory.embed import HashProvider

HASHED = r"-[0-9a-f]{10}"
CONTENT = "payment gateway timeouts: retry twice, then fail the order"


def _git_project(parent: Path, *names: str) -> Path:
    path = parent.joinpath(*names)
    (path / ".git").mkdir(parents=True)
    return path


def _cli_json(home: Path, cwd: Path, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "supermemory", *args, "--json"], cwd=cwd, env=subprocess_env(home),
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


def _listed(home: Path, cwd: Path) -> list[tuple[str, str]]:
    return [(m["id"], m["namespace"]) for m in _cli_json(home, cwd, "list")["items"]]


def _remembered(result: dict) -> dict:
    assert not result["isError"], result
    return result["structuredContent"]


def _session(home: Path, cwd: Path) -> McpClient:
    client = McpClient(home, cwd)
    client.initialize()
    return client


def _end(*clients: McpClient) -> None:
    for client in clients:
        code, err = client.close()
        assert code == 0, err


# --- 1. the MCP server claims the name at its first write, also on a fresh store ----------------------------

def test_mcp_sessions_of_two_same_named_projects_on_a_fresh_store_keep_their_memories_apart(tmp_path):
    home = tmp_path / "home"                                   # a new user: no data dir, no database
    first, second = _git_project(tmp_path, "a", "backend"), _git_project(tmp_path, "b", "backend")
    a = _session(home, first)
    try:
        stored = _remembered(a.tool("memory_remember", {"content": CONTENT}))
    finally:
        _end(a)
    assert (stored["id"], stored["namespace"]) == ("M1", "backend")
    assert (home / "namespaces" / "backend").read_bytes() == os.fsencode(str(first))
    b = _session(home, second)
    try:
        other = _remembered(b.tool("memory_remember", {"content": CONTENT}))
    finally:
        _end(b)
    assert other["status"] == "created" and other["id"] != "M1"   # not "already stored as M1"
    assert re.fullmatch("backend" + HASHED, other["namespace"])
    assert (home / "namespaces" / "backend").read_bytes() == os.fsencode(str(first))
    assert _listed(home, first) == [("M1", "backend")]
    assert _listed(home, second) == [(other["id"], other["namespace"])]


def test_an_mcp_session_whose_workspace_root_names_the_project_claims_it_at_its_first_write(tmp_path):
    home, elsewhere = tmp_path / "home", tmp_path / "launched-here"
    elsewhere.mkdir()
    first, second = _git_project(tmp_path, "a", "backend"), _git_project(tmp_path, "b", "backend")
    stored = {}
    for name, project in (("a", first), ("b", second)):
        client = McpClient(home, elsewhere)                    # the client launches the server outside the project
        try:
            client.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
                                          "clientInfo": {"name": "roots-test", "version": "1"}})
            client.send_raw(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            client.send_raw(json.dumps({"jsonrpc": "2.0", "id": "sm-roots-1",
                                        "result": {"roots": [{"uri": project.as_uri()}]}}).encode())
            stored[name] = _remembered(client.tool("memory_remember", {"content": CONTENT}))
        finally:
            _end(client)
    assert stored["a"]["namespace"] == "backend"
    assert re.fullmatch("backend" + HASHED, stored["b"]["namespace"]) and stored["b"]["id"] != stored["a"]["id"]
    assert (home / "namespaces" / "backend").read_bytes() == os.fsencode(str(first))


def test_two_mcp_sessions_started_at_once_on_a_fresh_store_the_first_write_keeps_the_name(tmp_path):
    home = tmp_path / "home"
    first, second = _git_project(tmp_path, "a", "backend"), _git_project(tmp_path, "b", "backend")
    a, b = McpClient(home, first), McpClient(home, second)
    try:
        a.initialize()
        b.initialize()
        in_a = _remembered(a.tool("memory_remember", {"content": CONTENT}))
        in_b = _remembered(b.tool("memory_remember", {"content": CONTENT}))
        assert _remembered(a.tool("memory_list", {}))["memories"][0]["id"] == in_a["id"]
        assert [m["id"] for m in _remembered(b.tool("memory_list", {}))["memories"]] == [in_b["id"]]
    finally:
        a.kill()
        b.kill()
    assert in_a["namespace"] == "backend" and re.fullmatch("backend" + HASHED, in_b["namespace"])
    assert (home / "namespaces" / "backend").read_bytes() == os.fsencode(str(first))


def test_two_mcp_sessions_writing_at_the_same_moment_leave_one_owner_of_the_name(tmp_path):
    home = tmp_path / "home"
    projects = [_git_project(tmp_path, side, "backend") for side in ("a", "b")]
    clients = [McpClient(home, project) for project in projects]
    try:
        for client in clients:
            client.initialize()
        for client in clients:                                 # both writes in flight before either answer is read
            client.send_raw(json.dumps({"jsonrpc": "2.0", "id": "w", "method": "tools/call", "params": {
                "name": "memory_remember", "arguments": {"content": CONTENT}}}).encode())
        answers = []
        for client in clients:
            while (message := json.loads(client.out.next(60))).get("id") != "w":
                pass
            answers.append(_remembered(message["result"]))
    finally:
        for client in clients:
            client.kill()
    names = [answer["namespace"] for answer in answers]
    assert sorted(names, key=len)[0] == "backend" and re.fullmatch("backend" + HASHED, sorted(names, key=len)[1])
    owner = projects[names.index("backend")]
    assert (home / "namespaces" / "backend").read_bytes() == os.fsencode(str(owner))
    assert len({answer["id"] for answer in answers}) == 2


def test_an_open_mcp_session_never_reads_or_writes_the_name_another_project_claimed_meanwhile(tmp_path):
    home = tmp_path / "home"
    first, second = _git_project(tmp_path, "a", "backend"), _git_project(tmp_path, "b", "backend")
    a = _session(home, first)                                  # started, has only looked its name up
    try:
        assert _remembered(a.tool("memory_list", {}))["memories"] == []
        written = _cli_json(home, second, "remember", "client B deploys by hand")
        assert written["namespace"] == "backend"               # B wrote first: B holds the name
        assert _remembered(a.tool("memory_list", {}))["memories"] == []   # A does not see B's memory as its own
        mine = _remembered(a.tool("memory_remember", {"content": CONTENT}))
    finally:
        _end(a)
    assert re.fullmatch("backend" + HASHED, mine["namespace"])
    assert _listed(home, second) == [(written["id"], "backend")]


# --- 13. reading never claims a name ---------------------------------------------------------------------

READS = [("stats",), ("list",), ("recall", "deploy steps"), ("get", "M1"), ("history", "M1"), ("graph",),
         ("briefing",), ("health",), ("index",), ("doctor",)]


@pytest.fixture
def in_folder(tmp_path, isolated_home, monkeypatch):
    """A store holding one memory written elsewhere, and a plain folder named `tmp` as the current directory."""
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    with MemoryStore(config=load_config(), embedder=HashProvider(), namespace="global") as store:
        store.remember("deploy steps live in the runbook")
    folder = tmp_path / "scratch" / "tmp"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


def test_read_only_commands_claim_no_namespace(in_folder, isolated_home, capsys):
    for args in [*READS, ("export", str(in_folder.parent / "out.jsonl"))]:
        assert cli.main([*args, "--json"]) == 0, args
        assert not (isolated_home / "namespaces" / "tmp").exists(), f"`supermemory {args[0]}` claimed 'tmp'"
    capsys.readouterr()
    assert cli.main(["remember", "a note written in the scratch folder", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["namespace"] == "tmp"
    assert (isolated_home / "namespaces" / "tmp").read_bytes() == os.fsencode(str(in_folder))


def test_a_read_in_a_project_before_its_first_write_is_its_own_name_never_the_owners(tmp_path, isolated_home,
                                                                                       monkeypatch, capsys):
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    first, second = _git_project(tmp_path, "a", "backend"), _git_project(tmp_path, "b", "backend")
    monkeypatch.chdir(first)
    assert cli.main(["remember", CONTENT, "--json"]) == 0
    monkeypatch.chdir(second)
    capsys.readouterr()
    assert cli.main(["list", "--json"]) == 0 and json.loads(capsys.readouterr().out)["items"] == []
    assert cli.main(["stats", "--json"]) == 0
    assert re.fullmatch("backend" + HASHED, json.loads(capsys.readouterr().out)["namespace"][0])
    assert sorted(p.name for p in (isolated_home / "namespaces").iterdir()) == ["backend"]   # looked, not claimed


def test_an_open_store_that_only_looked_writes_to_its_own_name_when_another_root_claimed_it_since(home_store):
    reader, writer = home_store
    with _store(reader) as r:
        assert r.namespace == "api"                            # opened: a look, no claim
        with _store(writer) as w:
            assert w.remember("written by the other api")["namespace"] == "api"
        written = r.remember("the reader's first write")
        assert re.fullmatch("api" + HASHED, written["namespace"]) and r.namespace == written["namespace"]
        assert [m["title"] for m in r.list()["items"]] == ["the reader's first write"]


def test_an_update_claims_the_name_of_an_older_store_s_namespace(tmp_path, isolated_home, monkeypatch, capsys):
    # A store written before names were recorded: its first root to write (here: an update) keeps the name.
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    isolated_home.mkdir()
    project = _git_project(tmp_path, "work", "backend")
    with MemoryStore(config=load_config(), embedder=HashProvider(), namespace="backend") as old:
        old.remember("The backend listens on port 8443", create_namespace=True)
    monkeypatch.chdir(project)
    assert cli.main(["recall", "backend port", "--json"]) == 0
    assert not (isolated_home / "namespaces" / "backend").exists()
    assert cli.main(["update", "M1", "--content", "The backend listens on port 9443", "--json"]) == 0
    assert (isolated_home / "namespaces" / "backend").read_bytes() == os.fsencode(str(project))


@pytest.fixture
def home_store(tmp_path, isolated_home):
    isolated_home.mkdir()
    MemoryStore(config=load_config(), embedder=HashProvider()).close()
    return _git_project(tmp_path, "r", "api"), _git_project(tmp_path, "w", "api")


def _store(project: Path) -> MemoryStore:
    return MemoryStore(config=load_config(cwd=project), embedder=HashProvider())


def test_a_moved_project_with_a_hashed_name_reads_under_that_name_before_it_writes(home_store, tmp_path,
                                                                                   isolated_home):
    from supermemory.config import namespace_for_dir

    first, second = _git_project(tmp_path, "a", "backend"), _git_project(tmp_path, "b", "backend")
    assert namespace_for_dir(first) == "backend"
    hashed = namespace_for_dir(second)
    moved = tmp_path / "c" / "backend"
    moved.parent.mkdir()
    second.rename(moved)
    assert namespace_for_dir(moved, record=False) == hashed          # a read finds its memories at once
    assert (isolated_home / "namespaces" / hashed).read_bytes() == os.fsencode(str(second))
    assert namespace_for_dir(moved) == hashed                        # and its first write takes the name along
