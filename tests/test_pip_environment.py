"""fu25 D10: installing left `~/.rustup/settings.toml` in a fresh home: pip's user agent runs `rustc --version`, and a
rustup proxy on PATH creates its home to answer. pip now runs with a throwaway rustup home when the user has none."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from supermemory.deps import pip_environment

ROOT = Path(__file__).resolve().parents[1]
# A rustup proxy: answering `rustc --version`, it creates its home (RUSTUP_HOME, else ~/.rustup).
FAKE_RUSTC = """#!/bin/sh
home="${RUSTUP_HOME:-$HOME/.rustup}"
mkdir -p "$home" && echo 'version = "12"' > "$home/settings.toml"
echo "rustc 1.80.0"
"""
# The venv's python as pip: asks rustc for its version, as pip's user agent does.
FAKE_PYTHON = """#!/bin/sh
[ "$1 $2 $3" = "-m pip install" ] || exit 9
rustc --version > /dev/null
"""


def tool(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.mark.skipif(os.name == "nt", reason="shell scripts stand in for rustc and python")
def test_pip_gets_a_scratch_rustup_home_only_when_the_user_has_none(tmp_path, monkeypatch):
    bin_dir, home = tmp_path / "bin", tmp_path / "home"
    bin_dir.mkdir(), home.mkdir()
    tool(bin_dir, "rustc", FAKE_RUSTC)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("RUSTUP_HOME", raising=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert pip_environment(str(tmp_path / "scratch"))["RUSTUP_HOME"] == str(tmp_path / "scratch" / "rustup")
    (home / ".rustup").mkdir()
    assert "RUSTUP_HOME" not in pip_environment(str(tmp_path / "scratch"))      # the user's own toolchains
    monkeypatch.setenv("RUSTUP_HOME", "/opt/rustup")
    assert pip_environment(str(tmp_path / "scratch"))["RUSTUP_HOME"] == "/opt/rustup"
    monkeypatch.delenv("RUSTUP_HOME")
    (home / ".rustup").rmdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert "RUSTUP_HOME" not in pip_environment(str(tmp_path / "scratch"))      # no rustc: nothing to do


@pytest.mark.skipif(os.name == "nt", reason="shell scripts stand in for rustc and python")
def test_install_leaves_no_rustup_home_behind(tmp_path):
    bin_dir, home, data = tmp_path / "bin", tmp_path / "home", tmp_path / "data"
    bin_dir.mkdir(), home.mkdir()
    tool(bin_dir, "rustc", FAKE_RUSTC)
    python = tool(tmp_path, "python", FAKE_PYTHON)
    env = {k: v for k, v in os.environ.items() if k != "RUSTUP_HOME"}
    env.update(HOME=str(home), SUPERMEMORY_HOME=str(data), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    res = subprocess.run([sys.executable, str(ROOT / "install.py"), "--home", str(home), "--python", str(python),
                          "--no-model", "--no-selfcheck", "--no-backfill", "--no-launcher", "--no-instructions",
                          "--claude-only"], env=env, capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not (home / ".rustup").exists()


@pytest.mark.skipif(os.name == "nt", reason="a shell script stands in for rustc")
def test_creating_the_venv_leaves_no_rustup_home_behind(tmp_path):
    """ensurepip, run when the venv is made, is pip too: its probe made ~/.rustup before the install's own pip ran."""
    bin_dir, home, data = tmp_path / "bin", tmp_path / "home", tmp_path / "data"
    bin_dir.mkdir(), home.mkdir()
    tool(bin_dir, "rustc", FAKE_RUSTC)
    env = {k: v for k, v in os.environ.items() if k != "RUSTUP_HOME"}
    env.update(HOME=str(home), SUPERMEMORY_HOME=str(data), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    res = subprocess.run([sys.executable, str(ROOT / "install.py"), "--home", str(home), "--no-pip", "--no-model",
                          "--no-selfcheck", "--no-backfill", "--no-launcher", "--no-instructions", "--claude-only"],
                         env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert (data / "venv").is_dir(), res.stdout + res.stderr
    assert not (home / ".rustup").exists()

