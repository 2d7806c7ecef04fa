"""Codex rollout parser: folds `~/.codex/sessions/…/rollout-*.jsonl` lines into a digest; finds a rollout."""

from __future__ import annotations

import glob
import json
import os
import re
from typing import Any, Iterable

from supermemory.transcripts.commands import _command_string, _patch_files
from supermemory.transcripts.digest import _clip, _MAX_DONE_CALLS, _state, SessionDigest
from supermemory.transcripts.fold import (
    _add_command, _add_error, _add_file, _assistant_text, _block_text, _error_key, _error_label, _finish,
    _human_text, _LINE_ERRORS, _pending_pop, _pending_put, _remember, _resolve, _set_todos, _str, _touch_time,
)

_CODEX_TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
_CODEX_ITEM_TYPES = {
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
}

_CODEX_SHELL_TOOLS = {"shell", "container.exec", "local_shell", "shell_command", "exec_command", "run_command"}
_CODEX_EXIT_RE = re.compile(r"^(?:Exit code:?|Process exited with code)\s*(-?\d+)\s*$", re.M)


def parse_codex(lines: Iterable[dict], digest: SessionDigest | None = None) -> SessionDigest:
    """Fold Codex rollout lines into `digest` (a new one if None)."""
    d = digest if digest is not None else SessionDigest(platform="codex")
    if d.platform not in ("claude-code", "codex"):
        d.platform = "codex"
    st = _state(d)
    for obj in lines:
        if not isinstance(obj, dict):
            continue
        try:
            _codex_line(d, st, obj)
        except _LINE_ERRORS:
            continue
    _finish(d, st)
    return d


def _codex_line(d: SessionDigest, st: dict, obj: dict) -> None:
    _touch_time(d, obj.get("timestamp"))
    typ = obj.get("type")
    payload = obj.get("payload")
    if not isinstance(payload, dict):
        # Older rollouts wrote items bare, with a header line {id, timestamp, instructions}.
        if typ in _CODEX_ITEM_TYPES:
            payload, typ = obj, "response_item"
        elif typ is None and "id" in obj and ("instructions" in obj or "timestamp" in obj):
            payload, typ = obj, "session_meta"
        else:
            return
    if typ == "session_meta":
        if d.session_id is None and _str(payload.get("id")):
            d.session_id = payload["id"].strip()
        if d.started_at is None:
            _touch_time(d, payload.get("timestamp"))
        if d.cwd is None and _str(payload.get("cwd")):
            d.cwd = payload["cwd"].strip()
        git = payload.get("git")
        if isinstance(git, dict) and _str(git.get("branch")):
            d.git_branch = git["branch"].strip()
        if d.model is None and _str(payload.get("model")):
            d.model = payload["model"].strip()
    elif typ == "turn_context":
        if d.cwd is None and _str(payload.get("cwd")):
            d.cwd = payload["cwd"].strip()
        if _str(payload.get("model")):
            d.model = payload["model"].strip()
    elif typ == "response_item":
        _codex_item(d, st, payload)
    elif typ == "event_msg":
        _codex_event(d, st, payload)


def _codex_item(d: SessionDigest, st: dict, p: dict) -> None:
    t = p.get("type")
    if t == "message":
        content = p.get("content")
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "\n".join(
                c["text"]
                for c in content
                if isinstance(c, dict) and c.get("type") in ("input_text", "output_text", "text") and isinstance(c.get("text"), str)
            )
        else:
            return
        role = p.get("role")
        if role == "user":
            _human_text(d, st, text)
        elif role == "assistant":
            _assistant_text(st, text)
    elif t == "function_call":
        st["reply"] = "answered"
        name = p.get("name") if isinstance(p.get("name"), str) else ""
        raw = p.get("arguments")
        args: Any = raw
        if isinstance(raw, str):
            try:
                args = json.loads(raw)
            except (ValueError, RecursionError):
                args = {"input": raw} if "*** Begin Patch" in raw else {}
        if not isinstance(args, dict):
            args = {}
        _codex_call(d, st, name, args, p.get("call_id"))
    elif t == "custom_tool_call":
        st["reply"] = "answered"
        name = p.get("name") if isinstance(p.get("name"), str) else ""
        inp = p.get("input")
        if isinstance(inp, str) and ("apply_patch" in name or "*** Begin Patch" in inp):
            for path in _patch_files(inp):
                _add_file(d, st, path)
        _pending_put(st, p.get("call_id"), {"tool": name or None, "cmd": None})
    elif t == "local_shell_call":
        st["reply"] = "answered"
        action = p.get("action") if isinstance(p.get("action"), dict) else {}
        _codex_call(d, st, "local_shell", {"command": action.get("command")}, p.get("call_id") or p.get("id"))
    elif t in ("function_call_output", "custom_tool_call_output"):
        _codex_result(d, st, p.get("call_id"), *_codex_output(p.get("output")))


def _codex_call(d: SessionDigest, st: dict, name: str, args: dict, call_id: Any) -> None:
    cmd = None
    tool = name or None
    if name in _CODEX_SHELL_TOOLS:
        raw = args.get("command", args.get("cmd"))
        if isinstance(raw, list) and raw and isinstance(raw[0], str) and os.path.basename(raw[0]) in ("apply_patch", "applypatch"):
            for path in _patch_files("\n".join(x for x in raw[1:] if isinstance(x, str))):
                _add_file(d, st, path)
            tool = "apply_patch"
        else:
            cmd = _command_string(raw)
            if cmd and "*** Begin Patch" in cmd:
                for path in _patch_files(cmd):
                    _add_file(d, st, path)
                cmd, tool = None, "apply_patch"
            elif cmd:
                _add_command(d, st, cmd)
    elif name == "apply_patch":
        for path in _patch_files(args.get("input") or args.get("patch")):
            _add_file(d, st, path)
    elif name == "update_plan":
        _set_todos(st, args.get("plan"), "step")
    _pending_put(st, call_id, {"tool": tool, "cmd": _clip(cmd, 2000) if cmd else None})


