"""A derived namespace belongs to one project root: no two roots share one by accident.

Found by a fresh-user run: ~/clientA/backend and ~/clientB/backend were both `backend` (client A's memories in
client B's briefing and recall); a folder named `Global` wrote into the `global` namespace every project reads;
a git worktree (`git worktree add ../shop-api-agent2`) got a namespace of its own and saw none of the project's
memories; backfilled sessions of vanished folders whose names had no letter shared `root`.
"""
from __future__ import annotations

import io
import json
import logging
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from supermemory import backfill, hooks
from supermemory import project_names
from supermemory.config import Config, load_config, main_worktree, namespace_for_dir
from supermemory.core import MemoryStore
from supermemory.embed import HashProvider

HASHED = r"-[0-9a-f]{10}"


def _git_project(parent: Path, *names: str) -> Path:
    path = parent.joinpath(*names)
    (path / ".git").mkdir(parents=True)
    return path


@pytest.fixture
def home(tmp_path, isolated_home) -> Path:
    """The data dir of a user who already has a store (the record lives beside it)."""
    isolated_home.mkdir()
    MemoryStore(config=load_config(), embedder=HashProvider()).close()
    return isolated_home


def _store(home: Path, project: Path, **kwargs) -> MemoryStore:
    config = load_config(env={"SUPERMEMORY_HOME": str(home)}, cwd=project)
    return MemoryStore(config=config, embedder=HashProvider(), **kwargs)


# --- 1. two roots, one folder name ---------------------------------------------------------------------

def test_two_projects_whose_folders_share_a_name_get_two_namespaces_the_first_keeping_the_name(home, tmp_path,
                                                                                              caplog):
    first, second = _git_project(tmp_path, "clientA", "backend"), _git_project(tmp_path, "clientB", "backend")
    with caplog.at_level(logging.WARNING, logger="supermemory.project_names"):
        assert namespace_for_dir(first / "src") == "backend"
        assert caplog.records == []                                   # the first root is told nothing
        other = namespace_for_dir(second)
        assert re.fullmatch("backend" + HASHED, other)
        assert [r.getMessage() for r in caplog.records] == [
            f"the project {second} uses namespace {other!r} ('backend' belongs to {first}); to choose one, pass "
            "--namespace NAME (MCP: the `namespace` argument) or set SUPERMEMORY_NAMESPACE=NAME for its sessions"]
        for _ in range(3):                                            # stable, and told once
            assert (namespace_for_dir(first), namespace_for_dir(second / "deep")) == ("backend", other)
        assert len(caplog.records) == 1
    assert (home / "namespaces" / "backend").read_bytes() == os.fsencode(str(first))


def test_client_a_memories_never_reach_client_b_briefing_recall_or_hook(home, tmp_path):
    first, second = _git_project(tmp_path, "clientA", "backend"), _git_project(tmp_path, "clientB", "backend")
    with _store(home, first) as a:
        a.remember("Client A deploys the backend with the blue-green script", title="clientA deploy")
    with _store(home, second) as b:
        assert b.namespace != "backend"
        assert b.recall("deploys backend blue-green", min_similarity=0, relative_cutoff=0)["results"] == []
        assert "clientA" not in json.dumps(b.briefing()) and b.list()["items"] == []
        b.remember("Client B deploys by hand", title="clientB deploy")
    out = io.StringIO()
    payload = {"cwd": str(second), "source": "startup", "session_id": "s1"}
    assert hooks.run_hook("session-start", stdin=io.StringIO(json.dumps(payload)), stdout=out, budget=120) == 0
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "clientB deploy" in context and "clientA" not in context


def test_an_existing_store_keeps_its_namespace_for_the_first_root_that_uses_it(tmp_path, isolated_home):
    isolated_home.mkdir()
    project = _git_project(tmp_path, "work", "backend")
    with MemoryStore(config=load_config(), embedder=HashProvider(), namespace="backend") as old:   # before the record
        old.remember("The backend listens on port 8443", create_namespace=True)
    assert not (isolated_home / "namespaces" / "backend").exists()
    with _store(isolated_home, project) as store:
        assert store.namespace == "backend"
        assert [m["summary"] for m in store.list()["items"]] == ["The backend listens on port 8443"]


