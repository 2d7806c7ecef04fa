"""A fresh user's run of the CLI and the Python API: the data dir they share, backfill's plan against its run, data safety."""
from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import FakeEmbedder
from supermemory.cli import main
from supermemory.config import data_dir, namespace_for_dir
from supermemory.core import MemoryStore


# --- the data dir: MemoryStore() opens what the CLI opens ----------------------------------------------

def test_memory_store_without_a_path_opens_the_clis_database_under_supermemory_home(tmp_path, monkeypatch, capsys):
    home = tmp_path / "elsewhere"
    monkeypatch.setenv("SUPERMEMORY_HOME", str(home))
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["remember", "The staging proxy listens on port 8443", "--namespace", "global"]) == 0
    written = capsys.readouterr().out.strip()
    with MemoryStore(embedder=FakeEmbedder()) as store:
        assert Path(store.path) == home / "memory.db" == data_dir() / "memory.db"
        assert store.get(written, namespace="*")["memories"][0]["body"] == "The staging proxy listens on port 8443"
    assert not (work / "memory.db").exists()          # never a database in the working directory
    assert os.stat(work).st_mode & 0o077               # and the working directory's mode is left alone


def test_memory_store_without_a_path_reads_the_config_file_the_cli_reads(tmp_path, monkeypatch):
    home = tmp_path / "elsewhere"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"recall": {"default_limit": 3}}))
    monkeypatch.setenv("SUPERMEMORY_HOME", str(home))
    with MemoryStore(embedder=FakeEmbedder()) as store:
        assert store.config.get("recall.default_limit") == 3 and store.config.home == home


def test_a_project_folder_whose_parent_cannot_be_searched_for_git_is_its_own_project(tmp_path, monkeypatch):
    def denied(self, *args, **kwargs):   # stat() of <parent>/.git refused (a folder the user may not enter)
        if self.name == ".git":
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)

    real_stat = Path.stat
    project = tmp_path / "Shop App"
    project.mkdir()
    monkeypatch.setattr(Path, "stat", denied)
    assert namespace_for_dir(project) == "shop-app"
