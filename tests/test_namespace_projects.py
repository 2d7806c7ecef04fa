"""A derived namespace belongs to one project: a git worktree shares its main repository's.

Found by a fresh-user run: a git worktree (`git worktree add ../shop-api-agent2`, whose `.git` is a file
naming `shop-api/.git/worktrees/shop-api-agent2`) got a namespace of its own, so agents working in worktrees saw
none of the project's memories.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from supermemory import config as config_module
from supermemory.config import load_config, main_worktree, namespace_for_dir
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

    monkeypatch.setattr(config_module, "open", refused, raising=False)   # as a chmod 000 file reads
    assert main_worktree(tree) == tree and namespace_for_dir(tree) == "super-wt"
