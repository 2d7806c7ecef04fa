"""Where an export may be written: the CLI writes only the file it is named, the MCP tool only inside its folders.

Found by a helper run: `supermemory export /nonexistent/dir/x.jsonl` printed "Exported to …", exited 0 and
created /nonexistent/dir (as root, anywhere on disk): a typo in a folder name made folders instead of an error.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_mcp_server import call, make_config, ok

from supermemory.core import MemoryStore
from supermemory.embed import HashProvider
from supermemory.errors import InvalidInputError

ROOT = Path(__file__).resolve().parents[1]


def _cli(args: list[str], home: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "SUPERMEMORY_HOME": str(home), "SUPERMEMORY_EMBED_PROVIDER": "hash",
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "supermemory", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_cli_export_into_a_folder_that_does_not_exist_is_an_input_error_and_creates_no_folder(tmp_path):
    home = tmp_path / "home"
    assert _cli(["remember", "a fact to export"], home).returncode == 0
    target = tmp_path / "nonexistent" / "dir" / "x.jsonl"
    proc = _cli(["export", str(target)], home)
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.startswith(f"error: cannot write {target}: No such file or directory: the folder "
                                  f"{target.parent} does not exist"), proc.stderr
    assert "create it first" in proc.stderr and "Exported" not in proc.stdout
    assert not (tmp_path / "nonexistent").exists()
    assert _cli(["export", str(tmp_path / "x.jsonl")], home).returncode == 0   # an existing folder: written
    assert (tmp_path / "x.jsonl").is_file()


def test_store_export_under_a_file_or_a_missing_folder_is_refused_naming_the_folder(tmp_path, config):
    with MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj") as store:
        store.remember("a fact to export")
        with pytest.raises(InvalidInputError, match=r"the folder .*missing.* does not exist \(export creates no "):
            store.export(tmp_path / "missing" / "deeper" / "x.jsonl")
        (tmp_path / "plain").write_text("a file")
        with pytest.raises(InvalidInputError, match=r"Not a directory: .*plain is a file"):
            store.export(tmp_path / "plain" / "x.jsonl")
    assert not (tmp_path / "missing").exists()


def test_mcp_export_writes_into_new_subfolders_of_the_exports_folder_only(tmp_path):
    with MemoryStore(tmp_path / "m.db", config=make_config(tmp_path), embedder=HashProvider(),
                     namespace="proj") as store:
        store.remember("Exported fact", kind="fact")
        result = ok(store, "memory_export", {"path": "nested/deeper/backup.jsonl"})
        target = Path(result["structuredContent"]["path"])
        assert target == (tmp_path / "exports" / "nested" / "deeper" / "backup.jsonl").resolve()
        assert "Exported fact" in target.read_text(encoding="utf-8")
        outside = tmp_path / "elsewhere" / "new" / "x.jsonl"
        refused = call(store, "memory_export", {"path": str(outside)})["result"]
        assert refused["isError"] is True and "may only be written inside" in refused["content"][0]["text"]
    assert not (tmp_path / "elsewhere").exists()


def test_mcp_export_with_export_dir_set_writes_there_and_nowhere_else(tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    config = make_config(tmp_path / "home", export={"dir": str(allowed)})
    with MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj") as store:
        store.remember("Exported fact", kind="fact")
        assert ok(store, "memory_export", {"path": str(allowed / "a.jsonl")})
        assert (allowed / "a.jsonl").is_file()
        for path in (str(tmp_path / "other" / "a.jsonl"), "../../other/a.jsonl"):
            refused = call(store, "memory_export", {"path": path})["result"]
            assert refused["isError"] is True, path
    assert not (tmp_path / "other").exists()
