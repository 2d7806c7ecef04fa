"""Hook entry points (`supermemory hook session-start|pre-compact|session-end|stop`) for Claude Code
and Codex: the SessionStart answer, fail-open behaviour, session capture, housekeeping."""
from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from supermemory import hooks
from supermemory.config import load_config
from supermemory.core import MemoryStore
from supermemory.embed import HashProvider
from supermemory.errors import EmbeddingUnavailableError

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
CLAUDE_FIXTURE = FIXTURES / "claude_session.jsonl"
CODEX_FIXTURE = FIXTURES / "codex_rollout.jsonl"
CLAUDE_SESSION = "7f3c2a9e-1b4d-4c8e-9f10-2a3b4c5d6e7f"
CODEX_SESSION = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"

GITHUB_TOKEN = "ghp_" + "Zq8Xw2Rt5Yu7Io9Pa1Sd3Fg4Hj6Kl0Mn2Bv4"  # 4 + 36
ANTHROPIC_KEY = "sk-ant-api03-" + "Qw7Er9Ty1Ui3Op5As7Df9Gh1Jk3Lz5Xc7Vb9Nm1Qa3Ws5Ed7Rf9Tg1Yh"
assert len(GITHUB_TOKEN) == 40


# --- helpers ---------------------------------------------------------------------------------------

@pytest.fixture
def home(isolated_home) -> Path:
    return isolated_home


@pytest.fixture
def hash_env(monkeypatch):
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")


def proc_env(home: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SUPERMEMORY", "CLAUDE_", "CODEX_"))}
    env.update(SUPERMEMORY_HOME=str(home), SUPERMEMORY_EMBED_PROVIDER="hash", PYTHONPATH=str(ROOT))
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def run_proc(event: str, payload, env: dict, cwd: Path) -> tuple[subprocess.CompletedProcess, float]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "supermemory", "hook", event], input=data, env=env, cwd=str(cwd),
                          capture_output=True, text=True, timeout=60)
    return proc, time.monotonic() - started


def assert_stdout_ok(stdout: str) -> None:
    """Either nothing at all or exactly one JSON object."""
    if stdout.strip():
        lines = stdout.strip().splitlines()
        assert len(lines) == 1, stdout
        assert isinstance(json.loads(lines[0]), dict)


def parse_session_start(stdout: str) -> str:
    lines = stdout.strip().splitlines()
    assert len(lines) == 1, stdout
    answer = json.loads(lines[0])
    assert set(answer) == {"hookSpecificOutput"}
    assert set(answer["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str) and context.strip()
    return context


def open_store(home: Path) -> MemoryStore:
    config = load_config(home=home)
    return MemoryStore(home / "memory.db", config=config, embedder=HashProvider(), namespace="*")


def session_rows(home: Path, *, live_only: bool = True) -> list[dict]:
    store = open_store(home)
    try:
        where = "kind = 'session'" + (" AND superseded_by IS NULL AND deleted_at IS NULL" if live_only else "")
        rows = store.conn.execute(f"SELECT id, namespace, title, body, source, root_id, external_key FROM memories "
                                  f"WHERE {where} ORDER BY id").fetchall()
    finally:
        store.close()
    return [{"id": r[0], "namespace": r[1], "title": r[2], "body": r[3], "source": json.loads(r[4]),
             "root_id": r[5], "external_key": r[6]} for r in rows]


def history_len(home: Path, memory_id: int) -> int:
    store = open_store(home)
    try:
        return len(store.history(memory_id, namespace="*")["versions"])
    finally:
        store.close()


def snapshot(home: Path) -> tuple:
    store = open_store(home)
    try:
        return (store.conn.execute("SELECT * FROM memories ORDER BY id").fetchall(),
                store.conn.execute("SELECT * FROM capture_state ORDER BY session_key").fetchall(),
                store.conn.execute("SELECT id, memory_id, seq, text FROM chunks ORDER BY id").fetchall())
    finally:
        store.close()


def claude_payload(transcript: Path, cwd: Path, event: str = "PreCompact", session: str = CLAUDE_SESSION, **extra):
    payload = {"session_id": session, "transcript_path": str(transcript), "cwd": str(cwd),
               "hook_event_name": event}
    payload.update(extra)
    return payload


def codex_payload(cwd: Path, *, transcript: Path | None = None, event: str = "Stop", session: str = CODEX_SESSION,
                  **extra):
    payload = {"session_id": session, "transcript_path": str(transcript) if transcript else None, "cwd": str(cwd),
               "hook_event_name": event, "model": "gpt-5-codex", "permission_mode": "default"}
    payload.update(extra)
    return payload


def claude_line(n: int, kind: str, content, *, ts: str = "2026-11-30T11:00:00.000Z") -> dict:
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/dev/shop",
            "sessionId": CLAUDE_SESSION, "version": "2.0.50", "gitBranch": "fix/flaky-login", "type": kind,
            "message": {"role": kind, "content": content}, "uuid": f"b0000000-0000-4000-8000-{n:012d}",
            "timestamp": ts}


def append_lines(path: Path, objs: list[dict], *, prefix: str = "") -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(prefix + "".join(json.dumps(o) + "\n" for o in objs))


def claude_copy(tmp_path: Path, name: str = "claude.jsonl") -> Path:
    target = tmp_path / "transcripts" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CLAUDE_FIXTURE, target)
    return target


def codex_home_with_rollout(tmp_path: Path, session: str = CODEX_SESSION) -> tuple[Path, Path]:
    codex_home = tmp_path / "codex-home"
    folder = codex_home / "sessions" / "2026" / "11" / "30"
    folder.mkdir(parents=True)
    rollout = folder / f"rollout-2026-11-30T10-00-00-{session}.jsonl"
    shutil.copyfile(CODEX_FIXTURE, rollout)
    return codex_home, rollout


def project(tmp_path: Path, name: str = "shop") -> Path:
    path = tmp_path / name
    path.mkdir(exist_ok=True)
    return path


# --- SessionStart ------------------------------------------------------------------------------------

@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_prints_one_json_object_for_every_source(tmp_path, hash_env, source):
    out = io.StringIO()
    payload = {"session_id": "s-1", "transcript_path": str(tmp_path / "none.jsonl"), "cwd": str(project(tmp_path)),
               "hook_event_name": "SessionStart", "source": source}
    assert hooks.run_hook("session-start", stdin=io.StringIO(json.dumps(payload)), stdout=out, budget=120) == 0
    context = parse_session_start(out.getvalue())
    assert "shop" in context


