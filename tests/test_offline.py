"""Nothing leaves the machine and nothing is written outside the data dir, with the real model:
onnxruntime's telemetry (a device id and an event queue under ~/.cache, lookups of an events
host from C++, which a Python `socket` patch never sees) stays off in every process."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.common import McpClient, run_slow, subprocess_env

pytestmark = pytest.mark.model

IDLE_SECONDS = 60


def _cli(home: Path, data: Path, model_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = subprocess_env(data, HOME=str(home), SUPERMEMORY_EMBED_PROVIDER="onnx", SUPERMEMORY_MODEL_DIR=str(model_dir))
    env.pop("ORT_DISABLE_TELEMETRY", None)     # the product must set it itself
    return subprocess.run([sys.executable, "-m", "supermemory", *args], env=env, cwd=home, capture_output=True,
                          text=True, timeout=120)


def test_importing_supermemory_turns_onnxruntime_telemetry_off_before_anything_imports_it():
    code = "import os; os.environ.pop('ORT_DISABLE_TELEMETRY', None); import supermemory; " \
           "print(os.environ.get('ORT_DISABLE_TELEMETRY'))"
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "1", out.stderr


def test_remember_and_recall_with_the_real_model_write_nothing_under_home_outside_the_data_dir(tmp_path, model_dir):
    home = tmp_path / "home"
    data = home / ".supermemory"
    home.mkdir()
    wrote = _cli(home, data, model_dir, "remember", "the staging database is Postgres 16", "--namespace", "global")
    assert wrote.returncode == 0, wrote.stderr
    found = _cli(home, data, model_dir, "recall", "which postgres version runs staging", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"], found.stdout
    outside = sorted(str(p.relative_to(home)) for p in home.rglob("*")
                     if p.is_file() and data not in p.parents)
    assert outside == [], f"files written under HOME outside the data dir: {outside}"


def _network_calls(trace: str) -> list[str]:
    """strace lines that reach outside the process: IPv4/IPv6 connects and DNS (port 53) sends."""
    calls = []
    for line in trace.splitlines():
        if re.search(r"\b(connect|sendto|sendmsg)\(", line) and (
                "AF_INET" in line or "htons(53)" in line or "/nscd/" in line or "resolve" in line):
            calls.append(line.strip())
    return calls


def test_a_server_that_loads_the_model_and_idles_makes_no_network_call(tmp_path, model_dir, request):
    strace = shutil.which("strace")
    if strace is None:
        if os.environ.get("CI"):
            pytest.fail("strace is not installed; .ci/run installs it (apt-get install strace)")
        pytest.skip("strace not installed")
    idle = IDLE_SECONDS if run_slow(request.config) or os.environ.get("CI") else 20
    trace_file = tmp_path / "strace.txt"
    home = tmp_path / "home"
    home.mkdir()
    client = McpClient(home / ".supermemory", home, prefix=(strace, "-f", "-e", "trace=connect,sendto,sendmsg",
                                                            "-o", str(trace_file)),
                       drop_env=("ORT_DISABLE_TELEMETRY",), HOME=str(home), SUPERMEMORY_EMBED_PROVIDER="onnx",
                       SUPERMEMORY_MODEL_DIR=str(model_dir))
    try:
        client.initialize()
        stored = client.tool("memory_remember", {"content": "the build cache lives in /var/cache/ci"})
        assert stored["isError"] is False
        assert client.tool("memory_recall", {"query": "where is the build cache"})["structuredContent"]["results"]
        try:
            client.proc.wait(timeout=idle)     # the idle period under test: the server must still be running
        except subprocess.TimeoutExpired:
            pass
        assert client.proc.poll() is None, client.stderr_text()
        code, err = client.close()
    finally:
        client.kill()
    assert code == 0, err
    calls = _network_calls(trace_file.read_text(errors="replace"))
    assert calls == [], f"{len(calls)} network calls, e.g. {calls[:3]}"


def test_the_network_check_sees_a_dns_lookup_made_outside_python_sockets(tmp_path):
    """The strace check itself can fail: a resolver lookup from C (getaddrinfo) shows up."""
    strace = shutil.which("strace")
    if strace is None:
        if os.environ.get("CI"):
            pytest.fail("strace is not installed; .ci/run installs it (apt-get install strace)")
        pytest.skip("strace not installed")
    trace_file = tmp_path / "strace.txt"
    code = "import socket\ntry:\n    socket.getaddrinfo('telemetry.invalid', 443)\nexcept OSError:\n    pass\n"
    subprocess.run([strace, "-f", "-e", "trace=connect,sendto,sendmsg", "-o", str(trace_file), sys.executable,
                    "-c", code], capture_output=True, timeout=60)
    assert _network_calls(trace_file.read_text(errors="replace")), trace_file.read_text()[:2000]
