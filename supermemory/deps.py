"""The runtime dependencies the CLI cannot work without, checked before it starts (standard library only).

Also the environment pip runs in (`pip_environment`), for install.py, run.py and the model download alike.

`python3 -m supermemory` from a checkout, or with a Python that never installed the package's requirements,
would otherwise run until a command first imports one of them and end in a traceback ("No module named
'Stemmer'"). `run.py` and `__main__` ask `missing()` first and print `advice()` instead.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys

# (module, PyPI package). onnxruntime and tokenizers only degrade recall to words, with a warning.
REQUIRED = (("numpy", "numpy"), ("Stemmer", "PyStemmer"))


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing() -> list[str]:
    """The PyPI packages of REQUIRED this Python cannot import (found without importing them)."""
    return [package for module, package in REQUIRED if not _importable(module)]


def advice(who: str, packages: list[str]) -> str:
    """What to do when `packages` are missing: the two supported ways to get a Python that has them."""
    return (f"{who}: this Python ({sys.executable}) lacks supermemory's dependencies: {', '.join(packages)}.\n"
            "From a checkout, run `python3 run.py test` once (it builds .venv/ there, which `python3 run.py …` "
            "then uses); or run `python3 install.py` and use the `supermemory` command.\n")


def pip_environment(scratch: str) -> dict:
    """The environment to run pip in, with `scratch` a folder removed after it.

    pip's user agent asks `rustc --version` when a rustc is on PATH, and rustup's proxy then creates
    `~/.rustup/settings.toml` in a home that had none (fresh-user run fu25 D10: the install left it behind). Without
    a rustup home of the user's yet, pip gets one in `scratch`: that rustc cannot answer, pip leaves the version out,
    and nothing could have been built with Rust anyway (no toolchain in a rustup home that does not exist). A rustc
    that is no rustup proxy ignores the variable."""
    env = dict(os.environ)
    if "RUSTUP_HOME" in env or shutil.which("rustc", path=env.get("PATH")) is None:
        return env
    if not os.path.exists(os.path.join(os.path.expanduser("~"), ".rustup")):
        env["RUSTUP_HOME"] = os.path.join(scratch, "rustup")
    return env

