"""supermemory: local, offline long-term memory for coding agents."""
import os as _os
import sys as _sys

RELEASE = "0.2.0"   # the package's version (pyproject.toml's); `__version__` adds the commit install.py recorded
# install.py writes this file into the prefix of the Python it installed into (the venv): the commit of the git
# checkout the package was built from, read here at import (one small file, standard library only).
INSTALL_RECORD = "supermemory-install.json"


def install_record(prefix: str | None = None) -> dict | None:
    """What install.py recorded when it installed this copy (`version`, `commit`, `dirty`, `editable`, `source`,
    `installed_at`), read from `<sys.prefix>/supermemory-install.json`; None when there is none, it cannot be read,
    or it names another version (the package was since installed by other means)."""
    import json

    try:
        with open(_os.path.join(_sys.prefix if prefix is None else prefix, INSTALL_RECORD), encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("version") != RELEASE:
        return None
    commit = record.get("commit")
    if commit is not None and not (isinstance(commit, str) and 4 <= len(commit) <= 40
                                   and all(c in "0123456789abcdef" for c in commit)):
        return None
    return record


def full_version(prefix: str | None = None) -> str:
    """`RELEASE`, plus `+<commit>` (and `.dirty` for a checkout with uncommitted changes) when install.py recorded
    the git commit it installed this copy from: "0.2.0+d2844e9" (a PEP 440 local version)."""
    record = install_record(prefix) or {}
    if not record.get("commit"):
        return RELEASE
    return f"{RELEASE}+{record['commit']}" + (".dirty" if record.get("dirty") else "")


def __getattr__(name: str):
    """`__version__` (what `supermemory --version`, MCP serverInfo and doctor show) is read from the install record
    on first use, not at every import: the hooks and the CLI's other commands never need it."""
    if name == "__version__":
        globals()["__version__"] = version = full_version()
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# Every process that may import onnxruntime (server, CLI, bench, reindex, hooks) imports this
# package first; the variable must be set before onnxruntime is imported (see runtime.py).
_os.environ["ORT_DISABLE_TELEMETRY"] = "1"
