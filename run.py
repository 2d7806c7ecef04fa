#!/usr/bin/env python3
"""Run supermemory from a checkout: `python3 run.py <cli args>`, or `python3 run.py test [pytest args]`.

`test` is the one command that runs the whole suite on a fresh machine: it needs only python3
>= 3.10 with its `venv` module and the package index. It creates `.venv/` in the checkout (so no
system pip is touched: Debian refuses that, PEP 668), installs the package with its dev extra
there (again only when pyproject.toml changed), provisions the embedding model
(`supermemory model install`, a no-op once done), then runs pytest inside that venv.
Standard library only down to the CLI import, which happens only for the other commands.
"""
import hashlib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(ROOT, ".venv")
STAMP = os.path.join(VENV, ".supermemory-dev-install")
MIN_PYTHON = (3, 10)


def _venv_python() -> str:
    return os.path.join(VENV, "Scripts", "python.exe") if os.name == "nt" else os.path.join(VENV, "bin", "python")


def _say(message: str) -> None:
    print(f"run.py test: {message}", file=sys.stderr, flush=True)


def _missing_venv_help() -> str:
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return (f"python3's venv module (with ensurepip) is not available. On Debian/Ubuntu install it with:\n"
            f"    sudo apt-get install python{version}-venv\n"
            f"(the package python3-venv pulls in the same for the default python3), then run this again.")


def _venv_works() -> bool:
    return os.path.exists(_venv_python()) and subprocess.run(
        [_venv_python(), "-c", "import sys"], capture_output=True).returncode == 0


def _make_venv() -> None:
    try:
        import ensurepip  # noqa: F401 - Debian splits it (and venv's pip) into python3-venv
        import venv
    except ImportError:
        raise SystemExit(_missing_venv_help()) from None
    import tempfile

    from supermemory.deps import pip_environment

    _say(f"creating {VENV}")
    saved = dict(os.environ)
    try:
        with tempfile.TemporaryDirectory(prefix="supermemory-run-") as scratch:
            os.environ.update(pip_environment(scratch))     # ensurepip runs pip in this environment
            venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"{exc}\n{_missing_venv_help()}") from None
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _install_fingerprint() -> str:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as handle:
        return hashlib.sha256(handle.read() + sys.version.encode()).hexdigest()


def _run(args: list) -> None:
    import tempfile

    from supermemory.deps import pip_environment

    with tempfile.TemporaryDirectory(prefix="supermemory-run-") as scratch:
        completed = subprocess.run(args, cwd=ROOT, env=pip_environment(scratch))
    if completed.returncode != 0:
        raise SystemExit(f"run.py test: `{' '.join(args)}` failed with exit code {completed.returncode}")


def prepare() -> str:
    """Make `.venv` ready to run the suite; returns its python."""
    if sys.version_info < MIN_PYTHON:
        raise SystemExit(f"supermemory needs Python >= {'.'.join(map(str, MIN_PYTHON))}; this is {sys.version.split()[0]}")
    if not _venv_works():
        _make_venv()
    python = _venv_python()
    fingerprint = _install_fingerprint()
    try:
        with open(STAMP, encoding="utf-8") as handle:
            current = handle.read().strip() == fingerprint
    except OSError:
        current = False
    if not current:
        _say('installing the package and its dev extra into .venv (pip install -e ".[dev]")')
        _run([python, "-m", "pip", "install", "--disable-pip-version-check", "-q", "-e", ".[dev]"])
        with open(STAMP, "w", encoding="utf-8") as handle:
            handle.write(fingerprint + "\n")
    _run([python, "-m", "supermemory", "model", "install"])
    return python


def main() -> int:
    if sys.argv[1:2] == ["test"]:
        python = prepare()
        extra = sys.argv[2:] or _workers()
        args = [python, "-m", "pytest", "-q", *extra]
        _say(" ".join(["pytest", "-q", *extra]))
        sys.stdout.flush()
        if os.name == "nt":
            return subprocess.run(args, cwd=ROOT).returncode
        os.chdir(ROOT)
        os.execv(python, args)
    return cli(sys.argv[1:])


def _workers() -> list:
    """pytest-xdist arguments for the whole suite: one worker per core, at most four (the suite is mostly
    waiting on subprocesses: two workers on two cores take it from ~7 to ~4 minutes). With arguments of
    their own (one file, `-k`), tests run in one process as given."""
    workers = min(4, os.cpu_count() or 1)
    return ["-n", str(workers)] if workers > 1 else []


def cli(args: list) -> int:
    """The CLI, in the checkout's `.venv` when `run.py test` made one; else in this Python if it has the
    runtime dependencies, and otherwise a clear word on how to get them (never a traceback)."""
    in_venv = os.path.realpath(sys.prefix) == os.path.realpath(VENV)
    if not in_venv and os.path.exists(STAMP) and os.path.exists(_venv_python()):
        command = [_venv_python(), os.path.abspath(__file__), *args]
        try:
            if os.name == "nt":
                return subprocess.run(command).returncode
            os.execv(command[0], command)
        except OSError:   # a broken venv (its python moved or deleted): fall through to this Python
            pass
    sys.path.insert(0, ROOT)
    from supermemory import deps   # standard library only

    missing = deps.missing()
    if missing:
        sys.stderr.write(deps.advice("run.py", missing))
        return 1
    from supermemory.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
