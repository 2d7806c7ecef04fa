"""`python3 run.py test` is the one documented test command: it makes its own venv, and says
exactly what to install when python3's venv module is missing."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.common import run_slow

ROOT = Path(__file__).resolve().parents[1]
TEST_COMMAND = "python3 run.py test"


def test_both_readmes_and_ci_use_the_one_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^python3 run\.py test$", ci, re.M), "`.ci/run` must call the README's test command exactly"
    for name in ("README.md", "README.zh-CN.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert TEST_COMMAND in text, name
        assert "python3-venv" in text, f"{name} must say Debian needs python3-venv"


def test_documented_commands_use_python3_never_a_bare_python():
    for name in ("README.md", "README.zh-CN.md", "AGENTS.md"):
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            assert not re.search(r"(^|[`\s(])python (-m|run\.py|install\.py)", line), f"{name}: {line}"


def _blocking(tmp_path: Path, module: str) -> Path:
    """A folder for PYTHONPATH whose sitecustomize makes `module` unimportable (as if not installed)."""
    blocker = tmp_path / "site"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nclass _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r}:\n            raise ImportError('No module named {module}')\n"
        "sys.meta_path.insert(0, _Block())\n", encoding="utf-8")
    return blocker


def test_a_python_without_venv_gets_the_exact_debian_package_to_install(tmp_path):
    """Debian's python3 without python3-venv lacks ensurepip: simulate that and read the advice."""
    blocker = _blocking(tmp_path, "ensurepip")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(ROOT / "run.py", checkout / "run.py")
    shutil.copy(ROOT / "pyproject.toml", checkout / "pyproject.toml")
    env = dict(os.environ, PYTHONPATH=str(blocker))
    done = subprocess.run([sys.executable, str(checkout / "run.py"), "test"], env=env, capture_output=True,
                          text=True, timeout=120)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert done.returncode == 1
    assert f"sudo apt-get install python{version}-venv" in done.stderr, done.stderr
    assert not (checkout / ".venv").exists()


def test_a_cli_command_in_a_python_without_the_dependencies_says_how_to_get_them(tmp_path):
    """A new user's first `python3 run.py remember …` before any setup: a clear word, never a traceback."""
    blocker = _blocking(tmp_path, "Stemmer")
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "supermemory", checkout / "supermemory", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "run.py", checkout / "run.py")
    env = dict(os.environ, PYTHONPATH=str(blocker), HOME=str(tmp_path / "home"),
               SUPERMEMORY_HOME=str(tmp_path / "smhome"))
    done = subprocess.run([sys.executable, str(checkout / "run.py"), "remember", "CI runs on Jenkins"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "PyStemmer" in done.stderr and "python3 run.py test" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "smhome").exists()     # nothing half-written


def test_python_m_supermemory_in_a_python_without_the_dependencies_says_how_to_get_them(tmp_path):
    """Found by a fresh-user run: `python3 -m supermemory remember …` in the checkout (the system Python, no
    PyStemmer) ran until the tokenizer's import and ended in a traceback."""
    blocker = _blocking(tmp_path, "Stemmer")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), str(ROOT)]), HOME=str(tmp_path / "home"),
               SUPERMEMORY_HOME=str(tmp_path / "smhome"))
    done = subprocess.run([sys.executable, "-m", "supermemory", "remember", "CI runs on Jenkins"], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1
    assert "PyStemmer" in done.stderr and "python3 run.py test" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "smhome").exists()     # nothing half-written


def test_a_cli_command_runs_in_the_checkout_venv_that_run_py_test_made():
    venv_python = ROOT / ".venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not (ROOT / ".venv" / ".supermemory-dev-install").exists() or not venv_python.exists():
        pytest.skip("no .venv made by `python3 run.py test` in this checkout")
    outside = shutil.which("python3")
    if outside is None or Path(outside).resolve() == venv_python.resolve():
        pytest.skip("no python3 outside the venv")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".venv" not in p)
    done = subprocess.run([outside, str(ROOT / "run.py"), "-h"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "usage: supermemory" in done.stdout


@pytest.mark.slow
def test_run_py_test_from_a_fresh_copy_builds_its_venv_and_runs_pytest(tmp_path, request):
    """The whole path a new user takes (pip from the package index: slow, so a heavy variant)."""
    if not run_slow(request.config):
        pytest.skip("heavy variant: run with -m slow or SUPERMEMORY_SLOW_TESTS=1")
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    copy = tmp_path / "clone"
    for name in files:
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTUAL_ENV")}
    done = subprocess.run(["python3", "run.py", "test", "tests/test_docs.py"], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout), done.stdout[-500:]
    assert (copy / ".venv" / "bin" / "python").exists()


def test_the_whole_suite_is_spread_over_the_cores_and_given_arguments_run_as_given(monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_py", ROOT / "run.py")
    run_py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_py)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert run_py._workers() == ["-n", "2"]
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert run_py._workers() == ["-n", "4"]
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert run_py._workers() == []
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^dev = \[.*"pytest-xdist', pyproject, re.M), "the dev extra must bring pytest-xdist"
