"""Damaged state: broken database files, a missing or corrupt model, an unwritable data dir, a full disk.

Each case must end in a clear message naming the fix, must never overwrite the damaged file,
and must leave `supermemory hook session-start` exiting 0 with valid-or-empty stdout.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.common import McpClient, check_consistency, subprocess_env
from supermemory.config import Config
from supermemory.core import MemoryStore
from supermemory.embed import HashProvider
from supermemory.errors import StorageError
from supermemory.mcp.protocol import INTERNAL_ERROR
from supermemory.mcp.session import Session

DB_FIX = ("move it aside", "supermemory import")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _real_db_bytes(tmp_path: Path) -> bytes:
    home = tmp_path / "realhome"
    with MemoryStore(home / "memory.db", config=Config(home=home), embedder=HashProvider(), namespace="proj") as store:
        for n in range(20):
            store.remember(f"Real memory {n} about the deploy pipeline and its caches", kind="fact")
    assert not (home / "memory.db-wal").exists() or (home / "memory.db-wal").stat().st_size == 0
    return (home / "memory.db").read_bytes()


def _spawn(args: list[str], home: Path, cwd: Path, stdin: bytes = b"", **env: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "supermemory", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=subprocess_env(home, **env))
    proc.stdin.write(stdin)
    proc.stdin.close()
    return proc


def _finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out = proc.stdout.read()
    err = proc.stderr.read()
    code = proc.wait(timeout=120)
    proc.stdout.close()
    proc.stderr.close()
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _run(args: list[str], home: Path, cwd: Path, stdin: bytes = b"", **env: str) -> tuple[int, str, str]:
    return _finish(_spawn(args, home, cwd, stdin, **env))


def _session_start_payload(cwd: Path) -> bytes:
    return json.dumps({"session_id": "s-damaged", "transcript_path": None, "cwd": str(cwd),
                       "hook_event_name": "SessionStart", "source": "startup"}).encode()


def assert_session_start_ok(code: int, out: str, err: str) -> dict | None:
    """Exit 0 and stdout either empty or exactly one SessionStart JSON object."""
    assert code == 0, err
    assert "Traceback" not in err, err
    if not out.strip():
        return None
    answer = json.loads(out)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert isinstance(answer["hookSpecificOutput"]["additionalContext"], str)
    return answer


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return project


# --- a damaged database file ----------------------------------------------------------------------

def _damage(kind: str, real: bytes) -> bytes:
    if kind == "first-100-bytes":
        return real[:100]
    if kind == "cut-at-a-page":
        return real[:8192]
    if kind == "garbage":
        return bytes((n * 131 + 7) % 256 for n in range(5000))
    if kind == "text":
        return b"this is not a database, it is a note someone saved here\n" * 40
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["first-100-bytes", "cut-at-a-page", "garbage", "text"])
def test_a_damaged_database_is_reported_with_the_fix_and_never_overwritten(tmp_path, kind):
    real = _real_db_bytes(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    db = home / "memory.db"
    db.write_bytes(_damage(kind, real))
    before = _sha(db)
    project = _project(tmp_path)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": "s-damaged", "cwd": str(project),
                                      "message": {"role": "user", "content": "Fix the cache bug"},
                                      "uuid": "u1", "timestamp": "2026-11-30T10:00:00.000Z"}) + "\n")
    end_payload = json.dumps({"session_id": "s-damaged", "transcript_path": str(transcript), "cwd": str(project),
                              "hook_event_name": "SessionEnd", "reason": "exit"}).encode()
    procs = {
        "remember": _spawn(["remember", "a new memory"], home, project),
        "recall": _spawn(["recall", "deploy pipeline"], home, project),
        "doctor": _spawn(["doctor", "--json"], home, project),
        "session-start": _spawn(["hook", "session-start"], home, project, _session_start_payload(project)),
        "session-end": _spawn(["hook", "session-end"], home, project, end_payload),
    }
    results = {name: _finish(proc) for name, proc in procs.items()}
    for name in ("remember", "recall"):
        code, out, err = results[name]
        assert code == 1 and out == "", (name, out, err)
        assert err.startswith("error: ") and "Traceback" not in err, (name, err)
        assert str(db) in err and any(fix in err for fix in DB_FIX), (name, err)
    code, out, err = results["doctor"]
    report = json.loads(out)
    assert code == 1 and report["ok"] is False
    assert any(str(db) in p and any(fix in p for fix in DB_FIX) for p in report["problems"]), report["problems"]
    assert_session_start_ok(*results["session-start"])
    assert "left untouched" in results["session-start"][2]
    code, out, err = results["session-end"]
    assert code == 0 and out == "" and "Traceback" not in err, err
    # the MCP server starts, says what is wrong inside a tool result, and keeps serving
    client = McpClient(home, project)
    try:
        assert "result" in client.initialize()
        result = client.tool("memory_recall", {"query": "deploy pipeline"})
        assert result["isError"] is True
        assert any(fix in result["content"][0]["text"] for fix in DB_FIX), result
        assert client.request("ping")["result"] == {}
        code, err = client.close()
        assert code == 0 and "Traceback" not in err, err
    finally:
        client.kill()
    assert _sha(db) == before, "the damaged database file was modified"
    assert db.stat().st_size == len(_damage(kind, real))


# --- the embedding model ---------------------------------------------------------------------------

def test_a_missing_model_stores_lexically_loudly_never_pins_the_fallback_and_doctor_names_the_fix(tmp_path):
    home = tmp_path / "home"
    project = _project(tmp_path)
    code, out, err = _run(["remember", "stored while the model is missing"], home, project,
                          SUPERMEMORY_EMBED_PROVIDER="onnx")
    assert code == 0 and out.strip().startswith("M"), err
    assert "lexical-only until then" in err and "supermemory model install" in err, err
    code, out, err = _run(["stats", "--json"], home, project, SUPERMEMORY_EMBED_PROVIDER="onnx")
    assert json.loads(out)["embedder"] is None, "a fresh database was pinned to the fallback embedder"
    code, out, err = _run(["doctor", "--json"], home, project, SUPERMEMORY_EMBED_PROVIDER="onnx")
    report = json.loads(out)
    assert any("supermemory model install" in w and "not installed" in w for w in report["warnings"]), report
    assert report["embedder"]["active"] == "none (lexical-only)"
    answer = assert_session_start_ok(*_run(["hook", "session-start"], home, project, _session_start_payload(project),
                                           SUPERMEMORY_EMBED_PROVIDER="onnx"))
    assert answer is not None


def _tiny_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    tokenizer = Tokenizer(WordLevel({"[UNK]": 0, "[PAD]": 1, "memory": 2}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.save(str(path))


def test_a_corrupt_model_file_names_model_install_and_is_left_as_it_is(tmp_path):
    home = tmp_path / "home"
    model_dir = home / "models" / "bge-small-en-v1.5"
    model_dir.mkdir(parents=True)
    (model_dir / "model.onnx").write_bytes(b"\x08\x07" + bytes(range(256)) * 64)  # not an ONNX graph
    _tiny_tokenizer(model_dir / "tokenizer.json")
    before = {name: _sha(model_dir / name) for name in ("model.onnx", "tokenizer.json")}
    project = _project(tmp_path)
    code, out, err = _run(["remember", "stored while the model file is corrupt"], home, project,
                          SUPERMEMORY_EMBED_PROVIDER="onnx")
    assert code == 0 and out.strip().startswith("M"), err
    assert "supermemory model install" in err and "Traceback" not in err, err
    code, out, err = _run(["recall", "corrupt model file", "--json"], home, project, SUPERMEMORY_EMBED_PROVIDER="onnx")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["results"], answer  # lexical recall still works
    assert "supermemory model install" in answer["warning"]
    code, out, err = _run(["doctor", "--json"], home, project, SUPERMEMORY_EMBED_PROVIDER="onnx")
    report = json.loads(out)
    assert any("supermemory model install" in w for w in report["warnings"] + report["problems"]), report
    code, out, err = _run(["model", "status"], home, project, SUPERMEMORY_EMBED_PROVIDER="onnx")
    assert code == 1 and "damaged" in out
    assert_session_start_ok(*_run(["hook", "session-start"], home, project, _session_start_payload(project),
                                  SUPERMEMORY_EMBED_PROVIDER="onnx"))
    assert {name: _sha(model_dir / name) for name in before} == before


# --- an unwritable data dir ------------------------------------------------------------------------

@pytest.mark.parametrize("with_db", [False, True])
def test_an_unwritable_data_dir_gives_a_clear_error_and_the_hook_still_exits_0(tmp_path, with_db):
    home = tmp_path / "home"
    home.mkdir()
    if with_db:
        with MemoryStore(home / "memory.db", config=Config(home=home), embedder=HashProvider(),
                         namespace="proj") as store:
            store.remember("Stored before the folder became read-only", kind="fact")
        before = _sha(home / "memory.db")
    os.chmod(home, stat.S_IRUSR | stat.S_IXUSR)  # 0500
    project = _project(tmp_path)
    try:
        root = os.access(home, os.W_OK)
        code, out, err = _run(["remember", "cannot be stored"], home, project)
        # supermemory narrows permissions but never widens them: the folder stays read-only
        assert stat.S_IMODE(os.stat(home).st_mode) == 0o500
        if root:
            pytest.skip("running as root: chmod does not make the folder unwritable")
        assert code == 1 and err.startswith("error: ") and "Traceback" not in err, err
        assert str(home) in err and "SUPERMEMORY_HOME" in err and "writable" in err, err
        assert_session_start_ok(*_run(["hook", "session-start"], home, project, _session_start_payload(project)))
        if with_db:
            assert _sha(home / "memory.db") == before
    finally:
        os.chmod(home, stat.S_IRWXU)


def test_a_data_dir_that_is_a_file_gives_a_clear_error_even_for_root(tmp_path):
    home = tmp_path / "home"
    home.write_text("someone's notes, not a folder\n")
    before = _sha(home)
    project = _project(tmp_path)
    code, out, err = _run(["remember", "cannot be stored"], home, project)
    assert code == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert str(home) in err and "SUPERMEMORY_HOME" in err, err
    assert_session_start_ok(*_run(["hook", "session-start"], home, project, _session_start_payload(project)))
    assert _sha(home) == before


# --- a full disk -----------------------------------------------------------------------------------

def _table_counts(store: MemoryStore) -> dict:
    counts = {t: store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in ("memories", "chunks", "vectors", "fts", "links", "search_log")}
    if store.driver.vec:
        counts["vec_mem"] = store.conn.execute("SELECT count(*) FROM vec_mem").fetchone()[0]
    return counts


def test_a_full_disk_fails_with_a_clear_storage_error_and_leaves_nothing_partial(tmp_path):
    home = tmp_path / "home"
    db = home / "memory.db"
    store = MemoryStore(db, config=Config(home=home), embedder=HashProvider(), namespace="proj")
    try:
        kept = store.remember("A memory stored while there was room", kind="fact")["id"]
        for n in range(5):
            store.remember(f"Filler memory {n} about the cache", kind="note")
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages}").fetchone()  # the disk is now full
        before = _table_counts(store)
        big = "Large memory " + " ".join(f"word{n}" for n in range(30_000))
        with pytest.raises(StorageError, match="full") as caught:
            store.remember(big, kind="fact")
        assert "free some disk space" in str(caught.value).lower()  # names the fix
        with pytest.raises(StorageError, match="full"):
            store.update(kept, content=big)
        assert _table_counts(store) == before
        assert not store.conn.in_transaction
        # through the MCP dispatch it is a tool error naming the problem, not an internal error
        session = Session(store.config, store_factory=lambda namespace: store)
        frame = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": "memory_remember", "arguments": {"content": big}}}
        response = session.handle_frame(json.dumps(frame).encode())
        assert "error" not in response or response["error"]["code"] != INTERNAL_ERROR, response
        assert response["result"]["isError"] is True and "full" in response["result"]["content"][0]["text"]
        assert _table_counts(store) == before
        # reads keep working, and once there is room again so do writes
        assert store.recall("memory stored while there was room", touch=False)["results"]
        store.conn.execute("PRAGMA max_page_count = 1073741823").fetchone()
        assert store.remember(big, kind="fact")["status"] == "created"
    finally:
        store.close()
    check_consistency(db)
    project = _project(tmp_path)
    answer = assert_session_start_ok(*_run(["hook", "session-start"], home, project, _session_start_payload(project)))
    assert answer is not None
