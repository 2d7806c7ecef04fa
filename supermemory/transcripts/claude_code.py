"""Claude Code transcript parser: folds `~/.claude/projects/…/<session>.jsonl` lines into a digest."""

from __future__ import annotations

import re
from typing import Iterable

from supermemory.transcripts.commands import _command_string
from supermemory.transcripts.digest import _clip, _MAX_SEEN_UUIDS, _state, SessionDigest
from supermemory.transcripts.fold import (
    _add_command, _add_error, _add_file, _add_read, _assistant_text, _block_text, _error_key, _error_label,
    _finish, _human_text, _INTERRUPT_PREFIX, _is_not_human, _LINE_ERRORS, _pending_pop, _pending_put,
    _REMINDER_RE, _remember, _resolve, _set_todos, _str, _TAG_RE, _touch_time,
)

_CLAUDE_TYPES = {"user", "assistant", "system", "progress", "file-history-snapshot", "summary"}

_CLAUDE_EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
_CLAUDE_READ_TOOLS = {"Read", "NotebookRead"}
_EXIT_CODE_RE = re.compile(r"^\s*(?:Error:\s*)?Exit code:?\s*(-?\d+)")
_REJECTED_PREFIX = "The user doesn't want to proceed with this tool use"


def parse_claude(lines: Iterable[dict], digest: SessionDigest | None = None) -> SessionDigest:
    """Fold Claude Code transcript lines into `digest` (a new one if None)."""
    d = digest if digest is not None else SessionDigest(platform="claude-code")
    if d.platform not in ("claude-code", "codex"):
        d.platform = "claude-code"
    st = _state(d)
    for obj in lines:
        if not isinstance(obj, dict):
            continue
        try:
            _claude_line(d, st, obj)
        except _LINE_ERRORS:
            continue
    _finish(d, st)
    return d


def _claude_line(d: SessionDigest, st: dict, obj: dict) -> None:
    uuid = obj.get("uuid")
    if isinstance(uuid, str) and uuid:
        if uuid in st["uuids"]:
            return
        _remember(st["uuids"], uuid, _MAX_SEEN_UUIDS)
    _touch_time(d, obj.get("timestamp"))
    if d.session_id is None and _str(obj.get("sessionId")):
        d.session_id = obj["sessionId"].strip()
    if d.cwd is None and _str(obj.get("cwd")):
        d.cwd = obj["cwd"].strip()
    if _str(obj.get("gitBranch")):
        d.git_branch = obj["gitBranch"].strip()
    msg = obj.get("message")
    if not isinstance(msg, dict):
        return
    typ = obj.get("type")
    if typ == "user":
        _claude_user(d, st, obj, msg)
    elif typ == "assistant":
        _claude_assistant(d, st, obj, msg)


def _claude_user(d: SessionDigest, st: dict, obj: dict, msg: dict) -> None:
    content = msg.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return
    not_human = (
        obj.get("isMeta") is True
        or obj.get("isCompactSummary") is True
        or obj.get("isSidechain") is True
        or obj.get("isVisibleInTranscriptOnly") is True
    )
    texts: list[str] = []
    for b in blocks:
        if not isinstance(b, dict):
            continue
        bt = b.get("type")
        if bt == "tool_result":
            _claude_tool_result(d, st, b)
        elif bt == "text" and isinstance(b.get("text"), str):
            t = _REMINDER_RE.sub("", b["text"]).strip()
            if not t:
                continue
            if t.startswith(_INTERRUPT_PREFIX):
                st["reply"] = "interrupted"
            elif t.startswith("<bash-input>"):
                m = re.match(r"<bash-input>(.*?)</bash-input>", t, re.S)
                if m and m.group(1).strip():
                    _add_command(d, st, m.group(1))
            elif not _is_not_human(t):
                texts.append(t)
    if texts and not not_human:
        _human_text(d, st, "\n".join(texts))


def _claude_assistant(d: SessionDigest, st: dict, obj: dict, msg: dict) -> None:
    model = _str(msg.get("model"))
    if model == "<synthetic>":
        if obj.get("isApiErrorMessage") is True:
            _add_error(d, st, "", "API error", _block_text(msg.get("content")))
        return
    if model:
        d.model = model.strip()
    content = msg.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return
    for b in blocks:
        if not isinstance(b, dict):
            continue
        bt = b.get("type")
        if bt == "text":
            _assistant_text(st, b.get("text"))
        elif bt == "tool_use":
            st["reply"] = "answered"
            _claude_tool_use(d, st, b)


def _claude_tool_use(d: SessionDigest, st: dict, b: dict) -> None:
    name = b.get("name") if isinstance(b.get("name"), str) else ""
    inp = b.get("input") if isinstance(b.get("input"), dict) else {}
    cmd = None
    if name in _CLAUDE_EDIT_TOOLS:
        _add_file(d, st, inp.get("file_path") or inp.get("notebook_path"))
    elif name in _CLAUDE_READ_TOOLS:
        _add_read(d, st, inp.get("file_path") or inp.get("notebook_path"))
    elif name == "Bash":
        cmd = _command_string(inp.get("command"))
        if cmd:
            _add_command(d, st, cmd)
    elif name == "TodoWrite":
        _set_todos(st, inp.get("todos"), "content")
    _pending_put(st, b.get("id"), {"tool": name or None, "cmd": _clip(cmd, 2000) if cmd else None})


def _claude_tool_result(d: SessionDigest, st: dict, b: dict) -> None:
    info = _pending_pop(st, b.get("tool_use_id"))
    tool = info.get("tool") if isinstance(info.get("tool"), str) else None
    cmd = info.get("cmd") if isinstance(info.get("cmd"), str) else None
    text = _block_text(b.get("content"))
    failed = b.get("is_error") is True
    exit_code = None
    m = _EXIT_CODE_RE.match(text)
    if m:
        exit_code = int(m.group(1))
        failed = failed or exit_code != 0
    key = _error_key(tool, cmd)
    if not failed:
        _resolve(st, key, edited=tool in _CLAUDE_EDIT_TOOLS)
        return
    stripped = _TAG_RE.sub("", text).strip()
    if stripped.startswith(_REJECTED_PREFIX) or stripped.startswith(_INTERRUPT_PREFIX):
        st["reply"] = "interrupted"
        return
    _add_error(d, st, key, _error_label(tool, cmd), text, exit_code)
