"""The runtime dependencies the CLI cannot work without, checked before it starts (standard library only).

`python3 -m supermemory` from a checkout, or with a Python that never installed the package's requirements,
would otherwise run until a command first imports one of them and end in a traceback ("No module named
'Stemmer'"). `run.py` and `__main__` ask `missing()` first and print `advice()` instead.
"""
from __future__ import annotations

import importlib.util
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
