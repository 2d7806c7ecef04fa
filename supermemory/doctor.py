"""`supermemory doctor`: what is installed, what works, and how to fix what does not."""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import os
import platform
import sys
import tempfile
from pathlib import Path

from supermemory.store import db as dbm
from supermemory.config import Config
from supermemory.render import pending_passes_line
from supermemory.errors import SupermemoryError

# The runtime dependencies that must import (module name → pip package).
DEPENDENCIES = {"numpy": "numpy", "onnxruntime": "onnxruntime", "tokenizers": "tokenizers",
                "sqlite_vec": "sqlite-vec", "Stemmer": "PyStemmer"}


def check_dependencies() -> dict:
    """Import each runtime dependency: `{module: {"ok", "version", "error"}}`.

    A real import (not a file probe), so a broken install (an ABI mismatch, a missing shared
    library) is caught too. Slow (numpy and onnxruntime take ~0.6 s): doctor only. What a failing
    import prints itself (onnxruntime prints the numpy traceback) is kept off the report.
    """
    found = {}
    for name in DEPENDENCIES:
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                module = importlib.import_module(name)
        except ImportError as exc:  # an ImportError subclass covers ModuleNotFoundError
            found[name] = {"ok": False, "version": None, "error": f"{type(exc).__name__}: {exc}"}
        else:
            found[name] = {"ok": True, "version": str(getattr(module, "__version__", "") or "") or None,
                           "error": None}
    return found


def run_checks(config: Config, *, driver: str | None = None) -> dict:
    """Collect every health fact; `ok` is False when something required is broken.

    :param config: the process settings, loaded leniently so `config.problems` (a bad config
        file) is reported here instead of stopping the checks.
    """
    problems: list[str] = []
    warnings: list[str] = []
    from supermemory import __version__, install_record

    record = install_record() or {}
    report: dict = {"version": __version__, "installed_from": record.get("source"),
                    "python": platform.python_version(), "executable": sys.executable,
                    "data_dir": str(config.home), "db_path": str(config.db_path)}
    report["config"] = {"path": str(config.config_path), "exists": config.config_path.exists(),
                        "ok": not config.problems, "problems": list(config.problems)}
    problems += config.problems
    report["dependencies"] = check_dependencies()
    for name, dep in report["dependencies"].items():
        if not dep["ok"]:
            problems.append(f"{name} cannot be imported ({dep['error']}); fix: "
                            f"`{sys.executable} -m pip install {DEPENDENCIES[name]}`")
    try:
        chosen = dbm.choose_driver(driver)
        report["driver"] = chosen.name
        report["sqlite_version"] = chosen.sqlite_version
        report["fts5"] = chosen.fts5
        report["vector_index"] = "sqlite-vec" if chosen.vec else "numpy brute force"
        if chosen.vec:
            report["sqlite_vec_version"] = dbm.vec_version(chosen)
        elif report["dependencies"]["sqlite_vec"]["ok"]:
            warnings.append("sqlite-vec cannot be loaded by any driver: vectors use numpy brute force "
                            "(fine up to ~100k memories); `pip install sqlean.py sqlite-vec` enables it")
    except SupermemoryError as exc:
        problems.append(str(exc))
    from supermemory.embed import model_status

    report["db_exists"] = config.db_path.exists()
    cannot_store = None if report["db_exists"] else data_dir_problem(config.home)
    provider = config.get("embedder.provider")
    report["embedder"] = {"provider": provider}
    if provider == "onnx":
        status = model_status(config.model_dir)
        missing = not all(f.get("present") for f in status["files"].values())
        report["embedder"].update({"model": status["model"], "model_dir": status["dir"],
                                   "source": status["source"], "checksum_ok": status["ok"],
                                   "files": status["files"],
                                   "status": "ok" if status["ok"] else "missing" if missing else "damaged"})
        if not status["ok"] and cannot_store and config.model_dir_override is None:
            # The model's folder is inside a data dir that cannot hold anything (a file, not writable): `model
            # install` fails there too, so the data dir is the cause, named once in its PROBLEM line.
            fallback = config.get("embedder.allow_hash_fallback")
            message = (f"embedding model {'not found' if missing else 'damaged'}: the data dir {config.home} cannot "
                       "hold it (see PROBLEM below)" + ("; until then recall is lexical-only" if fallback
                                                        else " (no fallback: embedder.allow_hash_fallback is false)"))
            report["embedder"].update({"message": message, "cause": "data_dir"})
            if fallback:
                report["embedder"]["active"] = "none (lexical-only)"
        elif not status["ok"]:
            state = (f"not installed (missing from {status['dir']})" if missing
                     else f"damaged (checksum mismatch in {status['dir']})")
            if config.model_dir_override is not None:   # the folder is the user's choice: the fix names it
                state = "not found" if missing else "damaged"
            fix = _model_fix(config, missing)
            if config.get("embedder.allow_hash_fallback"):
                message = (f"embedding model {state}: {fix}; until then recall is "
                           "lexical-only (a database already pinned to the `hash` fallback keeps using it)")
                # Not installed yet (`install.py --no-model`) is a step still to take: a warning. A folder
                # SUPERMEMORY_MODEL_DIR names without the model, or a damaged model, is broken: not ok.
                (warnings if missing and config.model_dir_override is None else problems).append(message)
                report["embedder"]["active"] = "none (lexical-only)"   # a fresh pin never takes the fallback
            else:
                message = (f"embedding model {state}: {fix} (no fallback: "
                           "embedder.allow_hash_fallback is false)")
                problems.append(message)
            report["embedder"]["message"] = message
        else:
            report["embedder"]["active"] = "onnx"
        runtime = [name for name in ("onnxruntime", "tokenizers") if not report["dependencies"][name]["ok"]]
        if runtime:  # already a problem above; say what it does to the embedder
            report["embedder"]["active"] = ("none (lexical-only)" if config.get("embedder.allow_hash_fallback")
                                            else "unavailable")
            report["embedder"]["blocked_by"] = runtime
    elif provider == "hash":
        warnings.append("the `hash` embedder is configured: recall quality is much lower than bge-small")
        report["embedder"]["active"] = "hash"
    report["data_dir_ok"] = cannot_store is None
    if cannot_store:
        problems.append(cannot_store)
    if report["db_exists"] and "driver" in report:
        try:
            from supermemory.core import MemoryStore

            store = MemoryStore(config.db_path, config=config, driver=driver, namespace="global")
            try:
                report["schema_version"] = dbm.schema_version(store.conn)
                report["pinned_model"] = store.pinned_model()
                pin = store.pin_check()
                report["model_pin_status"] = pin["status"]
                if pin["status"] == "mismatch":   # every write fails with ModelMismatchError
                    problems.append(pin["message"])
                if report["embedder"].get("active") == "none (lexical-only)" and \
                        (report["pinned_model"] or {}).get("provider") == "hash":
                    report["embedder"]["active"] = "hash (fallback)"
                from supermemory.store import lifecycle

                report["passes_pending"] = lifecycle.pending_passes(store.context)
                report["newer_stamps"] = lifecycle.newer_stamps(store.context)
                stats = store.stats(namespace="*")
                report["memories"] = stats["memories"]
                report["by_namespace"] = stats["by_namespace"]
                report["integrity"] = dbm.integrity(store.conn)
                if report["integrity"] != "ok":
                    problems.append(f"database integrity check failed: {report['integrity']}")
                read_only = dbm.read_only_problem(config.db_path)
                if read_only:
                    problems.append(read_only)
            finally:
                store.close()
        except SupermemoryError as exc:
            problems.append(str(exc))
        except ImportError as exc:  # a missing dependency, already reported above
            problems.append(f"the database cannot be opened without {exc.name or exc}")
    else:
        report["memories"] = 0
        report["schema_version"] = None
    report["namespace"] = config.default_namespace(record=False)   # a look, not a claim
    report["problems"] = problems
    report["warnings"] = warnings
    report["ok"] = not problems
    return report


