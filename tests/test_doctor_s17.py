"""`supermemory doctor` with a data dir that cannot hold anything blames the data dir, not the model.

Found in use: `SUPERMEMORY_HOME=<a file> supermemory doctor` named the data dir PROBLEM and also told the user to
run `supermemory model install` on the embedder line, which fails the same way (the model's folder is inside the
data dir): the model was not the problem.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers.common import subprocess_env
from supermemory import doctor
from supermemory.config import Config


def _onnx_settings(*, fallback: bool = True) -> dict:
    import copy

    from supermemory.settings import DEFAULTS

    settings = copy.deepcopy(DEFAULTS)
    settings["embedder"]["provider"] = "onnx"
    settings["embedder"]["allow_hash_fallback"] = fallback
    return settings


def _embedder_line(text: str) -> str:
    [line] = [line for line in text.splitlines() if line.startswith("embedder ")]
    return line


def test_a_data_dir_that_is_a_file_does_not_advise_a_model_install(tmp_path):
    home = tmp_path / "somefile"
    home.write_text("")
    proc = subprocess.run([sys.executable, "-m", "supermemory", "doctor"], cwd=tmp_path,
                          env=subprocess_env(home, SUPERMEMORY_EMBED_PROVIDER="onnx"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout
    assert "model install" not in proc.stdout, proc.stdout
    line = _embedder_line(proc.stdout)
    assert f"the data dir {home} cannot hold it (see PROBLEM below)" in line, line
    assert f"PROBLEM: the data dir {home} is a file, not a folder" in proc.stdout
    assert proc.stdout.rstrip().endswith("NOT OK")


@pytest.mark.parametrize("fallback", [True, False])
def test_the_data_dir_is_named_as_the_cause_once_and_doctor_stays_not_ok(tmp_path, fallback):
    home = tmp_path / "somefile"
    home.write_text("")
    report = doctor.run_checks(Config(home=home, settings=_onnx_settings(fallback=fallback)))
    text = doctor.render(report)
    assert report["ok"] is False and report["data_dir_ok"] is False
    assert report["embedder"]["cause"] == "data_dir" and report["embedder"]["status"] == "missing"
    assert "model install" not in text and not any("model install" in w for w in report["warnings"] + report["problems"])
    assert [p for p in report["problems"] if "data dir" in p] == [report["problems"][-1]]
    assert text.count("PROBLEM:") == len(report["problems"]) and text.rstrip().endswith("NOT OK")


def test_a_data_dir_this_user_cannot_write_does_not_advise_a_model_install(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    report = doctor.run_checks(Config(home=home, settings=_onnx_settings()))
    assert report["ok"] is False and "model install" not in doctor.render(report)
    [problem] = report["problems"]
    assert problem.startswith(f"the data dir {home} is not writable")
    assert "(see PROBLEM below)" in _embedder_line(doctor.render(report))


def test_a_missing_model_in_a_usable_data_dir_still_advises_the_install(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    report = doctor.run_checks(Config(home=home, settings=_onnx_settings()))
    assert "cause" not in report["embedder"] and report["data_dir_ok"] is True
    assert "run `supermemory model install`" in _embedder_line(doctor.render(report))


def test_a_model_dir_variable_is_still_named_when_the_data_dir_is_a_file(tmp_path):
    home = tmp_path / "somefile"
    home.write_text("")
    folder = tmp_path / "nonexistent"
    report = doctor.run_checks(Config(home=home, settings=_onnx_settings(), model_dir_override=Path(folder)))
    assert "cause" not in report["embedder"] and report["ok"] is False
    assert f"SUPERMEMORY_MODEL_DIR={folder} does not exist" in _embedder_line(doctor.render(report))