def test_session_start_answers_a_codex_payload_in_a_subprocess(tmp_path, home):
    cwd = project(tmp_path, "api")
    payload = {"session_id": CODEX_SESSION, "transcript_path": None, "cwd": str(cwd), "hook_event_name": "SessionStart",
               "model": "gpt-5-codex", "permission_mode": "default", "source": "startup"}
    proc, elapsed = run_proc("session-start", payload, proc_env(home), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "api" in parse_session_start(proc.stdout)
    assert elapsed < 10


def test_session_start_on_a_fresh_data_dir_creates_no_database(tmp_path, home):
    """A hook that only reads never creates the database (fresh-user run fu34, D8)."""
    payload = {"session_id": "s", "cwd": str(project(tmp_path)), "hook_event_name": "SessionStart", "source": "startup"}
    proc, _ = run_proc("session-start", payload, proc_env(home), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "no memories yet" in parse_session_start(proc.stdout)
    assert not (home / "memory.db").exists()
    assert not any(p.name.startswith("memory.db") for p in home.iterdir()) if home.exists() else True


def test_session_start_briefs_the_project_namespace(tmp_path, home, hash_env):
    cwd = project(tmp_path, "shop")
    with MemoryStore(home / "memory.db", config=load_config(), embedder=HashProvider(), namespace="shop") as store:
        store.remember("Use pnpm, never npm, in this repository", kind="decision")
    with MemoryStore(home / "memory.db", config=load_config(), embedder=HashProvider(), namespace="elsewhere") as store:
        store.remember("The elsewhere project deploys on Fridays", kind="decision", create_namespace=True)
    answer = hooks.session_start({"cwd": str(cwd), "source": "startup"})
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert "pnpm" in context
    assert "Fridays" not in context


def test_namespace_comes_from_payload_then_env_then_process_cwd(tmp_path, monkeypatch):
    env = {"SUPERMEMORY_PROJECT_CWD": "/work/from-env", "CLAUDE_PROJECT_DIR": "/work/from-claude"}
    assert hooks._project_dir({"cwd": "/work/from-payload"}, env) == "/work/from-payload"
    assert hooks._project_dir({"cwd": "  "}, env) == "/work/from-env"
    assert hooks._project_dir({}, {"CLAUDE_PROJECT_DIR": "/work/from-claude"}) == "/work/from-claude"
    monkeypatch.chdir(tmp_path)
    assert hooks._project_dir({"cwd": None}, {}) == os.getcwd()


@pytest.mark.parametrize("var", ["SUPERMEMORY_PROJECT_CWD", "CLAUDE_PROJECT_DIR"])
def test_session_start_without_payload_cwd_uses_the_environment(tmp_path, home, hash_env, monkeypatch, var):
    cwd = project(tmp_path, "envproj")
    with MemoryStore(home / "memory.db", config=load_config(), embedder=HashProvider(), namespace="envproj") as store:
        store.remember("envproj builds with make release", kind="decision")
    monkeypatch.setenv(var, str(cwd))
    context = hooks.session_start({"source": "startup"})["hookSpecificOutput"]["additionalContext"]
    assert "make release" in context


def test_session_start_loads_neither_numpy_nor_onnxruntime_nor_the_stemmer(tmp_path, home):
    with MemoryStore(home / "memory.db", config=load_config(), embedder=HashProvider(), namespace="shop") as store:
        store.remember("Pinned rule: run the linters before committing", kind="preference", pinned=True)
        store.remember("Open task: document SESSION_TTL", kind="task")
        store.remember("We chose SQLite over Postgres for the cache", kind="decision")
    payload = {"session_id": "s", "transcript_path": None, "cwd": str(project(tmp_path)), "source": "startup",
               "hook_event_name": "SessionStart", "model": "gpt-5-codex", "permission_mode": "default"}
    code = ("import io, json, sys\n"
            "from supermemory.hooks import run_hook\n"
            f"out = io.StringIO()\nrc = run_hook('session-start', stdin=io.StringIO({json.dumps(payload)!r}), stdout=out)\n"
            "heavy = [m for m in ('numpy', 'onnxruntime', 'tokenizers', 'sqlite_vec', 'Stemmer') if m in sys.modules]\n"
            "print(json.dumps({'rc': rc, 'heavy': heavy, 'out': out.getvalue()}))\n")
    proc = subprocess.run([sys.executable, "-c", code], env=proc_env(home, SUPERMEMORY_EMBED_PROVIDER=None),
                          capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["rc"] == 0
    assert report["heavy"] == []
    context = parse_session_start(report["out"])
    assert "linters" in context and "SQLite over Postgres" in context


# --- platform detection -------------------------------------------------------------------------------

def test_detect_platform(tmp_path):
    codex_home, rollout = codex_home_with_rollout(tmp_path)
    renamed = tmp_path / "some" / "where.jsonl"  # content decides, not the name
    renamed.parent.mkdir()
    shutil.copyfile(CODEX_FIXTURE, renamed)
    claude = claude_copy(tmp_path, "rollout-looking.jsonl")
    assert hooks.detect_platform({"transcript_path": str(rollout)}, {}) == "codex"
    assert hooks.detect_platform({"transcript_path": str(renamed)}, {}) == "codex"
    assert hooks.detect_platform({"transcript_path": str(claude)}, {}) == "claude-code"
    assert hooks.detect_platform({"transcript_path": "/home/u/.codex/sessions/x.jsonl"}, {}) == "codex"
    assert hooks.detect_platform({"transcript_path": "/home/u/.claude/projects/p/abc.jsonl"}, {}) == "claude-code"
    assert hooks.detect_platform({"transcript_path": str(codex_home / "sessions" / "new.jsonl")},
                                 {"CODEX_HOME": str(codex_home)}) == "codex"
    # Codex may send a null transcript path; Claude Code always sends one (CLAUDE_PROJECT_DIR can leak in).
    assert hooks.detect_platform({"session_id": "x", "transcript_path": None}, {"CLAUDE_PROJECT_DIR": "/p"}) == "codex"
    assert hooks.detect_platform({"model": "gpt-5", "permission_mode": "default"}, {}) == "codex"
    assert hooks.detect_platform({"model": "m", "permission_mode": "default"}, {"CLAUDE_PROJECT_DIR": "/p"}) == "claude-code"
    assert hooks.detect_platform({}, {}) == "claude-code"
    assert hooks.detect_platform({"transcript_path": str(claude)}, {"SUPERMEMORY_PLATFORM": "codex"}) == "codex"
    assert hooks.detect_platform({"transcript_path": None}, {"SUPERMEMORY_PLATFORM": "claude-code"}) == "claude-code"


# --- fail open -------------------------------------------------------------------------------------------

def _make_db(home: Path, tmp_path: Path) -> Path:
    with MemoryStore(home / "memory.db", config=load_config(home=home), embedder=HashProvider(),
                     namespace="shop") as store:
        for i in range(40):
            store.remember(f"memory number {i}: " + "lorem ipsum dolor " * 40, kind="note")
    return home / "memory.db"


def _damage(kind: str, home: Path, tmp_path: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    db = home / "memory.db"
    if kind == "garbage":
        db.write_bytes(os.urandom(8192) + b"not a database at all" * 100)
        return db
    _make_db(home, tmp_path)
    assert not (home / "memory.db-wal").exists() or (home / "memory.db-wal").stat().st_size == 0
    data = db.read_bytes()
    if kind == "truncated-mid-page":
        db.write_bytes(data[: len(data) // 2 + 123])
    elif kind == "truncated-at-page":
        db.write_bytes(data[: (len(data) // 2 // 4096) * 4096])
    elif kind == "header-only":
        db.write_bytes(data[:4096])
    return db


EVENT_PAYLOADS = ["session-start", "pre-compact", "session-end", "stop"]


@pytest.mark.parametrize("damage", ["garbage", "truncated-mid-page", "truncated-at-page", "header-only"])
@pytest.mark.parametrize("event", EVENT_PAYLOADS)
def test_damaged_db_fails_open_and_is_never_modified(tmp_path, home, damage, event):
    db = _damage(damage, home, tmp_path)
    before = db.read_bytes()
    transcript = claude_copy(tmp_path)
    proc, elapsed = run_proc(event, claude_payload(transcript, project(tmp_path), source="startup"), proc_env(home),
                             tmp_path)
    assert proc.returncode == 0
    assert elapsed < 10
    assert_stdout_ok(proc.stdout)
    assert proc.stderr.strip()
    assert db.read_bytes() == before


def test_direct_check_db_file_accepts_healthy_and_missing_files(tmp_path, home):
    # Accepting means returning without raising, and leaving the file as it was (a check never creates one).
    hooks.check_db_file(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()
    (tmp_path / "empty.db").write_bytes(b"")
    hooks.check_db_file(tmp_path / "empty.db")
    assert (tmp_path / "empty.db").read_bytes() == b""
    healthy = _make_db(home, tmp_path)
    before = healthy.read_bytes()
    hooks.check_db_file(healthy)
    assert healthy.read_bytes() == before
    with pytest.raises(hooks.DamagedDatabase):
        hooks.check_db_file(_damage("truncated-at-page", tmp_path / "other", tmp_path))


def test_unwritable_data_dir_fails_open(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the data dir's parent should be")
    home = blocker / "smhome"
    for event in EVENT_PAYLOADS:
        proc, elapsed = run_proc(event, claude_payload(claude_copy(tmp_path), project(tmp_path)), proc_env(home),
                                 tmp_path)
        assert proc.returncode == 0
        assert elapsed < 10
        if event == "session-start":   # the agent hears memory is out (stderr reaches only verbose mode)
            context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
            assert "memory is unavailable" in context and "supermemory doctor" in context
        else:
            assert proc.stdout == ""
        assert proc.stderr.strip()
    assert blocker.read_text().startswith("a file")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_data_dir_fails_open(tmp_path):
    home = tmp_path / "ro"
    home.mkdir()
    home.chmod(0o500)
    try:
        for event in EVENT_PAYLOADS:
            proc, elapsed = run_proc(event, claude_payload(claude_copy(tmp_path), project(tmp_path)), proc_env(home),
                                     tmp_path)
            assert proc.returncode == 0 and elapsed < 10
            assert_stdout_ok(proc.stdout)
            assert proc.stderr.strip()
    finally:
        home.chmod(0o700)


@pytest.mark.parametrize("raw", ["{not json", "[1, 2, 3]", "\x00\xff garbage"])
@pytest.mark.parametrize("event", EVENT_PAYLOADS)
def test_invalid_stdin_fails_open(tmp_path, home, raw, event):
    proc, elapsed = run_proc(event, raw, proc_env(home), project(tmp_path))
    assert proc.returncode == 0 and elapsed < 10
    assert_stdout_ok(proc.stdout)
    assert "stdin" in proc.stderr
    if event == "session-start":
        parse_session_start(proc.stdout)  # still briefs, for the process cwd's project


def test_missing_model_fails_open_and_never_pins_the_fallback(tmp_path, home):
    empty = tmp_path / "no-model"
    empty.mkdir()
    env = proc_env(home, SUPERMEMORY_EMBED_PROVIDER=None, SUPERMEMORY_MODEL_DIR=str(empty))
    transcript = claude_copy(tmp_path)
    proc, elapsed = run_proc("session-start", {"cwd": str(project(tmp_path)), "source": "startup"}, env, tmp_path)
    assert proc.returncode == 0 and elapsed < 10
    parse_session_start(proc.stdout)
    proc, elapsed = run_proc("pre-compact", claude_payload(transcript, project(tmp_path)), env, tmp_path)
    assert proc.returncode == 0 and elapsed < 10
    assert proc.stdout == ""
    assert "model" in proc.stderr and "lexical" in proc.stderr
    rows = session_rows(home)
    assert len(rows) == 1 and "flaky login" in rows[0]["body"]
    conn = sqlite3.connect(home / "memory.db")
    try:
        assert conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone() is None
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    finally:
        conn.close()


def test_unknown_event_and_missing_stdin_fail_open(capsys):
    assert hooks.run_hook("post-tool-use", stdin=io.StringIO("{}"), stdout=io.StringIO(), budget=120) == 0
    assert "unknown event" in capsys.readouterr().err
    assert hooks._read_payload(None) == {}


@pytest.mark.parametrize("argv", [["hook", "user-prompt-submit"], ["hook"], ["hook", "stop", "--platform", "claude"],
                                  ["hook", "pre-compact", "--matcher", "auto"], ["-v", "hook", "stop", "extra"]])
def test_hook_arguments_the_cli_does_not_know_still_exit_0(tmp_path, home, argv):
    """Exit 2 is a blocking error to Claude Code and Codex (a Stop hook that exits 2 keeps the agent going
    with our usage text): a hook registered with an event or option this version lacks must fail open."""
    env = proc_env(home)
    proc = subprocess.run([sys.executable, "-m", "supermemory", *argv], input="{}", env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert_stdout_ok(proc.stdout)
    assert "supermemory hook" in proc.stderr


def test_a_misspelled_platform_still_answers_session_start(tmp_path, home):
    proc = subprocess.run([sys.executable, "-m", "supermemory", "hook", "session-start", "--platform", "claude"],
                          input=json.dumps({"cwd": str(project(tmp_path))}), env=proc_env(home), cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "shop" in parse_session_start(proc.stdout)
    assert "unknown platform 'claude'" in proc.stderr


def test_watchdog_ends_a_stuck_hook_with_exit_0_and_no_output(tmp_path, home):
    code = ("import io, sys, threading\n"
            "from supermemory import hooks\n"
            "hooks.session_start = lambda payload: threading.Event().wait()\n"
            "hooks.run_hook('session-start', stdin=io.StringIO('{}'), budget=0.3)\n"
            "print('not reached')\n")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], env=proc_env(home), capture_output=True, text=True,
                          timeout=60, cwd=str(tmp_path))
    assert time.monotonic() - started < 10
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert "time budget" in proc.stderr


def test_embedding_past_the_deadline_stores_lexical_only(tmp_path, home, hash_env):
    config = load_config(cwd=str(project(tmp_path)))
    late = hooks._HookEmbedder(config, deadline=time.monotonic() - 1)
    with pytest.raises(EmbeddingUnavailableError):
        late.embed_multi(["x"])
    with MemoryStore(home / "memory.db", config=config, embedder=late) as store:
        late.pinned = store.pinned_model
        result = store.capture_session(str(claude_copy(tmp_path)), session_id=CLAUDE_SESSION, platform="claude-code")
        assert result["status"] == "created"
        assert store.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    assert len(session_rows(home)) == 1


def test_hook_embedder_uses_hash_only_for_a_db_already_pinned_to_it(tmp_path, home, monkeypatch):
    monkeypatch.setenv("SUPERMEMORY_MODEL_DIR", str(tmp_path / "no-model"))
    config = load_config()
    embedder = hooks._HookEmbedder(config)
    with pytest.raises(EmbeddingUnavailableError, match="lexical"):
        embedder.fingerprint()
    pinned = hooks._HookEmbedder(config)
    pinned.pinned = lambda: HashProvider().fingerprint()
    assert pinned.fingerprint() == HashProvider().fingerprint()
    assert pinned.embed_multi(["hello world"]).shape == (1, 384)


# --- capture: Claude Code ---------------------------------------------------------------------------------

def test_claude_capture_stores_one_session_memory(tmp_path, home, hash_env):
    transcript = claude_copy(tmp_path)
    result = hooks.capture(claude_payload(transcript, project(tmp_path)))
    assert result["status"] == "created"
    rows = session_rows(home)
    assert len(rows) == 1
    body = rows[0]["body"]
    assert "Fix the flaky login test" in body                       # a request
    assert "make the session timeout configurable" in body           # the second request
    assert "app/auth.py" in body and "tests/test_session_ttl.py" in body  # edited files
    assert "python -m pytest -q" in body                             # a Bash command
    assert "KeyError: 'SESSION_TTL'" in body                         # the error
    assert rows[0]["namespace"] == "shop"
    assert rows[0]["source"]["platform"] == "claude-code"
    assert rows[0]["source"]["model"] == "claude-sonnet-4-5-20250929"
    assert rows[0]["source"]["session"] == CLAUDE_SESSION
    assert rows[0]["external_key"] == f"claude-code:{CLAUDE_SESSION}"


@pytest.mark.parametrize("event", ["pre-compact", "session-end", "stop"])
def test_capture_events_in_a_subprocess(tmp_path, home, event):
    transcript = claude_copy(tmp_path)
    proc, elapsed = run_proc(event, claude_payload(transcript, project(tmp_path)), proc_env(home), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert elapsed < 10
    rows = session_rows(home)
    assert len(rows) == 1 and rows[0]["source"]["platform"] == "claude-code"


def _claude_more() -> tuple[str, list[dict]]:
    rest_of_partial_line = 'OG."},"uuid":"a0000000-0000-4000-8000-000000000025","timestamp":"2026-11-30T10:22:00.000Z"}\n'
    more = [
        claude_line(1, "user", "Now bump the version in pyproject.toml and tag the release."),
        claude_line(2, "assistant", [{"type": "tool_use", "id": "toolu_20", "name": "Bash",
                                      "input": {"command": "git tag v1.4.2", "description": "Tag"}}]),
        claude_line(3, "user", [{"type": "tool_result", "tool_use_id": "toolu_20", "content": "", "is_error": False}]),
    ]
    return rest_of_partial_line, more


def test_new_lines_make_a_new_version_not_a_duplicate(tmp_path, home, hash_env):
    transcript = claude_copy(tmp_path)
    payload = claude_payload(transcript, project(tmp_path))
    first = hooks.capture(payload)
    prefix, more = _claude_more()
    append_lines(transcript, more, prefix=prefix)
    second = hooks.capture(payload)
    assert second["status"] == "updated"
    rows = session_rows(home)
    assert len(rows) == 1
    assert "bump the version in pyproject.toml" in rows[0]["body"]
    assert "update the CHANGELOG" in rows[0]["body"]  # the line that was partial at the first capture
    assert "git tag v1.4.2" in rows[0]["body"]
    assert history_len(home, rows[0]["id"]) == 2
    assert rows[0]["root_id"] == int(first["id"][1:])


def test_no_new_lines_changes_nothing(tmp_path, home, hash_env):
    transcript = claude_copy(tmp_path)
    payload = claude_payload(transcript, project(tmp_path))
    hooks.capture(payload)
    before = snapshot(home)
    again = hooks.capture(payload)
    assert again["status"] == "unchanged"
    assert snapshot(home) == before
    with open(transcript, "a", encoding="utf-8") as fh:  # a partial line is not read yet
        fh.write('{"type":"user","message":{"role":"user","content":"half a li')
    assert hooks.capture(payload)["status"] == "unchanged"
    assert snapshot(home) == before


def test_same_file_under_another_path_is_not_read_twice(tmp_path, home, hash_env):
    transcript = claude_copy(tmp_path)
    hooks.capture(claude_payload(transcript, project(tmp_path)))
    before = snapshot(home)
    link = tmp_path / "link.jsonl"
    link.symlink_to(transcript)
    assert hooks.capture(claude_payload(link, project(tmp_path)))["status"] == "unchanged"
    assert snapshot(home)[0] == before[0]
    moved = tmp_path / "moved.jsonl"  # the session continues in another file: read it, keep one memory
    shutil.copyfile(transcript, moved)
    hooks.capture(claude_payload(moved, project(tmp_path)))
    rows = session_rows(home)
    assert len(rows) == 1
    assert rows[0]["body"].count("Fix the flaky login test") == 1


def test_truncated_transcript_starts_over_in_the_same_memory(tmp_path, home, hash_env):
    transcript = claude_copy(tmp_path)
    payload = claude_payload(transcript, project(tmp_path))
    hooks.capture(payload)
    lines = CLAUDE_FIXTURE.read_text().splitlines(keepends=True)
    transcript.write_text("".join(lines[:4]))
    hooks.capture(payload)
    rows = session_rows(home)
    assert len(rows) == 1
    assert "Fix the flaky login test" in rows[0]["body"]
    assert "app/auth.py" not in rows[0]["body"]


def test_lost_capture_state_still_updates_the_same_memory(tmp_path, home, hash_env):
    """The watchdog may end the hook after the memory committed but before its bookkeeping did."""
    transcript = claude_copy(tmp_path)
    payload = claude_payload(transcript, project(tmp_path))
    hooks.capture(payload)
    store = open_store(home)
    store.conn.execute("DELETE FROM capture_state")
    store.close()
    prefix, more = _claude_more()
    append_lines(transcript, more, prefix=prefix)
    hooks.capture(payload)
    rows = session_rows(home)
    assert len(rows) == 1
    assert "git tag v1.4.2" in rows[0]["body"]
    assert history_len(home, rows[0]["id"]) == 2


def test_legacy_session_key_is_adopted(tmp_path, home, hash_env):
    transcript = claude_copy(tmp_path)
    payload = claude_payload(transcript, project(tmp_path))
    hooks.capture(payload)
    store = open_store(home)
    store.conn.execute("UPDATE capture_state SET session_key = ?", (CLAUDE_SESSION,))
    store.close()
    before = snapshot(home)
    assert hooks.capture(payload)["status"] == "unchanged"
    assert snapshot(home)[0] == before[0]
    prefix, more = _claude_more()
    append_lines(transcript, more, prefix=prefix)
    hooks.capture(payload)
    assert len(session_rows(home)) == 1
    keys = [r[0] for r in snapshot(home)[1]]
    assert keys == [f"claude-code:{CLAUDE_SESSION}"]


# --- capture: Codex ---------------------------------------------------------------------------------------

def _assert_codex_body(row: dict) -> None:
    body = row["body"]
    assert "/health endpoint returns 500" in body
    assert "src/api/health.py" in body and "tests/test_health.py" in body
    assert "pytest -q" in body
    assert "assert 500 == 503" in body
    assert row["source"]["platform"] == "codex"


def test_codex_capture_with_transcript_path(tmp_path, home, hash_env):
    _, rollout = codex_home_with_rollout(tmp_path)
    payload = codex_payload(project(tmp_path, "api"), transcript=rollout)
    del payload["model"]
    assert hooks.capture(payload)["status"] == "created"
    rows = session_rows(home)
    assert len(rows) == 1
    _assert_codex_body(rows[0])
    assert rows[0]["source"]["model"] == "gpt-5-codex"  # from the rollout's turn_context
    assert rows[0]["namespace"] == "api"
    assert hooks.capture(payload)["status"] == "unchanged"


def test_codex_capture_finds_the_rollout_in_codex_home(tmp_path, home, hash_env, monkeypatch):
    codex_home, rollout = codex_home_with_rollout(tmp_path)
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    payload = codex_payload(project(tmp_path, "api"), model="gpt-5.1-codex")
    assert payload["transcript_path"] is None
    assert hooks.capture(payload)["status"] == "created"
    rows = session_rows(home)
    assert len(rows) == 1
    _assert_codex_body(rows[0])
    assert rows[0]["source"]["model"] == "gpt-5.1-codex"  # the payload names the current model
    assert hooks.capture(payload)["status"] == "unchanged"
    append_lines(rollout, [
        {"timestamp": "2026-12-01T09:05:00.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "Also log the DB error before returning 503."}]}},
    ])
    assert hooks.capture(payload)["status"] == "updated"
    rows = session_rows(home)
    assert len(rows) == 1 and "log the DB error" in rows[0]["body"]
    assert history_len(home, rows[0]["id"]) == 2


def test_codex_capture_in_a_subprocess_with_null_transcript_path(tmp_path, home):
    codex_home, _ = codex_home_with_rollout(tmp_path)
    env = proc_env(home, CODEX_HOME=str(codex_home))
    proc, elapsed = run_proc("stop", codex_payload(project(tmp_path, "api")), env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and elapsed < 10
    rows = session_rows(home)
    assert len(rows) == 1
    _assert_codex_body(rows[0])


def test_codex_without_a_rollout_stores_nothing(tmp_path, home, hash_env, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "empty-codex"))
    assert hooks.capture(codex_payload(project(tmp_path, "api")))["status"] == "no transcript"
    assert session_rows(home) == []


def test_claude_and_codex_sessions_with_the_same_id_stay_apart(tmp_path, home, hash_env, monkeypatch):
    shared = CODEX_SESSION
    codex_home, _ = codex_home_with_rollout(tmp_path, shared)
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    transcript = claude_copy(tmp_path)
    cwd = project(tmp_path)
    hooks.capture(claude_payload(transcript, cwd, session=shared))
    hooks.capture(codex_payload(cwd, session=shared))
    rows = session_rows(home)
    assert sorted(r["source"]["platform"] for r in rows) == ["claude-code", "codex"]
    prefix, more = _claude_more()
    append_lines(transcript, more, prefix=prefix)
    hooks.capture(claude_payload(transcript, cwd, session=shared))
    rows = {r["source"]["platform"]: r for r in session_rows(home)}
    assert len(rows) == 2
    assert "git tag v1.4.2" in rows["claude-code"]["body"]
    assert "git tag" not in rows["codex"]["body"] and "/health" in rows["codex"]["body"]


# --- secrets ----------------------------------------------------------------------------------------------

def _secret_windows(secret: str, width: int = 10) -> set[str]:
    tail = secret.split("_", 1)[-1] if secret.startswith("ghp_") else secret[len("sk-ant-api03-"):]
    return {tail[i:i + width].lower() for i in range(len(tail) - width + 1)}


def _everything_stored(home: Path) -> str:
    conn = sqlite3.connect(home / "memory.db")
    try:
        parts = []
        for table, cols in (("memories", "title, body, summary, source, tags, external_key"),
                            ("chunks", "text"), ("capture_state", "session_key, path, digest"),
                            ("fts", "tokens")):
            for row in conn.execute(f"SELECT {cols} FROM {table}"):
                parts.extend(str(v) for v in row if v is not None)
        return "\n".join(parts).lower()
    finally:
        conn.close()


def _leaks(stored: str) -> list[str]:
    return [w for secret in (GITHUB_TOKEN, ANTHROPIC_KEY) for w in _secret_windows(secret) if w in stored]


def test_secrets_in_a_claude_transcript_are_stored_nowhere(tmp_path, home, hash_env):
    transcript = claude_copy(tmp_path)
    curl = f"curl -sf -H 'Authorization: token {GITHUB_TOKEN}' https://api.github.com/user"
    append_lines(transcript, [
        claude_line(10, "user", f"Use my key {ANTHROPIC_KEY} and the token {GITHUB_TOKEN} to call the API."),
        claude_line(11, "user", "x" * 270 + f" token {GITHUB_TOKEN} please"),  # straddles the request clip
        claude_line(12, "assistant", [
            {"type": "tool_use", "id": "toolu_30", "name": "Bash", "input": {"command": curl}},
            {"type": "tool_use", "id": "toolu_31", "name": "Bash",
             "input": {"command": "echo " + "y" * 175 + " " + curl}},  # straddles the command clip
            {"type": "tool_use", "id": "toolu_32", "name": "Bash",
             "input": {"command": f"export ANTHROPIC_API_KEY={ANTHROPIC_KEY} && ./deploy.sh"}}]),
        claude_line(13, "user", [
            {"type": "tool_result", "tool_use_id": "toolu_30", "is_error": True,
             "content": f"Exit code 22\ncurl: (22) 401 for token {GITHUB_TOKEN}"},
            {"type": "tool_result", "tool_use_id": "toolu_31", "is_error": True, "content": "Exit code 22"},
            {"type": "tool_result", "tool_use_id": "toolu_32", "is_error": True,
             "content": f"Exit code 1\nError: invalid x-api-key {ANTHROPIC_KEY}"}]),
    ], prefix="\n")
    hooks.capture(claude_payload(transcript, project(tmp_path)))
    rows = session_rows(home)
    assert len(rows) == 1 and "REDACTED" in rows[0]["body"]
    assert "curl -sf" in rows[0]["body"]
    stored = _everything_stored(home)
    assert _leaks(stored) == []


def test_secrets_in_a_codex_rollout_are_stored_nowhere(tmp_path, home, hash_env, monkeypatch):
    codex_home, rollout = codex_home_with_rollout(tmp_path)
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    args = json.dumps({"command": ["bash", "-lc", f"GITHUB_TOKEN={GITHUB_TOKEN} gh api user"], "workdir": "/home/dev/api"})
    append_lines(rollout, [
        {"timestamp": "2026-12-01T09:06:00.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": f"Deploy with {ANTHROPIC_KEY} please"}]}},
        {"timestamp": "2026-12-01T09:06:01.000Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "arguments": args, "call_id": "call_S1"}},
        {"timestamp": "2026-12-01T09:06:02.000Z", "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "call_S1",
                     "output": json.dumps({"output": f"HTTP 401 bad credentials {GITHUB_TOKEN}",
                                           "metadata": {"exit_code": 1, "duration_seconds": 0.1}})}},
    ])
    hooks.capture(codex_payload(project(tmp_path, "api")))
    rows = session_rows(home)
    assert len(rows) == 1 and "gh api user" in rows[0]["body"]
    assert _leaks(_everything_stored(home)) == []


# --- SessionEnd housekeeping and the capture switch ---------------------------------------------------------

def test_session_end_runs_maintenance_and_archives_expired_memories(tmp_path, home, hash_env):
    three_days_ago = time.time() - 3 * 86400
    with MemoryStore(home / "memory.db", config=load_config(), embedder=HashProvider(), namespace="shop",
                     clock=lambda: three_days_ago) as store:
        expired = store.remember("temporary: the staging DB is down today", ttl_days=1)["id"]
        kept = store.remember("the staging DB lives on db-staging-2")["id"]
    result = hooks.capture(claude_payload(claude_copy(tmp_path), project(tmp_path), event="SessionEnd"),
                           housekeeping=True)
    assert result["maintenance"]["expired"] == 1
    with open_store(home) as store:
        assert store.get(expired, namespace="*")["missing"] == [expired]
        reason = store.conn.execute("SELECT delete_reason FROM memories WHERE id = ?", (int(expired[1:]),)).fetchone()
        assert reason == ("expired",)
        assert store.get(kept, namespace="*")["memories"]


def test_session_end_gives_vectors_to_the_rest_of_a_long_text_within_its_budget(tmp_path, home, hash_env):
    config = load_config()
    config.settings["store"].update(chunk_max_tokens=20, chunk_overlap_tokens=0, write_embed_chunks=1)
    text = " ".join(f"Step {n}: the nightly job{n} copies table{n} to the archive{n}." for n in range(12))
    with MemoryStore(home / "memory.db", config=config, embedder=HashProvider(), namespace="shop") as store:
        pending = store.remember(text)["vectors_pending"]
    assert pending > 4
    started = time.monotonic()
    result = hooks.capture(claude_payload(claude_copy(tmp_path), project(tmp_path), event="SessionEnd"),
                           housekeeping=True, deadline=started + 2.0)
    assert result["maintenance"]["vectors_embedded"] == pending and time.monotonic() - started < 20
    with MemoryStore(home / "memory.db", config=config, embedder=HashProvider()) as store:
        assert store.health()["vectors_pending"] == 0


def test_session_end_subprocess_runs_maintenance(tmp_path, home):
    with MemoryStore(home / "memory.db", config=load_config(), embedder=HashProvider(), namespace="shop",
                     clock=lambda: time.time() - 3 * 86400) as store:
        expired = store.remember("temporary note that expires", ttl_days=1)["id"]
    proc, _ = run_proc("session-end", claude_payload(claude_copy(tmp_path), project(tmp_path), event="SessionEnd",
                                                     reason="exit"), proc_env(home), tmp_path)
    assert proc.returncode == 0, proc.stderr
    with open_store(home) as store:
        assert store.get(expired, namespace="*")["missing"] == [expired]
    assert len(session_rows(home)) == 1


@pytest.mark.parametrize("value", [False, "false"])
def test_capture_can_be_switched_off(tmp_path, home, value):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"capture": {"enabled": value}}))
    transcript = claude_copy(tmp_path)
    for event in ("pre-compact", "stop", "session-end"):
        proc, _ = run_proc(event, claude_payload(transcript, project(tmp_path)), proc_env(home), tmp_path)
        assert proc.returncode == 0 and proc.stdout == ""
    assert session_rows(home) == []


def test_broken_config_file_still_briefs(tmp_path, home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text("{broken")
    proc, _ = run_proc("session-start", {"cwd": str(project(tmp_path)), "source": "startup"}, proc_env(home), tmp_path)
    assert proc.returncode == 0
    parse_session_start(proc.stdout)
    assert "config" in proc.stderr


# --- the time budget ------------------------------------------------------------------------------------------

def test_stuck_embedder_is_abandoned_and_the_session_still_stored(tmp_path, home):
    transcript = claude_copy(tmp_path)
    payload = json.dumps(claude_payload(transcript, project(tmp_path)))
    code = ("import io, threading\n"
            "from supermemory import hooks\n"
            "from supermemory.embed import HashProvider\n"
            "class Stuck(HashProvider):\n"
            "    def embed_multi(self, texts, progress=None):\n"
            "        threading.Event().wait()\n"
            "hooks._HookEmbedder._resolve = lambda self: Stuck()\n"
            f"hooks.run_hook('pre-compact', stdin=io.StringIO({payload!r}), budget=2.0)\n"
            "print('not reached: the abandoned worker makes the hook end with os._exit(0)')\n")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], env=proc_env(home), capture_output=True, text=True,
                          timeout=60, cwd=str(tmp_path))
    assert time.monotonic() - started < 10
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "time budget" in proc.stderr and "lexical" in proc.stderr
    rows = session_rows(home)
    assert len(rows) == 1 and "flaky login" in rows[0]["body"]
    conn = sqlite3.connect(home / "memory.db")
    try:
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    finally:
        conn.close()


def test_a_huge_transcript_is_read_in_steps_under_a_deadline(tmp_path, home, hash_env):
    transcript = claude_copy(tmp_path)
    filler = "output line that nobody needs to remember\n" * 2000  # ~86 kB per tool result
    lines = []
    for i in range(60):
        lines.append(claude_line(100 + 2 * i, "assistant", [{"type": "tool_use", "id": f"toolu_f{i}", "name": "Bash",
                                                              "input": {"command": f"cat big_{i}.log"}}]))
        lines.append(claude_line(101 + 2 * i, "user", [{"type": "tool_result", "tool_use_id": f"toolu_f{i}",
                                                        "content": filler}]))
    lines.append(claude_line(999, "user", "Finally, summarise the logs in NOTES.md."))
    append_lines(transcript, lines, prefix="\n")
    assert transcript.stat().st_size > 4 * 1024 * 1024 + 500_000  # more than one 4 MiB step
    config = load_config(cwd=str(project(tmp_path)))
    with MemoryStore(home / "memory.db", config=config, embedder=HashProvider()) as store:
        first = store.capture_session(str(transcript), session_id=CLAUDE_SESSION, platform="claude-code",
                                      deadline=time.monotonic() - 1)
        assert first["complete"] is False  # one step read, the rest left for the next capture
        second = store.capture_session(str(transcript), session_id=CLAUDE_SESSION, platform="claude-code")
        assert second["complete"] is True and second["status"] == "updated"
    rows = session_rows(home)
    assert len(rows) == 1
    assert "summarise the logs in NOTES.md" in rows[0]["body"]
    assert "summarise the logs" not in session_rows(home, live_only=False)[0]["body"]  # the first step's version
    assert history_len(home, rows[0]["id"]) == 2


@pytest.mark.parametrize("source", ["startup", "compact"])
def test_session_start_context_holds_the_pinned_rule_and_the_open_task(tmp_path, home, source):
    cwd = project(tmp_path, "shop")
    with MemoryStore(home / "memory.db", config=load_config(), embedder=HashProvider(), namespace="shop") as store:
        store.remember("Never run migrations against prod by hand", kind="preference", pinned=True)
        store.remember("Finish the retry logic in the uploader", kind="task")
        done = store.remember("Old task that was finished", kind="task")
        store.update(done["id"], status="done")
    payload = {"session_id": "3f2c", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(cwd),
               "hook_event_name": "SessionStart", "source": source}
    proc, elapsed = run_proc("session-start", payload, proc_env(home), cwd)
    assert proc.returncode == 0 and elapsed < 10
    context = parse_session_start(proc.stdout)
    assert "Never run migrations against prod by hand" in context
    assert "Finish the retry logic in the uploader" in context
    open_tasks = context.split("## Open tasks", 1)[1].split("\n## ", 1)[0]
    assert "Finish the retry logic" in open_tasks and "Old task that was finished" not in open_tasks
    assert context.index("Pinned rules") < context.index("Open tasks")


def test_after_compaction_the_last_session_line_shows_its_open_ends_not_its_metadata(tmp_path, home, hash_env):
    cwd = project(tmp_path, "shop")
    transcript = tmp_path / "transcripts" / "open-ends.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        claude_line(1, "user", "The login test fails after the token change, fix it"),
        claude_line(2, "assistant", [{"type": "tool_use", "id": "t1", "name": "Bash",
                                      "input": {"command": "pytest -q tests/test_login.py"}}]),
        claude_line(3, "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "1 passed"}]),
        claude_line(4, "assistant", [{"type": "tool_use", "id": "t2", "name": "Edit",
                                      "input": {"file_path": f"{cwd}/auth.py", "old_string": "a", "new_string": "b"}}]),
        claude_line(5, "user", [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}]),
        claude_line(6, "assistant", [{"type": "text", "text": "Fixed the token check. TODO: add a refresh-token test."}]),
    ]
    for line in lines:
        line["cwd"] = str(cwd)
        if line["type"] == "assistant":
            line["message"]["model"] = "claude-sonnet-4-5"
    append_lines(transcript, lines)
    assert hooks.capture(claude_payload(transcript, cwd))["status"] == "created"
    context = hooks.session_start({"cwd": str(cwd), "source": "compact", "session_id": CLAUDE_SESSION})[
        "hookSpecificOutput"]["additionalContext"]
    line = context.split("## Last sessions\n", 1)[1].split("\n", 1)[0]
    assert "Open ends: TODO: add a refresh-token test." in line, line
    assert "Platform:" not in line and "Model:" not in line and "Branch:" not in line, line


# --- captures a hook could not finish (the database write-locked past the budget) ---------------------------

def owed_notes(home: Path) -> list[Path]:
    folder = home / "pending-captures"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def age_notes(home: Path, seconds: float = 60) -> None:
    """Make the notes look `seconds` old: their hooks have long ended (the retry leaves younger ones alone)."""
    for note in owed_notes(home):
        os.utime(note, (time.time() - seconds, time.time() - seconds))


def write_lock(home: Path, driver=sqlite3):
    """Another connection holding the database's write lock (as a long write elsewhere would); in this process,
    through the store's own driver (two SQLite libraries in one process do not see each other's locks)."""
    conn = driver.connect(str(home / "memory.db"), timeout=0, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def test_a_capture_skipped_under_a_write_lock_is_retried_by_the_next_session_start_once(tmp_path, home):
    transcript, cwd = claude_copy(tmp_path), project(tmp_path)
    open_store(home).close()
    (home / "config.json").write_text(json.dumps({"hooks": {"budget_seconds": 0.5}}))
    lock = write_lock(home)
    try:
        for event, name in (("pre-compact", "PreCompact"), ("stop", "Stop")):
            proc, _ = run_proc(event, claude_payload(transcript, cwd, event=name), proc_env(home), tmp_path)
            assert proc.returncode == 0 and proc.stdout == ""
            assert "time budget" in proc.stderr
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert session_rows(home) == []              # both hooks skipped the session: nothing was written
    assert len(owed_notes(home)) == 2            # ... but each left a note of it
    (home / "config.json").write_text(json.dumps({"hooks": {"budget_seconds": 2.0}}))
    age_notes(home)
    other = project(tmp_path, "elsewhere")
    for _ in range(2):                           # the next session (another project) starts, then another
        proc, _ = run_proc("session-start", {"cwd": str(other), "source": "startup"}, proc_env(home), tmp_path)
        assert proc.returncode == 0, proc.stderr
        parse_session_start(proc.stdout)
    rows = session_rows(home)
    assert len(rows) == 1                        # captured once, into its own project
    assert rows[0]["namespace"] == "shop" and rows[0]["external_key"] == f"claude-code:{CLAUDE_SESSION}"
    assert "Fix the flaky login test" in rows[0]["body"]
    assert history_len(home, rows[0]["id"]) == 1
    assert owed_notes(home) == []


def test_the_owed_capture_runs_after_the_briefing_is_written(tmp_path, home, hash_env, monkeypatch):
    from supermemory import capture

    hooks._note_owed(load_config(cwd=str(project(tmp_path))), str(claude_copy(tmp_path)), session_id=CLAUDE_SESSION,
                     platform="claude-code", payload={"cwd": str(project(tmp_path))})
    age_notes(home)
    out, seen = io.StringIO(), []
    real = capture.retry_pending

    def spy(*args, **kwargs):
        seen.append(out.getvalue())
        return real(*args, **kwargs)

    monkeypatch.setattr(capture, "retry_pending", spy)
    assert hooks.run_hook("session-start", stdin=io.StringIO(json.dumps({"cwd": str(tmp_path)})), stdout=out,
                          budget=120) == 0
    assert len(seen) == 1 and parse_session_start(seen[0])   # the whole answer was out before the retry began
    assert [row["namespace"] for row in session_rows(home)] == ["shop"]
    assert owed_notes(home) == []


def test_a_session_start_with_nothing_owed_opens_no_second_store(tmp_path, home, hash_env, monkeypatch):
    opened = []
    real = hooks._open_store
    monkeypatch.setattr(hooks, "_open_store", lambda *a, **k: opened.append(1) or real(*a, **k))
    out = io.StringIO()
    assert hooks.run_hook("session-start", stdin=io.StringIO(json.dumps({"cwd": str(tmp_path)})), stdout=out,
                          budget=120) == 0
    parse_session_start(out.getvalue())
    assert len(opened) == 1


def test_a_finished_capture_leaves_no_note_and_a_young_note_is_left_to_its_hook(tmp_path, home, hash_env):
    from supermemory import capture

    transcript, cwd = claude_copy(tmp_path), project(tmp_path)
    assert hooks.capture(claude_payload(transcript, cwd))["status"] == "created"
    assert owed_notes(home) == []
    config = load_config(cwd=str(cwd))
    hooks._note_owed(config, str(transcript), session_id=CLAUDE_SESSION, platform="claude-code",
                     payload={"cwd": str(cwd)})
    with MemoryStore(home / "memory.db", config=config, embedder=HashProvider()) as store:
        min_age = capture.pending_min_age(config)
        assert capture.retry_pending(store.context, home, min_age=min_age) == []   # its hook may still run
        age_notes(home)
        assert [r["status"] for r in capture.retry_pending(store.context, home, min_age=min_age)] == ["unchanged"]
    assert owed_notes(home) == [] and len(session_rows(home)) == 1


def test_a_retry_that_finds_the_database_still_locked_keeps_the_note_and_waits_little(tmp_path, home, hash_env):
    from supermemory import capture

    transcript, cwd = claude_copy(tmp_path), project(tmp_path)
    config = load_config(cwd=str(cwd))
    hooks._note_owed(config, str(transcript), session_id=CLAUDE_SESSION, platform="claude-code",
                     payload={"cwd": str(cwd)})
    age_notes(home)
    with MemoryStore(home / "memory.db", config=config, embedder=HashProvider(), namespace="elsewhere") as store:
        lock = write_lock(home, store.context.driver.module)
        try:
            started = time.monotonic()
            result = capture.retry_pending(store.context, home, min_age=0, wait_ms=50)
            assert time.monotonic() - started < 5     # not the 30 s busy timeout
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        assert [r["status"] for r in result] == ["failed"] and "locked" in result[0]["error"]
        [note] = owed_notes(home)
        assert json.loads(note.read_text())["attempts"] == 1
        assert [r["status"] for r in capture.retry_pending(store.context, home, min_age=0)] == ["created"]
        assert capture.retry_pending(store.context, home, min_age=0) == []
    assert [row["namespace"] for row in session_rows(home)] == ["shop"]


def test_maintenance_captures_a_session_a_hook_left_owed(tmp_path, home, hash_env):
    """A user without the MCP server (which retries while idle) gets the owed session at `supermemory maintenance`."""
    transcript, cwd = claude_copy(tmp_path), project(tmp_path)
    config = load_config(cwd=str(cwd))
    hooks._note_owed(config, str(transcript), session_id=CLAUDE_SESSION, platform="claude-code",
                     payload={"cwd": str(cwd)})
    age_notes(home)
    with MemoryStore(home / "memory.db", config=config, embedder=HashProvider()) as store:
        assert store.maintenance()["sessions_captured"] == 1
        assert store.maintenance()["sessions_captured"] == 0
    assert owed_notes(home) == [] and [row["namespace"] for row in session_rows(home)] == ["shop"]


def test_an_owed_capture_claims_its_projects_name_when_it_writes_not_when_noted(tmp_path, home, hash_env):
    # A hook that notes a session as owed and then stores nothing must claim no name (a fresh-user run: an empty
    # transcript's SessionEnd took `backend` from the project that wrote first); the retry claims as it writes, so
    # when another folder of that name wrote in between, the session goes to its own project's name, not that one.
    from supermemory.core import MemoryStore

    MemoryStore(home / "memory.db", config=load_config(cwd=str(tmp_path))).close()   # an existing store
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = project(tmp_path / "a"), project(tmp_path / "b")
    hooks._note_owed(load_config(cwd=str(first)), str(claude_copy(tmp_path)), session_id=CLAUDE_SESSION,
                     platform="claude-code", payload={"cwd": str(first)})
    assert not (home / "namespaces" / "shop").exists()
    assert load_config(cwd=str(second)).default_namespace(record=True) == "shop"    # b writes first: b's name
    age_notes(home)
    assert hooks.run_hook("session-start", stdin=io.StringIO(json.dumps({"cwd": str(tmp_path)})), stdout=io.StringIO(),
                          budget=120) == 0
    [row] = session_rows(home)
    assert row["namespace"].startswith("shop-") and owed_notes(home) == []
    assert (home / "namespaces" / row["namespace"]).read_text().strip() == str(first.resolve())