def upgrade_passes(budget: float, config: Config | None = None) -> dict:
    """Run the one-time passes the store still needs (`lifecycle.one_time_passes`, what `maintenance` runs) for at
    most about `budget` seconds: what install.py runs after an upgrade, so the first briefing after it already
    has the new version's links and summaries. A pass that does not finish in time goes on from where it stopped
    at the next SessionEnd hook or `supermemory maintenance`.

    :returns: `pending_before` (the passes found pending), the counts and links of `one_time_passes`, `pending`
        (those still to run), `seconds`; `{"db": False}` when there is no database yet.
    """
    import time

    from supermemory.config import load_config
    from supermemory.core import MemoryStore
    from supermemory.store import lifecycle

    config = config or load_config(strict=False)   # a bad config file: doctor says so, the passes still run
    if not config.db_path.exists():
        return {"db": False, "pending_before": [], "pending": []}
    started = time.monotonic()
    with MemoryStore(config.db_path, config=config, namespace="global") as store:
        before = lifecycle.pending_passes(store.context)
        result = {"db": True, "pending_before": before, "pending": before}
        if before:
            result.update(lifecycle.one_time_passes(store.context, deadline=started + budget))
    result["seconds"] = round(time.monotonic() - started, 2)
    return result


def data_dir_problem(home) -> str | None:
    """Why no database could be created in this data dir, so doctor is not ok when every write would fail.

    Found by trying (a temporary file or folder made and removed at once: doctor leaves nothing behind); None
    when it can. A data dir that is a file, or one this user cannot write or create, made doctor say ok.
    """
    home = Path(home)
    fix = "or point SUPERMEMORY_HOME at a folder you can write"
    target = home
    while not target.exists() and target.parent != target:
        target = target.parent
    if not target.is_dir():
        where = "is a file" if target == home else f"cannot be created: {target} is a file"
        return f"the data dir {home} {where}, not a folder: nothing can be stored; fix: move {target} aside {fix}"
    try:
        if target == home:
            fd, probe = tempfile.mkstemp(prefix=".doctor-probe-", dir=home)
            os.close(fd)
            os.unlink(probe)
        else:
            os.rmdir(tempfile.mkdtemp(prefix=".supermemory-doctor-probe-", dir=target))
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        if target == home:
            return (f"the data dir {home} is not writable ({reason}): nothing can be stored; fix: "
                    f"`chmod u+w {home}` {fix}")
        return (f"the data dir {home} cannot be created in {target} ({reason}): nothing can be stored; fix: "
                f"make {target} writable {fix}")
    return None


