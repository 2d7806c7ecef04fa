"""`supermemory doctor`: what is installed, what works, and how to fix what does not."""
from __future__ import annotations

import platform
import sys

from supermemory import db as dbm
from supermemory.config import Config
from supermemory.errors import SupermemoryError


def run_checks(config: Config, *, driver: str | None = None) -> dict:
    """Collect every health fact; `ok` is False when something required is broken."""
    problems: list[str] = []
    warnings: list[str] = []
    report: dict = {"python": platform.python_version(), "executable": sys.executable,
                    "data_dir": str(config.home), "db_path": str(config.db_path)}
    try:
        chosen = dbm.choose_driver(driver)
        report["driver"] = chosen.name
        report["sqlite_version"] = chosen.sqlite_version
        report["fts5"] = chosen.fts5
        report["vector_index"] = "sqlite-vec" if chosen.vec else "numpy brute force"
        if chosen.vec:
            conn = chosen.module.connect(":memory:")
            dbm.load_vec(conn)
            report["sqlite_vec_version"] = conn.execute("SELECT vec_version()").fetchone()[0]
            conn.close()
        else:
            warnings.append("sqlite-vec cannot be loaded by any driver: vectors use numpy brute force "
                            "(fine up to ~100k memories); `pip install sqlean.py sqlite-vec` enables it")
    except SupermemoryError as exc:
        problems.append(str(exc))
    from supermemory.embed import model_status

    provider = config.get("embedder.provider", "onnx")
    report["embedder"] = {"provider": provider}
    if provider == "onnx":
        status = model_status(config.model_dir)
        report["embedder"].update({"model": status["model"], "model_dir": status["dir"],
                                   "source": status["source"], "checksum_ok": status["ok"],
                                   "files": status["files"]})
        if not status["ok"]:
            missing = not all(f.get("present") for f in status["files"].values())
            msg = ("embedding model missing" if missing else "embedding model checksum mismatch")
            if config.get("embedder.allow_hash_fallback", True):
                warnings.append(f"WARNING: {msg} in {status['dir']}: supermemory falls back to the weak `hash` "
                                "embedder. Fix: `supermemory model install`")
                report["embedder"]["active"] = "hash (fallback)"
            else:
                problems.append(f"{msg}; fix: `supermemory model install`")
        else:
            report["embedder"]["active"] = "onnx"
    elif provider == "hash":
        warnings.append("WARNING: the `hash` embedder is configured: recall quality is much lower than bge-small")
        report["embedder"]["active"] = "hash"
    if config.db_path.exists() and "driver" in report:
        try:
            from supermemory.core import MemoryStore

            store = MemoryStore(config.db_path, config=config, driver=driver, namespace="global")
            try:
                report["schema_version"] = dbm.schema_version(store.conn)
                report["pinned_model"] = store.pinned_model()
                stats = store.stats(namespace="*")
                report["memories"] = stats["memories"]
                report["by_namespace"] = stats["by_namespace"]
                report["integrity"] = store.conn.execute("PRAGMA quick_check").fetchone()[0]
                if report["integrity"] != "ok":
                    problems.append(f"database integrity check failed: {report['integrity']}")
            finally:
                store.close()
        except SupermemoryError as exc:
            problems.append(str(exc))
    else:
        report["memories"] = 0
        report["schema_version"] = None
    report["namespace"] = config.default_namespace()
    report["problems"] = problems
    report["warnings"] = warnings
    report["ok"] = not problems
    return report


def render(report: dict) -> str:
    """Human-readable doctor report."""
    emb = report.get("embedder", {})
    lines = [
        f"python        {report['python']} ({report['executable']})",
        f"sqlite        {report.get('sqlite_version', '?')} via {report.get('driver', '?')}, "
        f"FTS5 {'yes' if report.get('fts5') else 'NO'}",
        f"vectors       {report.get('vector_index', '?')}"
        + (f" {report['sqlite_vec_version']}" if report.get("sqlite_vec_version") else ""),
        f"embedder      {emb.get('active', emb.get('provider'))}"
        + (f" {emb.get('model')} at {emb.get('model_dir')} (checksum {'ok' if emb.get('checksum_ok') else 'NOT ok'})"
           if emb.get("provider") == "onnx" else ""),
        f"database      {report['db_path']} (schema {report.get('schema_version')}, "
        f"{report.get('memories', 0)} memories)",
        f"namespace     {report.get('namespace')}",
    ]
    for warning in report["warnings"]:
        lines.append(f"warning: {warning}")
    for problem in report["problems"]:
        lines.append(f"PROBLEM: {problem}")
    lines.append("ok" if report["ok"] else "NOT OK")
    return "\n".join(lines)
