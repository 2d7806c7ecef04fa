"""`supermemory doctor`: not ok when a runtime dependency cannot be imported or the config file is
bad; one clear line per fact (no `schema None`, the missing model said once with its fix)."""
from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.common import subprocess_env
from supermemory import doctor
from supermemory.config import Config
from supermemory.core import MemoryStore
from supermemory.embed import HashProvider

BLOCKER = """
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name == {name!r} or name.startswith({name!r} + "."):
            raise ImportError("blocked by the test: " + name)
        return None

sys.meta_path.insert(0, Block())
from supermemory.cli import main
sys.exit(main(sys.argv[1:]))
"""


def doctor_proc(home: Path, cwd: Path, *args: str, block: str | None = None, **env: str):
    command = [sys.executable, "-c", BLOCKER.format(name=block)] if block else [sys.executable, "-m", "supermemory"]
    return subprocess.run([*command, "doctor", *args], cwd=cwd, env=subprocess_env(home, **env),
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def home(tmp_path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


# --- dependencies ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["numpy", "onnxruntime", "tokenizers", "sqlite_vec", "Stemmer"])
def test_doctor_is_not_ok_when_a_runtime_dependency_cannot_be_imported(home, monkeypatch, name):
    real = importlib.import_module

    def refuse(module, *args, **kwargs):
        if module == name:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(module, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", refuse)
    report = doctor.run_checks(Config(home=home))
    assert report["ok"] is False
    assert report["dependencies"][name]["ok"] is False
    assert [dep for dep, state in report["dependencies"].items() if not state["ok"]] == [name]
    (problem,) = [p for p in report["problems"] if p.startswith(f"{name} cannot be imported")]
    assert f"pip install {doctor.DEPENDENCIES[name]}`" in problem
    assert f"{name} MISSING" in doctor.render(report)
    if name in ("onnxruntime", "tokenizers"):  # the onnx embedder cannot run: said on its line too
        assert report["embedder"]["blocked_by"] == [name]
        assert f"cannot run without {name}" in doctor.render(report)


def test_doctor_exits_one_when_numpy_is_blocked_in_a_fresh_process(home, tmp_path):
    proc = doctor_proc(home, tmp_path, "--json", block="numpy")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is False and report["dependencies"]["numpy"]["ok"] is False
    assert any(p.startswith("numpy cannot be imported") and "blocked by the test" in p for p in report["problems"])
    text = doctor_proc(home, tmp_path, block="numpy")
    assert text.returncode == 1 and text.stdout.rstrip().endswith("NOT OK")
    assert "PROBLEM: numpy cannot be imported" in text.stdout


def test_doctor_lists_the_dependency_versions_when_all_import(home):
    report = doctor.run_checks(Config(home=home))
    import numpy

    assert report["dependencies"]["numpy"] == {"ok": True, "version": numpy.__version__, "error": None}
    assert all(dep["ok"] for dep in report["dependencies"].values())


# --- the config file ----------------------------------------------------------------------------------

def test_doctor_reports_a_bad_config_file_as_a_problem(home, tmp_path):
    path = home / "config.json"
    path.write_text(json.dumps({"recall": {"default_limit": "abc"}, "rankng": {}}))
    proc = doctor_proc(home, tmp_path, "--json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is False
    assert report["config"]["ok"] is False and report["config"]["path"] == str(path)
    assert f'config file {path}: recall.default_limit = "abc": expected an integer >= 1 (default 8)' \
        in report["problems"]
    assert any("unknown setting 'rankng'; did you mean ranking?" in p for p in report["problems"])
    text = doctor_proc(home, tmp_path).stdout
    assert f'PROBLEM: config file {path}: recall.default_limit = "abc"' in text
    assert "(has problems: see PROBLEM below)" in text


def test_doctor_reports_a_config_file_that_is_not_json(home, tmp_path):
    (home / "config.json").write_text("{broken")
    report = json.loads(doctor_proc(home, tmp_path, "--json").stdout)
    assert report["ok"] is False and any("is not valid JSON" in p for p in report["problems"])


def test_a_valid_config_file_is_ok(home, tmp_path):
    (home / "config.json").write_text(json.dumps({"recall": {"default_limit": 5}}))
    proc = doctor_proc(home, tmp_path, "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, report["problems"]
    assert report["config"] == {"path": str(home / "config.json"), "exists": True, "ok": True, "problems": []}


# --- what the text says ---------------------------------------------------------------------------------

def test_doctor_says_no_database_yet_instead_of_schema_none(home):
    report = doctor.run_checks(Config(home=home, settings=_hash_settings()))
    assert report["db_exists"] is False and report["schema_version"] is None  # JSON unchanged
    text = doctor.render(report)
    assert "schema None" not in text
    assert "(schema: no database yet, created on first write)" in text


def test_doctor_with_a_database_prints_its_schema_and_count(home):
    from supermemory.store import db as dbm

    config = Config(home=home, settings=_hash_settings())
    with MemoryStore(config.db_path, config=config, embedder=HashProvider(), namespace="proj") as store:
        store.remember("Deploys go through blue-green", kind="decision", create_namespace=True)
    report = doctor.run_checks(config)
    assert report["db_exists"] is True and report["schema_version"] == len(dbm.MIGRATIONS)
    assert f"(schema {len(dbm.MIGRATIONS)}, 1 memories in 1 namespace)" in doctor.render(report)   # fu38 D10


def test_doctor_is_not_ok_when_the_database_cannot_be_written(home, monkeypatch):
    # Found by a fresh-user run: with memory.db read-only (chmod 444, a read-only mount) remember, update and
    # session capture all failed with "attempt to write a readonly database" while doctor said "ok".
    import os

    config = Config(home=home, settings=_hash_settings())
    with MemoryStore(config.db_path, config=config, embedder=HashProvider(), namespace="proj") as store:
        store.remember("Deploys go through blue-green", kind="decision", create_namespace=True)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if str(path) == str(config.db_path)
                        and mode & os.W_OK else real_access(path, mode, **kw))
    report = doctor.run_checks(config)
    assert report["ok"] is False and report["memories"] == 1
    assert f"the database {config.db_path} is read-only: memories can be read, but nothing can be stored" \
        in report["problems"][0]
    assert "chmod u+w" in report["problems"][0]


class PinnedOnnx(HashProvider):
    """Pins a database the way the bge-small model does, without the model."""
    provider_id, model_id, checksum = "onnx", "bge-small-en-v1.5", "0123456789abcdef"


def test_doctor_is_not_ok_when_the_configured_embedder_is_not_the_pinned_one(home):
    # Found by a fresh-user run: after `config --set embedder.provider=hash` on a database pinned to onnx/bge-small
    # every `remember` failed with "pinned to embedder onnx/…" while doctor said "ok" (only health said mismatch).
    config = Config(home=home, settings=_hash_settings())
    with MemoryStore(config.db_path, config=config, embedder=PinnedOnnx(), namespace="proj") as store:
        store.remember("Deploys go through blue-green", kind="decision", create_namespace=True)
    report = doctor.run_checks(config)
    assert report["ok"] is False and report["model_pin_status"] == "mismatch"
    [problem] = report["problems"]
    assert "pinned to embedder onnx/bge-small-en-v1.5" in problem and "configured one is hash/feature-hash" in problem
    assert "`supermemory config --set embedder.provider=onnx`" in problem and "`supermemory reindex`" in problem
    assert doctor.render(report).endswith(f"PROBLEM: {problem}\nNOT OK")


def test_doctor_names_a_missing_model_once_with_the_fix(home):
    report = doctor.run_checks(Config(home=home))  # onnx, model not installed, hash fallback allowed
    text = doctor.render(report)
    fix_lines = [line for line in text.splitlines() if "supermemory model install" in line]
    assert len(fix_lines) == 1, text
    assert fix_lines[0].startswith("embedder      none (lexical-only): embedding model not installed")
    assert "until then recall is lexical-only" in fix_lines[0]
    assert "NOT ok" not in text and "WARNING" not in text
    assert text.rstrip().endswith("\nok")
    # the JSON still carries it as a warning, with the same fields as before
    assert report["embedder"]["checksum_ok"] is False and report["embedder"]["status"] == "missing"
    assert any("supermemory model install" in w and "missing" in w for w in report["warnings"])


def test_doctor_json_keeps_its_fields(home):
    report = doctor.run_checks(Config(home=home))
    assert {"python", "executable", "data_dir", "db_path", "driver", "sqlite_version", "fts5", "vector_index",
            "embedder", "memories", "schema_version", "namespace", "problems", "warnings", "ok"} <= set(report)
    assert {"provider", "model", "model_dir", "source", "checksum_ok", "files", "active"} <= set(report["embedder"])


def _hash_settings() -> dict:
    import copy

    from supermemory.settings import DEFAULTS

    settings = copy.deepcopy(DEFAULTS)
    settings["embedder"]["provider"] = "hash"
    return settings


def test_a_model_dir_variable_naming_no_model_is_named_as_the_cause_not_model_install(home, tmp_path):
    """With SUPERMEMORY_MODEL_DIR=/nonexistent doctor said "run `supermemory model install`", which refuses that
    folder; the fix now names the variable (unset it or point it at a model) and what unsetting it gives."""
    from supermemory.embed import get_provider
    from supermemory.errors import EmbeddingUnavailableError

    for folder, held in ((tmp_path / "nonexistent", "does not exist"), (tmp_path, "holds no model (model.onnx, tokenizer.json)")):
        config = Config(home=home, model_dir_override=folder)
        report = doctor.run_checks(config)
        [line] = [line for line in doctor.render(report).splitlines() if "SUPERMEMORY_MODEL_DIR" in line]
        assert f"SUPERMEMORY_MODEL_DIR={folder} {held}: unset it to use {config.home / 'models'}" in line, line
        assert "or point it at a folder holding" in line and "then run `supermemory model install`" in line, line
        assert line.count("model install") == 1 and report["embedder"]["status"] == "missing"
        with pytest.raises(EmbeddingUnavailableError, match=f"SUPERMEMORY_MODEL_DIR={folder} holds no embedding"):
            get_provider(config)
    assert "run `supermemory model install`;" in doctor.render(doctor.run_checks(Config(home=home)))


# --- whether anything can be stored at all ----------------------------------------------------------------

def test_a_data_dir_that_is_a_file_is_not_ok_and_exits_one(tmp_path):
    """`SUPERMEMORY_HOME=<a file> doctor` said "created on first write … ok" (exit 0) while every write failed
    with "cannot create the database … File exists"; it now names the file and the fix, NOT OK, exit 1."""
    home = tmp_path / "notadir"
    home.write_text("")
    proc = doctor_proc(home, tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert f"PROBLEM: the data dir {home} is a file, not a folder: nothing can be stored" in proc.stdout
    assert "(no database yet, and it cannot be created: see PROBLEM below)" in proc.stdout
    assert "created on first write" not in proc.stdout and proc.stdout.rstrip().endswith("NOT OK")
    nested = doctor.run_checks(Config(home=home / "sub", settings=_hash_settings()))
    assert nested["ok"] is False and nested["data_dir_ok"] is False
    assert f"the data dir {home / 'sub'} cannot be created: {home} is a file" in nested["problems"][0]


def test_a_data_dir_this_user_cannot_write_is_not_ok(home, tmp_path, monkeypatch):
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    report = doctor.run_checks(Config(home=home, settings=_hash_settings()))
    assert report["ok"] is False and report["problems"] == [
        f"the data dir {home} is not writable (Permission denied): nothing can be stored; fix: `chmod u+w {home}` "
        "or point SUPERMEMORY_HOME at a folder you can write"]
    missing = tmp_path / "not-yet" / "data"
    [problem] = doctor.run_checks(Config(home=missing, settings=_hash_settings()))["problems"]
    assert problem.startswith(f"the data dir {missing} cannot be created in {tmp_path} (Permission denied)")


def test_doctor_checks_a_data_dir_to_come_without_creating_anything(tmp_path):
    before = sorted(tmp_path.iterdir())
    for home in (tmp_path / "later" / "data", tmp_path):   # one to be created, one that exists
        report = doctor.run_checks(Config(home=home, settings=_hash_settings()))
        assert report["ok"] is True and report["data_dir_ok"] is True, report["problems"]
        assert "(schema: no database yet, created on first write)" in doctor.render(report)
    assert sorted(tmp_path.iterdir()) == before   # the probes are gone, no data dir was made


def test_a_model_dir_variable_naming_no_model_is_not_ok_and_exits_one(home, tmp_path):
    """With SUPERMEMORY_MODEL_DIR=/nonexistent doctor printed the problem and its fix, then `ok` (exit 0): a
    variable the user must unset or correct is not ok; a model simply not installed yet stays a warning."""
    proc = doctor_proc(home, tmp_path, SUPERMEMORY_EMBED_PROVIDER="onnx",
                       SUPERMEMORY_MODEL_DIR=str(tmp_path / "nonexistent"))
    assert proc.returncode == 1 and proc.stdout.rstrip().endswith("NOT OK"), proc.stdout
    assert proc.stdout.count("SUPERMEMORY_MODEL_DIR=") == 1
    fresh = doctor_proc(home, tmp_path, SUPERMEMORY_EMBED_PROVIDER="onnx")
    assert fresh.returncode == 0 and "embedding model not installed" in fresh.stdout, fresh.stdout


def test_a_damaged_model_is_not_ok(home):
    model_dir = home / "models" / "bge-small-en-v1.5"
    model_dir.mkdir(parents=True)
    for name in ("model.onnx", "tokenizer.json"):
        (model_dir / name).write_bytes(b"not the model")
    report = doctor.run_checks(Config(home=home))
    assert report["embedder"]["status"] == "damaged" and report["ok"] is False
    assert any("supermemory model install" in p for p in report["problems"])