def _model_fix(config: Config, missing: bool) -> str:
    """What brings the model back: `model install` for the data dir's own model folder, but not for a folder
    SUPERMEMORY_MODEL_DIR names (install uses that folder as it is and refuses one without the model), so
    then the variable itself is the cause and the fix names it and the folder that would be used without it."""
    from supermemory.embed import model_status

    if config.model_dir_override is None:
        return "run `supermemory model install`"
    folder = config.model_dir_override
    default = dataclasses.replace(config, model_dir_override=None).model_dir
    held = ("does not exist" if not folder.exists() else "holds no model (model.onnx, tokenizer.json)" if missing
            else "holds a damaged model (checksum mismatch)")
    instead = ("the model installed there is then used" if model_status(default)["ok"]
               else "then run `supermemory model install`")
    return (f"SUPERMEMORY_MODEL_DIR={folder} {held}: unset it to use {default} ({instead}), "
            "or point it at a folder holding bge-small-en-v1.5's model.onnx and tokenizer.json")


def pin_mismatch(config: Config) -> str | None:
    """Why writes to the existing database fail under these settings (it is pinned to a model they no
    longer give), or None: `config --set embedder.…` warns with it while the setting is still saved."""
    if not config.db_path.exists():
        return None
    from supermemory.core import MemoryStore

    try:
        with MemoryStore(config.db_path, config=config, namespace="global") as store:
            pin = store.pin_check()
    except (SupermemoryError, ImportError):   # doctor says what keeps the database from opening
        return None
    return pin["message"] if pin["status"] == "mismatch" else None


def _database_line(report: dict) -> str:
    if not report.get("db_exists"):
        if report.get("data_dir_ok") is False:
            return f"database      {report['db_path']} (no database yet, and it cannot be created: see PROBLEM below)"
        return f"database      {report['db_path']} (schema: no database yet, created on first write)"
    if report.get("schema_version") is None:
        return f"database      {report['db_path']} (cannot be opened: see PROBLEM below)"
    spaces = len(report.get("by_namespace") or {})    # every namespace's: the next line names the project's (fu38 D10)
    return (f"database      {report['db_path']} (schema {report['schema_version']}, "
            f"{report.get('memories', 0)} memories in {spaces} namespace{'' if spaces == 1 else 's'})")


def _embedder_line(emb: dict) -> str:
    line = f"embedder      {emb.get('active', emb.get('provider'))}"
    if emb.get("provider") != "onnx":
        return line
    if emb.get("message"):
        line = f"{line}: {emb['message']}"
    else:
        line = f"{line} {emb.get('model')} at {emb.get('model_dir')} (checksum ok)"
    if emb.get("blocked_by"):
        line += f"; the model cannot run without {' and '.join(emb['blocked_by'])} (see PROBLEM below)"
    return line


def render(report: dict) -> str:
    """Human-readable doctor report: one line per fact, then each warning and problem once."""
    emb = report.get("embedder", {})
    deps = report.get("dependencies", {})
    lines = [
        f"supermemory   {report.get('version')}" + (f" (installed from {report['installed_from']})"
                                                      if report.get("installed_from") else ""),
        f"python        {report['python']} ({report['executable']})",
        "packages      " + ", ".join(f"{name} {dep['version'] or ''}".strip() if dep["ok"] else f"{name} MISSING"
                                      for name, dep in deps.items()),
        f"sqlite        {report.get('sqlite_version', '?')} via {report.get('driver', '?')}, "
        f"FTS5 {'yes' if report.get('fts5') else 'NO'}",
        ("vectors       unavailable until numpy is installed" if not deps.get("numpy", {"ok": True})["ok"] else
         f"vectors       {report.get('vector_index', '?')}"
         + (f" {report['sqlite_vec_version']}" if report.get("sqlite_vec_version") else "")),
        _embedder_line(emb),
        _database_line(report),
        f"config        {report['config']['path']}"
        + ("" if report["config"]["exists"] else " (none: built-in defaults)")
        + ("" if report["config"]["ok"] else " (has problems: see PROBLEM below)"),
        f"namespace     {report.get('namespace')}",
    ]
    pending = pending_passes_line(report.get("passes_pending"))
    if pending:
        lines.append(f"upgrade       {pending}")
    if report.get("newer_stamps"):
        lines.append(f"upgrade       the store was last maintained by a newer version ({', '.join(report['newer_stamps'])}"
                     f"): this one ({report.get('version')}) leaves that work alone; install the newer one")
    shown = {emb.get("message")}
    for warning in report["warnings"]:
        if warning not in shown:
            lines.append(f"warning: {warning}")
    for problem in report["problems"]:
        if problem not in shown:
            lines.append(f"PROBLEM: {problem}")
    lines.append("ok" if report["ok"] else "NOT OK")
    return "\n".join(lines)
