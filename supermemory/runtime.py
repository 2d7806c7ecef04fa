"""The native runtime: numpy / onnxruntime imported once under one lock, telemetry off, a clean exit.

Why a module of its own:
- Two threads importing numpy at the same moment (the MCP warm-up and the first tool call) can
  leave it half-initialised, and CPython then refuses to load it again for the life of the process
  ("cannot load module more than once per process"). Every first import of these packages in a
  process with threads goes through `import_numpy` / `import_onnx`, which hold one lock.
- onnxruntime collects telemetry (a device id and an event queue under ~/.cache/Microsoft, and
  lookups of an events host) unless `ORT_DISABLE_TELEMETRY=1` is in the environment *before* it
  is imported; `ort.disable_telemetry_events()` afterwards is too late. Memories never leave the
  machine, and neither does anything about it.
- A process that ends while a thread is inside onnxruntime's C++ code can abort during interpreter
  teardown (`terminate called without an active exception`); `hard_exit` flushes and leaves
  without that teardown.
"""
from __future__ import annotations

import os
import sys
import threading
from types import ModuleType

TELEMETRY_ENV = "ORT_DISABLE_TELEMETRY"

_LOCK = threading.RLock()


def disable_telemetry() -> None:
    """Make any onnxruntime this process (or a child) imports start with its telemetry off."""
    os.environ[TELEMETRY_ENV] = "1"


def import_numpy() -> ModuleType:
    """numpy, imported at most once concurrently (waits while another thread imports it)."""
    with _LOCK:
        import numpy

        return numpy


def import_onnx() -> tuple[ModuleType, ModuleType]:
    """(onnxruntime, tokenizers), imported under the same lock with telemetry off.

    Raises:
        ImportError: a package is not installed (nothing is cached: the next call tries again).
    """
    with _LOCK:
        disable_telemetry()
        import numpy  # noqa: F401 - onnxruntime imports it; do it here, under the lock

        import onnxruntime
        import tokenizers

        return onnxruntime, tokenizers


def hard_exit(code: int = 0) -> None:
    """Flush stdio and end the process now, skipping interpreter and C++ static teardown."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)