def _codex_output(output: Any) -> tuple[str, int | None, bool | None]:
    """(text, exit_code, success) from a function_call_output payload."""
    success = None
    code = None
    if isinstance(output, str):
        s = output.strip()
        if s.startswith("{"):
            try:
                parsed = json.loads(s)
            except (ValueError, RecursionError):
                parsed = None
            if isinstance(parsed, dict):
                output = parsed
    if isinstance(output, dict):
        meta = output.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
            code = meta["exit_code"]
        if isinstance(output.get("exit_code"), int):
            code = output["exit_code"]
        if isinstance(output.get("success"), bool):
            success = output["success"]
        text = _block_text(output.get("output", output.get("content", "")))
        return text, code, success
    if isinstance(output, list):
        return _block_text(output), None, None
    if not isinstance(output, str):
        return "", None, None
    m = _CODEX_EXIT_RE.search(output[:500])
    if m:
        code = int(m.group(1))
    text = output
    idx = output.find("\nOutput:\n")
    if idx >= 0 and idx < 600:
        text = output[idx + len("\nOutput:\n") :]
    return text, code, success


def _codex_result(
    d: SessionDigest, st: dict, call_id: Any, text: str, code: int | None, success: bool | None
) -> None:
    if isinstance(call_id, str) and call_id:
        if call_id in st["done_calls"]:
            return
        _remember(st["done_calls"], call_id, _MAX_DONE_CALLS)
    info = _pending_pop(st, call_id)
    tool = info.get("tool") if isinstance(info.get("tool"), str) else None
    cmd = info.get("cmd") if isinstance(info.get("cmd"), str) else None
    if code is not None:
        failed: bool | None = code != 0
    elif success is not None:
        failed = not success
    elif info and not cmd:
        failed = False  # a non-shell tool that reported no failure
    else:
        failed = None  # e.g. a shell still running: neither error nor success
    key = _error_key(tool, cmd)
    if failed:
        _add_error(d, st, key, _error_label(tool, cmd), text, code)
    elif failed is False:
        _resolve(st, key, edited=tool is not None and "apply_patch" in tool)


def _codex_event(d: SessionDigest, st: dict, p: dict) -> None:
    t = p.get("type")
    if t == "user_message":
        kind = p.get("kind")
        if kind not in (None, "plain"):
            return
        _human_text(d, st, p.get("message"))
    elif t == "agent_message":
        _assistant_text(st, p.get("message"))
    elif t == "task_complete":
        if _str(p.get("last_agent_message")):
            _assistant_text(st, p["last_agent_message"])
    elif t == "turn_aborted":
        st["reply"] = "interrupted"
    elif t == "error":
        msg = p.get("message")
        if isinstance(msg, str) and msg.strip():
            _add_error(d, st, "", "error", msg)
    elif t == "exec_command_end":
        call_id = p.get("call_id")
        if isinstance(call_id, str) and call_id in st["done_calls"]:
            return
        pend = st["pending"].get(call_id) if isinstance(call_id, str) else None
        if not (isinstance(pend, dict) and pend.get("cmd")):
            cmd = _command_string(p.get("command"))
            if cmd and "*** Begin Patch" not in cmd:
                _add_command(d, st, cmd)
                _pending_put(st, call_id, {"tool": "shell", "cmd": _clip(cmd, 2000)})
        code = p.get("exit_code") if isinstance(p.get("exit_code"), int) else None
        text = ""
        for name in (("stderr", "aggregated_output", "formatted_output", "stdout") if code else ("aggregated_output", "stdout")):
            if _str(p.get(name)):
                text = p[name]
                break
        _codex_result(d, st, call_id, text, code, None)
    elif t == "patch_apply_begin":
        changes = p.get("changes")
        if isinstance(changes, dict):
            for path in changes:
                _add_file(d, st, path)
    elif t == "patch_apply_end":
        call_id = p.get("call_id")
        if isinstance(call_id, str) and call_id in st["done_calls"]:
            return
        if isinstance(p.get("success"), bool):
            if isinstance(call_id, str) and call_id not in st["pending"]:
                _pending_put(st, call_id, {"tool": "apply_patch", "cmd": None})
            text = p.get("stderr") if _str(p.get("stderr")) else (p.get("stdout") or "")
            _codex_result(d, st, call_id, text if isinstance(text, str) else "", None, p["success"])


# --------------------------------------------------------------------------- locating rollouts

_SAFE_ID_RE = re.compile(r"^[A-Za-z0-9._-]+$")


def find_codex_rollout(session_id: str, codex_home: str | None = None) -> str | None:
    """Locate the rollout file for a session id under
    ``<codex_home or $CODEX_HOME or ~/.codex>/sessions/**/rollout-*<session_id>.jsonl``
    (the most recently modified match; ties broken by path).  None if absent."""
    if not isinstance(session_id, str) or not _SAFE_ID_RE.match(session_id) or session_id in (".", ".."):
        return None
    home = codex_home or os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    pattern = os.path.join(glob.escape(os.path.join(home, "sessions")), "**", f"rollout-*{session_id}.jsonl")
    best: tuple[float, str] | None = None
    for path in glob.iglob(pattern, recursive=True):
        try:
            if not os.path.isfile(path):
                continue
            mtime = os.path.getmtime(path)
        except OSError:
            continue
        cand = (mtime, path)
        if best is None or cand > best:
            best = cand
    return best[1] if best else None