def test_a_project_that_only_read_claims_nothing_and_the_first_write_takes_the_name(home, tmp_path):
    # Reading claims no name (a `stats` in /tmp took `tmp`); the first root to write keeps it, and the one that
    # only read sees none of its memories afterwards: its reads and its first write are its own hashed name.
    reader, writer = _git_project(tmp_path, "r", "api"), _git_project(tmp_path, "w", "api")
    with _store(home, reader) as r:                                   # SessionStart / recall: no write yet
        assert r.namespace == "api"
        r.briefing()
    assert not (home / "namespaces" / "api").exists()
    with _store(home, writer) as w:
        assert w.remember("written by the other api")["namespace"] == w.namespace == "api"
    with _store(home, reader) as r:
        assert re.fullmatch("api" + HASHED, r.namespace) and r.list()["items"] == []
        assert r.remember("the reader's first write")["namespace"] == r.namespace
    assert (home / "namespaces" / "api").read_bytes() == os.fsencode(str(writer))


def test_an_explicit_namespace_always_wins(home, tmp_path):
    first, second = _git_project(tmp_path, "a", "backend"), _git_project(tmp_path, "b", "backend")
    assert namespace_for_dir(first) == "backend"
    env = {"SUPERMEMORY_HOME": str(home), "SUPERMEMORY_NAMESPACE": "backend"}
    assert load_config(env=env, cwd=second).default_namespace() == "backend"
    with _store(home, second, namespace="backend") as store:
        assert store.namespace == "backend"


def test_a_moved_project_keeps_its_name(home, tmp_path):
    old = _git_project(tmp_path, "old", "backend")
    assert namespace_for_dir(old) == "backend"
    new = tmp_path / "new" / "backend"
    new.parent.mkdir()
    old.rename(new)
    assert namespace_for_dir(new) == "backend"
    assert (home / "namespaces" / "backend").read_bytes() == os.fsencode(str(new))


def test_a_project_with_a_name_of_its_own_never_takes_over_a_moved_project_s_name(home, tmp_path):
    # Found by a fresh-user run: with client A's backend moved away, any command in client B's backend (doctor
    # was enough) took over `backend`: B saw A's memories and lost sight of its own.
    first, second = _git_project(tmp_path, "a", "backend"), _git_project(tmp_path, "b", "backend")
    with _store(home, first) as store:
        store.remember("client A ships on Fridays")
    with _store(home, second) as store:
        other = store.namespace
        store.remember("client B freezes deploys in December")
    assert re.fullmatch("backend" + HASHED, other)
    moved = tmp_path / "a-old" / "backend"
    moved.parent.mkdir()
    first.rename(moved)
    with _store(home, second) as store:
        assert store.namespace == other
        assert [m["title"] for m in store.list()["items"]] == ["client B freezes deploys in December"]
    assert namespace_for_dir(moved) == "backend"        # the moved project itself still takes its name along


def test_a_moved_project_with_a_hashed_name_takes_it_along(home, tmp_path):
    # Found by a fresh-user run: the hash is the old path's, so a moved project with one got a new hash and
    # lost sight of its memories. The one hashed name of that folder name whose folder is gone comes along.
    first, second = _git_project(tmp_path, "a", "backend"), _git_project(tmp_path, "b", "backend")
    assert namespace_for_dir(first) == "backend"
    hashed = namespace_for_dir(second)
    moved = tmp_path / "c" / "backend"
    moved.parent.mkdir()
    second.rename(moved)
    assert namespace_for_dir(moved) == hashed
    assert (home / "namespaces" / hashed).read_bytes() == os.fsencode(str(moved))
    third = _git_project(tmp_path, "d", "backend")          # a new project of that name gets a name of its own
    assert namespace_for_dir(third) not in ("backend", hashed)


def test_doctor_and_dry_runs_look_without_claiming_a_name(home, tmp_path):
    # Found by a fresh-user run: `doctor` in a scratch clone claimed the name a real project held memories under.
    scratch, real = _git_project(tmp_path, "scratch", "api"), _git_project(tmp_path, "work", "api")
    assert namespace_for_dir(scratch, record=False) == "api"
    assert not (home / "namespaces" / "api").exists()
    assert load_config(env={"SUPERMEMORY_HOME": str(home)}, cwd=scratch).default_namespace(record=False) == "api"
    assert namespace_for_dir(real) == "api"              # the first real claim
    assert re.fullmatch("api" + HASHED, namespace_for_dir(scratch, record=False))
    assert not list((home / "namespaces").glob("api-*"))


