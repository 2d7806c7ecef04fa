"""Shared fixtures: an isolated SUPERMEMORY_HOME per test, a fast deterministic embedder,
and the real bge-small model for the tests marked `model`."""
from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path

import pytest

from supermemory.config import Config
from supermemory.core import MemoryStore
from supermemory.embed import HashProvider

# Captured before the autouse fixture points SUPERMEMORY_HOME elsewhere.
_REAL_MODEL_DIR = os.environ.get("SUPERMEMORY_TEST_MODEL_DIR") or os.environ.get("SUPERMEMORY_MODEL_DIR") or str(
    Path(os.environ.get("SUPERMEMORY_HOME") or Path.home() / ".supermemory") / "models" / "bge-small-en-v1.5")


class FakeEmbedder(HashProvider):
    """Deterministic, model-free vectors (feature hashing) for fast unit tests."""

    provider_id = "fake"
    model_id = "fake-hash"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    home = tmp_path / "smhome"
    monkeypatch.setenv("SUPERMEMORY_HOME", str(home))
    for var in ("SUPERMEMORY_NAMESPACE", "SUPERMEMORY_PROJECT_CWD", "CLAUDE_PROJECT_DIR", "SUPERMEMORY_MODEL_DIR",
                "SUPERMEMORY_EMBED_PROVIDER", "CODEX_HOME", "SUPERMEMORY_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Outbound connections to anything but loopback fail: nothing phones home."""
    real_connect = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and not (host.startswith("127.") or host in ("localhost", "::1")) \
                and self.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(f"network access blocked in tests: {address}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def config(tmp_path) -> Config:
    return Config(home=tmp_path / "smhome")


@pytest.fixture
def store(db_path, config):
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj")
    yield s
    s.close()


def real_model_dir() -> Path | None:
    path = Path(_REAL_MODEL_DIR)
    return path if (path / "model.onnx").is_file() and (path / "tokenizer.json").is_file() else None


@pytest.fixture(scope="session")
def model_dir() -> Path:
    path = real_model_dir()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("the bge-small model is not provisioned; .ci/run must run `supermemory model install`")
        pytest.skip("bge-small model not installed (run `supermemory model install`)")
    return path


@pytest.fixture(scope="session")
def onnx_embedder(model_dir):
    from supermemory.embed import OnnxProvider

    provider = OnnxProvider(model_dir)
    provider.load()
    return provider


@pytest.fixture
def backfill_probe(monkeypatch):
    """The supersedes backfill reading one memory per slice: (`seen`, the texts it reads from now on, and
    `cut_short()`, a context in which a pass starts in time and then finds every look at the clock past its deadline)."""
    from supermemory.store import supersession

    seen: list[str] = []
    real = supersession.superseded

    def counting(ctx, namespace, text, *args, **kwargs):
        seen.append(text)
        return real(ctx, namespace, text, *args, **kwargs)

    @contextlib.contextmanager
    def cut_short():
        clock = iter([0.0] + [10.0] * 100)     # the pass starts in time, then every look at the clock is past 5

        class Clock:
            @staticmethod
            def monotonic():
                return next(clock)

        with monkeypatch.context() as m:
            m.setattr(supersession, "time", Clock)
            yield

    monkeypatch.setattr(supersession, "superseded", counting)
    monkeypatch.setattr(supersession, "BACKFILL_SLICE", 1)
    return seen, cut_short
