"""Claude Code / Codex hook entry points. They fail open: errors go to stderr, exit code 0.

A watchdog enforces the hard time budget (`hooks.budget_seconds`, 2 s by default): when it
fires the process exits 0 with nothing more on stdout, so a slow disk never stalls a session.
SQLite rolls back any transaction the exit interrupts.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import threading
from pathlib import Path

logger = logging.getLogger(__name__)

EVENTS = ("session-start", "pre-compact", "session-end", "stop")


def _read_payload(stream) -> dict:
    try:
        raw = stream.read(4 * 1024 * 1024)
    except (OSError, ValueError):
        return {}
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    try:
        data = json.loads(raw) if raw and raw.strip() else {}
    except ValueError:
        sys.stderr.write("supermemory hook: stdin was not JSON; continuing with defaults\n")
        return {}
    return data if isinstance(data, dict) else {}


def detect_platform(payload: dict, env=os.environ) -> str:
    """`codex` or `claude-code`, from the transcript location and the payload's shape."""
    path = str(payload.get("transcript_path") or "")
    if "/.codex/" in path or os.path.basename(path).startswith("rollout-") or env.get("SUPERMEMORY_PLATFORM") == "codex":
        return "codex"
    if "/.claude/" in path or env.get("CLAUDE_PROJECT_DIR") or env.get("SUPERMEMORY_PLATFORM") == "claude-code":
        return "claude-code"
    if "model" in payload and "permission_mode" in payload and payload.get("transcript_path") is None:
        return "codex"
    return "claude-code"


def _project_dir(payload: dict, env=os.environ) -> str:
    for candidate in (payload.get("cwd"), env.get("SUPERMEMORY_PROJECT_CWD"), env.get("CLAUDE_PROJECT_DIR")):
        if isinstance(candidate, str) and candidate.strip():
            return candidate
    return os.getcwd()


def _open_store(payload: dict):
    from supermemory.config import load_config
    from supermemory.core import MemoryStore

    config = load_config(cwd=_project_dir(payload))
    return MemoryStore(config.db_path, config=config), config


def session_start(payload: dict) -> dict:
    """The SessionStart answer: the briefing as additionalContext (no model load)."""
    store, config = _open_store(payload)
    try:
        briefing = store.briefing(max_tokens=int(config.get("hooks.briefing_tokens", 900)))
    finally:
        store.close()
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": briefing["text"]}}


def capture(payload: dict, *, housekeeping: bool = False) -> dict:
    """PreCompact / SessionEnd / Stop: store the session digest; SessionEnd also tidies up."""
    platform = detect_platform(payload)
    path = payload.get("transcript_path")
    session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    if not path and platform == "codex" and session_id:
        from supermemory.transcripts import find_codex_rollout

        path = find_codex_rollout(session_id)
    store, config = _open_store(payload)
    try:
        result = store.capture_session(path if isinstance(path, str) else None, session_id=session_id,
                                       platform=platform, model=payload.get("model") if isinstance(
                                           payload.get("model"), str) else None,
                                       cwd=_project_dir(payload))
        if housekeeping:
            result["maintenance"] = store.maintenance(
                sweep=bool(config.get("lifecycle.sweep_on_session_end", False)))
    finally:
        store.close()
    return result


def run_hook(event: str, *, stdin=None, stdout=None) -> int:
    """Entry point of `supermemory hook <event>`: always exit 0."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    budget = 2.0
    try:
        from supermemory.config import load_config

        budget = float(load_config().get("hooks.budget_seconds", 2.0))
    except Exception as exc:  # noqa: BLE001 - fail open: a broken config must not block the agent
        sys.stderr.write(f"supermemory hook: config problem ignored: {exc}\n")
    timer = threading.Timer(budget, _timeout, args=(event, budget))
    timer.daemon = True
    timer.start()
    try:
        payload = _read_payload(stdin)
        if event == "session-start":
            output = session_start(payload)
            stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
            stdout.flush()
        elif event in ("pre-compact", "stop", "session-end"):
            result = capture(payload, housekeeping=event == "session-end")
            logger.info("captured: %s", result)
        else:
            sys.stderr.write(f"supermemory hook: unknown event {event!r}\n")
    except Exception as exc:  # noqa: BLE001 - hooks fail open by contract
        logger.debug("hook failed", exc_info=True)
        sys.stderr.write(f"supermemory hook {event}: {type(exc).__name__}: {exc} (session continues)\n")
    finally:
        timer.cancel()
    return 0


def _timeout(event: str, budget: float) -> None:
    try:
        sys.stderr.write(f"supermemory hook {event}: time budget {budget}s exceeded; skipped (session continues)\n")
        sys.stderr.flush()
    finally:
        os._exit(0)


def default_transcript_dir() -> Path:
    """Where Claude Code keeps transcripts (for docs and diagnostics)."""
    return Path.home() / ".claude" / "projects"