def test_many_processes_claiming_one_name_at_once_leave_one_owner(home, tmp_path):
    roots = [_git_project(tmp_path, f"c{n}", "svc") for n in range(8)]
    names: dict[Path, set] = {root: set() for root in roots}

    def derive(root):
        for _ in range(5):
            names[root].add(namespace_for_dir(root))

    threads = [threading.Thread(target=derive, args=(root,)) for root in roots * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(len(got) == 1 for got in names.values())              # each root: one name throughout
    final = [next(iter(got)) for got in names.values()]
    assert final.count("svc") == 1 and len(set(final)) == len(roots)


def test_no_store_yet_records_nothing_and_an_unwritable_data_dir_still_answers(tmp_path, isolated_home):
    project = _git_project(tmp_path, "a", "backend")
    assert namespace_for_dir(project) == "backend" and not isolated_home.exists()   # doctor, dry runs
    isolated_home.mkdir()
    (isolated_home / "memory.db").write_bytes(b"")
    (isolated_home / "namespaces").write_text("not a folder")        # a damaged data dir
    assert namespace_for_dir(project) == "backend"


# --- 2. never the shared namespace -----------------------------------------------------------------------

@pytest.mark.parametrize("folder", ["global", "Global", "GLOBAL", "ｇｌｏｂａｌ"])
def test_a_folder_named_global_is_a_project_of_its_own_not_the_shared_namespace(home, tmp_path, folder):
    project = _git_project(tmp_path, folder)
    ns = namespace_for_dir(project / "src")
    assert re.fullmatch("global" + HASHED, ns) and namespace_for_dir(project) == ns
    with _store(home, project) as store:
        assert store.remember("Only the Global project uses the staging proxy")["namespace"] == ns
    with _store(home, _git_project(tmp_path, "other")) as other:
        assert other.recall("staging proxy", min_similarity=0, relative_cutoff=0)["results"] == []


def test_a_folder_named_global_without_a_store_is_still_not_global(tmp_path, isolated_home):
    assert re.fullmatch("global" + HASHED, namespace_for_dir(_git_project(tmp_path, "Global")))
    assert not isolated_home.exists()


# --- 3. worktrees and submodules ---------------------------------------------------------------------------

def _fake_worktree(main: Path, name: str, *, common: str = "../..") -> Path:
    gitdir = main / ".git" / "worktrees" / name
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text(common + "\n")
    tree = main.parent / name
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {gitdir}\n")
    return tree


def test_a_git_worktree_shares_its_repository_namespace(home, tmp_path):
    main = _git_project(tmp_path, "shop-api")
    tree = _fake_worktree(main, "shop-api-agent2")
    assert main_worktree(tree) == main
    assert namespace_for_dir(tree / "src") == namespace_for_dir(main) == "shop-api"
    with _store(home, main) as store:
        store.remember("shop-api: the payments table is sharded by merchant")
    with _store(home, tree) as agent:
        assert [m["summary"] for m in agent.list()["items"]] == ["shop-api: the payments table is sharded by merchant"]


def test_a_worktree_with_a_relative_gitdir_and_a_bare_repository(tmp_path):
    main = _git_project(tmp_path, "app")
    tree = _fake_worktree(main, "app-feature")
    (tree / ".git").write_text("gitdir: ../app/.git/worktrees/app-feature\n")
    assert main_worktree(tree) == main
    bare = tmp_path / "proj" / ".bare"                               # the `.bare` layout: worktrees beside it
    (bare / "worktrees" / "main").mkdir(parents=True)
    (bare / "worktrees" / "main" / "commondir").write_text("../..\n")
    (tmp_path / "proj" / "main").mkdir()
    (tmp_path / "proj" / "main" / ".git").write_text(f"gitdir: {bare / 'worktrees' / 'main'}\n")
    assert namespace_for_dir(tmp_path / "proj" / "main") == "proj"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_real_git_worktree_and_submodule(tmp_path):
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}

    def git(cwd, *args):
        subprocess.run(["git", "-c", "protocol.file.allow=always", *args], cwd=cwd, env=env, check=True,
                       capture_output=True)

    for name in ("shop-api", "lib"):
        (tmp_path / name).mkdir()
        git(tmp_path / name, "init", "-q")
        git(tmp_path / name, "commit", "-q", "--allow-empty", "-m", "init")
    git(tmp_path / "shop-api", "worktree", "add", "-q", "../shop-api-agent2")
    git(tmp_path / "shop-api", "submodule", "add", "-q", str(tmp_path / "lib"), "vendor/lib")
    assert (tmp_path / "shop-api-agent2" / ".git").is_file()
    assert namespace_for_dir(tmp_path / "shop-api-agent2") == "shop-api"
    assert namespace_for_dir(tmp_path / "shop-api" / "vendor" / "lib") == "lib"   # a project of its own


