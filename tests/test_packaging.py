"""A real (non-editable) install carries every subpackage and data file: build the wheel, install it
apart from the checkout, and run `doctor`, remember and recall from it (the editable dev venv would
hide a missing package or word list)."""
from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The wheel built from this checkout, installed (no deps) into a folder of its own."""
    tmp = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp / "dist"), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-3000:]
    wheel = next((tmp / "dist").glob("supermemory-*.whl"))
    target = tmp / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def _run(site: Path, home: Path, *args: str, model_dir: Path | None = None) -> subprocess.CompletedProcess:
    """`python -S -m supermemory …` seeing only the installed copy plus the dependencies' site-packages
    (`-S`: no .pth files, so the editable finder of the dev venv cannot serve the checkout)."""
    deps = sysconfig.get_paths()["purelib"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY")}
    env.update(PYTHONPATH=os.pathsep.join([str(site), deps]), SUPERMEMORY_HOME=str(home),
               PYTHONDONTWRITEBYTECODE="1")
    if model_dir is not None:
        env["SUPERMEMORY_MODEL_DIR"] = str(model_dir)
    else:
        env["SUPERMEMORY_EMBED_PROVIDER"] = "hash"
    return subprocess.run([sys.executable, "-S", "-m", "supermemory", *args], cwd=home.parent, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_wheel_holds_every_module_and_data_file_of_the_checkout(installed):
    package = ROOT / "supermemory"
    wanted = sorted(str(p.relative_to(ROOT)) for p in package.rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    missing = [rel for rel in wanted if not (installed / rel).is_file()]
    assert missing == [], f"left out of the wheel: {missing}"
    assets = installed / "supermemory" / "ui" / "assets"
    assert sorted(p.name for p in assets.iterdir()) == ["app.css", "app.js", "graph.js", "index.html"]


def _inherit(disposition):
    """A preexec_fn giving the child this SIGINT disposition, whatever the test runner's own is (a
    runner started as `pytest &` by a shell without job control ignores SIGINT, and children inherit it)."""
    return lambda: signal.signal(signal.SIGINT, disposition)


def _stop(proc: subprocess.Popen, sig: signal.Signals = signal.SIGINT) -> tuple[str, str]:
    """Send `sig` and wait for the exit: a server still running 30 s later fails the test (it stops in
    well under a second)."""
    proc.send_signal(sig)
    try:
        return proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"`supermemory ui` was still running 30 s after {sig.name}\nstdout: {out[-1000:]}\n"
                    f"stderr: {err[-3000:]}")


@pytest.mark.parametrize("sigint", [signal.SIG_DFL, signal.SIG_IGN],
                         ids=["sigint-default", "sigint-inherited-ignored"])
def test_a_real_install_serves_the_ui_page_and_its_assets(installed, tmp_path, sigint):
    home = tmp_path / "home"
    assert _run(installed, home, "remember", "the page is served from the wheel", "--namespace", "global").returncode == 0
    deps = sysconfig.get_paths()["purelib"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY")}
    env.update(PYTHONPATH=os.pathsep.join([str(installed), deps]), SUPERMEMORY_HOME=str(home),
               SUPERMEMORY_EMBED_PROVIDER="hash", PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-S", "-m", "supermemory", "ui", "--no-open", "--port", "0"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_inherit(sigint))
    try:
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)", line)
        assert match, line + (proc.stderr.read() if proc.poll() is not None else "")
        port, token = int(match.group(1)), match.group(2)
        for path, expect in (("/", b"app.js?token="), ("/app.js", b"createTextNode"), ("/app.css", b".hit"),
                             ("/api/memories", b"served from the wheel")):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", f"{path}?token={token}")
            response = conn.getresponse()
            body = response.read()
            conn.close()
            assert response.status == 200 and expect in body, (path, response.status, body[:300])
        out, err = _stop(proc)
        assert proc.returncode == 0, err
        assert "stopped" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            pipe.close()


def test_a_real_install_runs_doctor_and_a_recall(installed, tmp_path):
    home = tmp_path / "home"
    doctor = _run(installed, home, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stdout[-2000:] + doctor.stderr[-2000:]
    assert json.loads(doctor.stdout)["ok"] is True
    stored = _run(installed, home, "remember", "the release branch is cut every second Tuesday",
                  "--namespace", "global")
    assert stored.returncode == 0, stored.stderr
    found = _run(installed, home, "recall", "when is the release branch cut", "--json")
    assert found.returncode == 0, found.stderr
    assert [r["id"] for r in json.loads(found.stdout)["results"]] == [stored.stdout.strip()]
    origin = subprocess.run([sys.executable, "-S", "-c", "import supermemory.core; print(supermemory.core.__file__)"],
                            cwd=tmp_path, env={"PYTHONPATH": str(installed)}, capture_output=True, text=True)
    assert origin.stdout.strip() == str(installed / "supermemory" / "core.py"), origin


@pytest.mark.model
def test_a_real_install_recalls_with_the_real_model(installed, tmp_path, model_dir):
    home = tmp_path / "home"
    stored = _run(installed, home, "remember", "staging runs Postgres 16 on port 5433", "--namespace", "global",
                  model_dir=model_dir)
    assert stored.returncode == 0, stored.stderr
    found = _run(installed, home, "recall", "which port does the staging database use", "--json",
                 model_dir=model_dir)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["id"] == stored.stdout.strip()