@pytest.mark.parametrize("content", [b"", b"\xff\xfe\x00garbage", b"gitdir:", b"gitdir: /no/such/place/worktrees/x",
                                     b"gitdir: \x00\n", b"not a gitdir line", b"gitdir: " + b"a" * 10000])
def test_a_malformed_git_file_keeps_the_folder_its_own_project(tmp_path, content):
    tree = tmp_path / "odd-tree"
    tree.mkdir()
    (tree / ".git").write_bytes(content)
    assert main_worktree(tree) == tree and namespace_for_dir(tree) == "odd-tree"


def test_a_submodule_or_an_unreadable_git_file_keeps_the_folder_its_own_project(tmp_path, monkeypatch):
    main = _git_project(tmp_path, "super")
    (main / ".git" / "modules" / "sub").mkdir(parents=True)            # no commondir: not a worktree
    sub = main / "sub"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/sub\n")
    assert namespace_for_dir(sub) == "sub"
    tree = _fake_worktree(main, "super-wt")
    assert namespace_for_dir(tree) == "super"

    def refused(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(project_names, "open", refused, raising=False)   # as a chmod 000 file reads
    assert main_worktree(tree) == tree and namespace_for_dir(tree) == "super-wt"


# --- 4. backfill of vanished folders ----------------------------------------------------------------------

def test_backfilled_sessions_of_vanished_projects_do_not_share_a_namespace(home, tmp_path):
    gone = tmp_path / "gone"
    found = {cwd: backfill._namespace(str(gone / cwd), "", {}, {}) for cwd in ("🚀", "✨", "a/backend")}
    assert found["🚀"][1] and found["🚀"] != found["✨"]
    assert all(re.fullmatch("project" + HASHED, found[c][0]) for c in ("🚀", "✨"))
    assert found["a/backend"] == ("backend", True)
    live = _git_project(tmp_path, "live", "backend")                   # a live project takes a vanished one's name
    assert namespace_for_dir(live) == "backend"
    late = backfill._namespace(str(gone / "b" / "backend"), "", {}, {})    # a vanished one never takes a live one's
    assert re.fullmatch("backend" + HASHED, late[0]) and late[1]
    assert backfill._namespace(None, "-home-u-🚀", {}, {}) != backfill._namespace(None, "-home-v-✨", {}, {})


def test_the_backfill_dry_run_claims_no_name_and_the_real_run_does(home, tmp_path):
    # Found by a fresh-user run: `backfill --dry-run` wrote namespace records, though a dry run writes nothing.
    from helpers.histories import ClaudeSession, claude_path

    project, claude = _git_project(tmp_path, "work", "api"), tmp_path / "claude"
    ClaudeSession("s1", str(project), "2026-10-11").user("Outline the API docs").write(
        claude_path(claude, str(project), "s1"))
    with _store(home, tmp_path, namespace="elsewhere") as store:
        plan = store.backfill_plan(claude=str(claude), codex=str(tmp_path / "no-codex"))
        assert [row["namespace"] for row in plan["projects"]] == ["api"]
        assert not (home / "namespaces" / "api").exists()
        store.backfill(claude=str(claude), codex=str(tmp_path / "no-codex"))
    assert (home / "namespaces" / "api").read_bytes() == os.fsencode(str(project))
