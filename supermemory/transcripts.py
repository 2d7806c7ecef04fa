"""Extractive session digests from Claude Code transcripts and Codex rollouts.

Hooks (PreCompact / SessionEnd / Stop) read a session's JSONL log incrementally
with :func:`read_new_lines`, fold the new lines into a :class:`SessionDigest`
with :func:`parse`, persist ``digest_to_dict(d)`` plus the byte offset between
runs, and store ``render_digest(d)`` as the one "session" memory.

No LLM is involved: everything is pulled out of the log as written (user
requests, files edited or read, shell commands, errors, open ends).  The module
is standard library only and imports nothing else from supermemory; redaction
of secrets is the caller's job.

Paths under the session's working directory are stored relative to it, so the
digest reads ``src/app.py`` rather than ``/home/me/project/src/app.py``.
"""

from __future__ import annotations

import copy
import glob
import hashlib
import json
import os
import re
import shlex
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

__all__ = [
    "SessionDigest",
    "read_new_lines",
    "detect_platform",
    "parse_claude",
    "parse_codex",
    "parse",
    "digest_to_dict",
    "digest_from_dict",
    "render_digest",
    "find_codex_rollout",
]

# --------------------------------------------------------------------------- caps

MAX_REQUESTS = 50
MAX_FILES = 200
MAX_FILES_READ = 200
MAX_COMMANDS = 100
MAX_ERRORS = 50
MAX_OPEN_ENDS = 12

REQUEST_CHARS = 300
COMMAND_CHARS = 200
ERROR_CHARS = 200
NOTE_CHARS = 200
PATH_CHARS = 300

_CAPS = {
    "requests": MAX_REQUESTS,
    "files": MAX_FILES,
    "files_read": MAX_FILES_READ,
    "commands": MAX_COMMANDS,
    "errors": MAX_ERRORS,
}

# Bounds on the bookkeeping kept in ``SessionDigest.state``.
_MAX_SEEN_UUIDS = 1000
_MAX_KEYS = 2000
_MAX_PENDING = 200
_MAX_DONE_CALLS = 200
_MAX_UNRESOLVED = 20
_MAX_NOTES = 6
_MAX_TODOS = 20
_LAST_TEXT_CHARS = 1500

_STATE_VERSION = 1


# --------------------------------------------------------------------------- model


@dataclass
class SessionDigest:
    """What one agent session did, distilled from its transcript.

    ``state`` holds the bookkeeping needed to keep folding new lines in
    incrementally (pending tool calls, dedupe keys, unresolved errors …).  It is
    plain JSON data; treat it as opaque.
    """

    platform: str = "unknown"  # "claude-code" | "codex" ("unknown" until detected)
    session_id: str | None = None
    cwd: str | None = None
    model: str | None = None
    git_branch: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    requests: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    open_ends: list[str] = field(default_factory=list)
    turns: int = 0
    state: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- reading


def read_new_lines(
    path: str, offset: int = 0, *, max_bytes: int = 16 * 1024 * 1024
) -> tuple[list[dict], int]:
    """Read complete JSON lines from byte `offset`; return (parsed objects, new_offset).

    A trailing partial line (no ``\\n``) is not consumed; malformed complete
    lines (and JSON values that are not objects) are skipped but consumed.
    Never raises: a missing or unreadable file gives ``([], offset)``.  If the
    file is shorter than `offset` (rotated or truncated) reading restarts at 0.
    At most about `max_bytes` are read per call; call again until the offset
    stops moving to drain a large file.  A single line longer than
    `max_bytes` is skipped as malformed once it is complete.
    """
    try:
        offset = int(offset)
    except (TypeError, ValueError):
        offset = 0
    if offset < 0:
        offset = 0
    max_bytes = max(1, int(max_bytes))
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < offset:
                offset = 0
            fh.seek(offset)
            chunk = fh.read(max_bytes)
            end = chunk.rfind(b"\n")
            if end < 0:
                if len(chunk) < max_bytes:
                    return [], offset  # only a partial line so far
                # One line longer than max_bytes: find its end and skip it.
                skipped = len(chunk)
                while True:
                    more = fh.read(1024 * 1024)
                    if not more:
                        return [], offset  # still incomplete
                    nl = more.find(b"\n")
                    if nl >= 0:
                        return [], offset + skipped + nl + 1
                    skipped += len(more)
            complete = chunk[: end + 1]
    except (OSError, ValueError):
        return [], offset
    objs: list[dict] = []
    for raw in complete.split(b"\n"):
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            objs.append(obj)
    return objs, offset + len(complete)


# --------------------------------------------------------------------------- detection

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
_CLAUDE_TYPES = {"user", "assistant", "system", "progress", "file-history-snapshot", "summary"}


def detect_platform(lines: list[dict]) -> str:
    """Return "codex", "claude-code", or "unknown" when the lines give no hint."""
    for obj in lines:
        if not isinstance(obj, dict):
            continue
        typ = obj.get("type")
        if typ in _CODEX_TYPES and isinstance(obj.get("payload"), dict):
            return "codex"
        if "sessionId" in obj or "parentUuid" in obj:
            return "claude-code"
        if typ in _CLAUDE_TYPES and ("uuid" in obj or "message" in obj or typ in ("summary", "file-history-snapshot")):
            return "claude-code"
        if typ in _CODEX_ITEM_TYPES or obj.get("record_type") == "state":
            return "codex"  # pre-envelope rollout format
        if typ is None and "instructions" in obj and "id" in obj:
            return "codex"
    return "unknown"


def parse(
    lines: Iterable[dict], digest: SessionDigest | None = None, platform: str | None = None
) -> SessionDigest:
    """Fold `lines` into `digest`, choosing the parser by `platform`, the digest's
    platform, or :func:`detect_platform` — in that order.  Lines that give no
    hint of their format leave a fresh digest with platform "unknown"."""
    lines = list(lines)
    plat = platform
    if plat not in ("claude-code", "codex"):
        plat = digest.platform if digest is not None else None
    if plat not in ("claude-code", "codex"):
        plat = detect_platform(lines)
    if plat == "codex":
        return parse_codex(lines, digest)
    if plat == "claude-code":
        return parse_claude(lines, digest)
    return digest if digest is not None else SessionDigest(platform="unknown")


# --------------------------------------------------------------------------- small helpers

_WS_RE = re.compile(r"\s+")
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _collapse(text: str) -> str:
    return _WS_RE.sub(" ", text).strip()


def _clip(text: str, limit: int) -> str:
    text = _collapse(text)
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + "…"


def _key(text: str) -> str:
    return hashlib.sha1(_collapse(text).lower().encode("utf-8", "replace")).hexdigest()[:16]


def _remember(seq: list, item: Any, bound: int) -> None:
    seq.append(item)
    if len(seq) > bound:
        del seq[: len(seq) - bound]


def _state(d: SessionDigest) -> dict:
    """Return d.state with every key present and of the right type."""
    st = d.state if isinstance(d.state, dict) else {}
    d.state = st
    st["v"] = _STATE_VERSION
    for name in ("uuids", "req_keys", "err_keys", "done_calls", "unresolved", "todos", "notes"):
        if not isinstance(st.get(name), list):
            st[name] = []
    for name in ("pending", "dropped"):
        if not isinstance(st.get(name), dict):
            st[name] = {}
    if st.get("reply") not in ("none", "answered", "interrupted"):
        st["reply"] = "answered"
    if not isinstance(st.get("last_text"), str):
        st["last_text"] = ""
    return st


def _append_capped(d: SessionDigest, st: dict, name: str, item: str, *, unique: bool = True) -> None:
    """Append to a digest list; past its cap drop the middle so the first and the
    latest items survive, counting what was dropped."""
    seq = getattr(d, name)
    if unique and item in seq:
        return
    seq.append(item)
    cap = _CAPS[name]
    if len(seq) > cap:
        del seq[cap // 2]
        st["dropped"][name] = int(st["dropped"].get(name, 0) or 0) + 1


def _touch_time(d: SessionDigest, ts: Any) -> None:
    if isinstance(ts, str) and ts.strip():
        ts = ts.strip()
        if d.started_at is None:
            d.started_at = ts
        d.ended_at = ts


def _norm_path(d: SessionDigest, path: Any) -> str | None:
    if not isinstance(path, str):
        return None
    p = path.strip().strip("'\"")
    if not p or "\n" in p:
        return None
    cwd = (d.cwd or "").rstrip("/\\")
    if cwd:
        for sep in ("/", "\\"):
            if p.startswith(cwd + sep):
                p = p[len(cwd) + 1 :]
                break
    while p.startswith("./"):
        p = p[2:]
    return _clip(p, PATH_CHARS) if p else None


def _add_file(d: SessionDigest, st: dict, path: Any) -> None:
    p = _norm_path(d, path)
    if p:
        _append_capped(d, st, "files", p)


def _add_read(d: SessionDigest, st: dict, path: Any) -> None:
    p = _norm_path(d, path)
    if p:
        _append_capped(d, st, "files_read", p)


def _add_command(d: SessionDigest, st: dict, cmd: str) -> None:
    c = _clip(cmd, COMMAND_CHARS)
    if c:
        _append_capped(d, st, "commands", c)
        for path in _read_paths(cmd):
            _add_read(d, st, path)


# --------------------------------------------------------------------------- commands

_SHELLS = {"bash", "sh", "zsh", "dash", "fish", "ksh"}
_SHELL_FLAGS = {"-c", "-lc", "-cl", "-ic", "-ilc", "-lic"}
_WRAPPERS = {"sudo", "time", "env", "nice", "nohup", "command", "exec"}
_RUNNERS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pnpm", "exec"), ("hatch", "run"), ("pdm", "run")}
_MULTI = {
    "npm", "yarn", "pnpm", "bun", "deno", "cargo", "go", "make", "git", "docker", "kubectl",
    "dotnet", "mvn", "gradle", "./gradlew", "npx", "bunx", "just", "task", "tox", "nox",
    "rake", "bundle", "mix", "swift", "zig", "terraform", "helm", "gh",
}
_READERS = {"cat", "head", "tail", "nl", "less", "more", "bat"}
_PATHISH_RE = re.compile(r"^[\w.~/@+-][\w.~/@+-]*$")


def _command_string(raw: Any) -> str | None:
    """A shell command from a string or an argv list (unwrapping ``bash -lc X``)."""
    if isinstance(raw, str):
        return raw.strip() or None
    if isinstance(raw, list) and raw and all(isinstance(x, str) for x in raw):
        prog = os.path.basename(raw[0])
        if prog in _SHELLS and len(raw) >= 3 and raw[1] in _SHELL_FLAGS:
            return " ".join(raw[2:]).strip() or None
        try:
            return shlex.join(raw).strip() or None
        except (TypeError, ValueError):
            return None
    return None


def _command_key(cmd: str) -> str:
    """The 'program' a command runs, so a later success of the same program can
    resolve an earlier failure (``cd x && python -m pytest -q`` → ``pytest``)."""
    segments = re.split(r"&&|\|\||;|\n", cmd)
    words: list[str] = []
    for seg in segments:
        seg = seg.split("|", 1)[0]
        toks = seg.split()
        while toks and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", toks[0]):
            toks.pop(0)
        if not toks or toks[0] in ("cd", "pushd", "popd", "export", "source", ".", "set", "unset", "echo"):
            continue
        words = toks
        break
    if not words:
        return _collapse(cmd).lower()[:60]
    changed = True
    while changed and words:
        changed = False
        if words[0] in _WRAPPERS:
            words = words[1:]
            changed = True
        elif words[0] == "timeout" and len(words) > 1:
            words = words[2:] if re.match(r"^\d", words[1]) else words[1:]
            changed = True
        elif len(words) > 1 and (words[0], words[1]) in _RUNNERS:
            words = words[2:]
            changed = True
        elif len(words) > 2 and re.match(r"^(python|python3(\.\d+)?|py)$", os.path.basename(words[0])) and words[1] == "-m":
            words = words[2:]
            changed = True
    if not words:
        return _collapse(cmd).lower()[:60]
    prog = os.path.basename(words[0]) if words[0] != "./gradlew" else words[0]
    if prog in _MULTI and len(words) > 1 and not words[1].startswith("-"):
        return f"{prog} {words[1]}".lower()
    return prog.lower()


def _read_paths(cmd: str) -> list[str]:
    """Files a simple read-only command shows (cat/head/tail/nl/sed -n …)."""
    if "*** Begin Patch" in cmd or len(cmd) > 2000:
        return []
    try:
        lexer = shlex.shlex(cmd, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return []
    out: list[str] = []
    segment: list[str] = []
    for tok in tokens + [";"]:
        if tok and all(c in "();<>|&" for c in tok):
            if tok in ("<", ">", ">>", "2>", "&>"):
                segment.append("\0redirect")
                continue
            out.extend(_segment_reads(segment))
            segment = []
        else:
            segment.append(tok)
    return out


def _segment_reads(tokens: list[str]) -> list[str]:
    clean: list[str] = []
    skip = False
    for tok in tokens:
        if skip:
            skip = False
            continue
        if tok == "\0redirect":
            skip = True
            continue
        clean.append(tok)
    if not clean:
        return []
    prog = os.path.basename(clean[0])
    args = clean[1:]
    if prog == "sed":
        if "-n" not in args or any(a.startswith("-i") or a == "--in-place" for a in args):
            return []
        rest = [a for a in args if not a.startswith("-")]
        args = rest[1:]  # drop the sed script
    elif prog not in _READERS:
        return []
    paths = []
    for a in args:
        if a.startswith("-") or a.isdigit() or a in (".", ".."):
            continue
        if _PATHISH_RE.match(a) and ("/" in a or "." in a):
            paths.append(a)
    return paths


_PATCH_HEADER_RE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)


def _patch_files(patch: Any) -> list[str]:
    if not isinstance(patch, str):
        return []
    return [m.group(1) or m.group(2) for m in _PATCH_HEADER_RE.finditer(patch)]


# --------------------------------------------------------------------------- errors

_BOILERPLATE_RE = re.compile(
    r"^(?:[=\-_*#~.]{3,}.*|Traceback \(most recent call last\):?|(?:Error: )?Exit code:? -?\d+|"
    r"Wall time:.*|Output:|Chunk ID:.*|Process exited with code -?\d+|Original token count:.*)$"
)
_PYTEST_RE = re.compile(r"^(?:FAILED|ERROR) \S")
_PYTEST_E_RE = re.compile(r"^E\s{2,}\S")
_EXC_RE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b(?::|$)")
_GENERIC_ERR_RE = re.compile(
    r"(?i)\b(?:error|errors|failed|failure|fatal|panic|exception|not found|no such file|"
    r"permission denied|denied|cannot|can't|unable to|refused|timed out|timeout|invalid)\b"
)
_TAG_RE = re.compile(r"</?(?:tool_use_error|error|stderr|stdout)>")


def _summarise_error(text: str) -> str:
    """The most telling line of an error text (pytest FAILED line, the final
    exception line of a traceback, the first line mentioning an error, or the
    first two meaningful lines)."""
    text = _TAG_RE.sub("", _ANSI_RE.sub("", text or ""))
    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not _BOILERPLATE_RE.match(ln)]
    if not lines:
        return ""
    for ln in lines:
        if _PYTEST_RE.match(ln):
            return ln
    exc = [ln for ln in lines if _EXC_RE.match(ln)]
    if exc:
        return exc[-1]
    for ln in lines:
        if _PYTEST_E_RE.match(ln):
            return ln[1:].strip()
    for ln in lines:
        if _GENERIC_ERR_RE.search(ln):
            return ln
    return " | ".join(lines[:2])


def _add_error(
    d: SessionDigest, st: dict, key: str, label: str | None, text: str, exit_code: int | None = None
) -> None:
    summary = _summarise_error(text)
    head = label or ""
    if exit_code not in (None, 0):
        head = f"{head} (exit {exit_code})" if head else f"exit {exit_code}"
    if head and summary:
        line = f"{head}: {summary}"
    else:
        line = head or summary
    line = _clip(line, ERROR_CHARS)
    if not line:
        return
    k = _key(line)
    if k not in st["err_keys"]:
        _remember(st["err_keys"], k, _MAX_KEYS)
        _append_capped(d, st, "errors", line, unique=False)
    unresolved = [u for u in st["unresolved"] if not (isinstance(u, list) and u and u[0] == key)]
    unresolved.append([key, line])
    st["unresolved"] = unresolved[-_MAX_UNRESOLVED:]


def _resolve(st: dict, key: str) -> None:
    """A success with `key` clears unresolved errors of that key and any generic ones."""
    st["unresolved"] = [
        u for u in st["unresolved"] if isinstance(u, list) and len(u) == 2 and u[0] not in ("", key)
    ]


def _error_key(tool: str | None, cmd: str | None) -> str:
    if cmd:
        return "cmd:" + _command_key(cmd)
    if tool:
        return "tool:" + tool
    return ""


_CD_PREFIX_RE = re.compile(r"^\s*cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*&&\s*")


def _error_label(tool: str | None, cmd: str | None) -> str | None:
    if cmd:
        return _clip(_CD_PREFIX_RE.sub("", cmd) or cmd, 60)
    return tool


# --------------------------------------------------------------------------- requests & notes

_CONTINUATION_PREFIXES = (
    "This session is being continued from a previous conversation",
    "Another language model started to solve this problem",
)
_META_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "Caveat:",
    "<environment_context>",
    "<user_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "# AGENTS.md instructions",
)
_INTERRUPT_PREFIX = "[Request interrupted by user"
_REMINDER_RE = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def _is_not_human(text: str) -> bool:
    t = text.lstrip()
    return t.startswith(_CONTINUATION_PREFIXES) or t.startswith(_META_PREFIXES)


def _human_text(d: SessionDigest, st: dict, text: Any) -> None:
    if not isinstance(text, str):
        return
    t = _REMINDER_RE.sub("", text).strip()
    if not t or _is_not_human(t):
        return
    if t.startswith(_INTERRUPT_PREFIX):
        st["reply"] = "interrupted"
        return
    k = _key(t)
    if k in st["req_keys"]:
        return
    _remember(st["req_keys"], k, _MAX_KEYS)
    d.turns += 1
    _append_capped(d, st, "requests", _clip(t, REQUEST_CHARS), unique=False)
    st["reply"] = "none"
    st["last_text"] = ""


_TODO_CS_RE = re.compile(r"\b(?:TODO|FIXME|XXX|WIP)\b")
_TODO_CI_RE = re.compile(
    r"(?i)\bfollow[- ]?ups?\b|\bnext steps?\b|\bstill (?:need|needs|have|has) to\b|"
    r"\b(?:remaining|outstanding|open) (?:work|issues?|items?|tasks?|questions?|problems?)\b|"
    r"\bnot (?:yet )?(?:implemented|done|handled|supported|covered|addressed|fixed|tested)\b|"
    r"\bleft to do\b|\b(?:didn't|did not|couldn't|could not|haven't|have not) (?:get to|yet)\b|"
    r"\bknown (?:issues?|limitations?)\b|\bwork[- ]in[- ]progress\b"
)
_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.S)
_BULLET_RE = re.compile(r"^(?:[-*•+]\s+|\d+[.)]\s+|#+\s+|>\s*)")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=\S)")


def _text_lines(text: str) -> list[str]:
    text = _FENCE_RE.sub("\n", text)
    out = []
    for ln in text.splitlines():
        ln = _BULLET_RE.sub("", ln.strip()).replace("**", "").replace("__", "").strip()
        if ln:
            out.append(ln)
    return out


def _scan_notes(st: dict, text: str) -> None:
    """Collect TODO-ish statements from assistant prose (code blocks ignored)."""
    lines = _text_lines(text)
    for i, ln in enumerate(lines):
        for sentence in _SENTENCE_RE.split(ln):
            if not (_TODO_CS_RE.search(sentence) or _TODO_CI_RE.search(sentence)):
                continue
            note = sentence
            if note.endswith(":"):  # "Next steps:" → take the items below it
                following = [x for x in lines[i + 1 : i + 4]]
                if following:
                    note = note + " " + "; ".join(following)
            note = _clip(note, NOTE_CHARS)
            if len(note) < 8 or note in st["notes"]:
                continue
            _remember(st["notes"], note, _MAX_NOTES)


def _assistant_text(st: dict, text: Any) -> None:
    if not isinstance(text, str) or not text.strip():
        return
    st["reply"] = "answered"
    st["last_text"] = text.strip()[-_LAST_TEXT_CHARS:]
    # The agent carried on: generic errors (API/stream hiccups) are behind it.
    st["unresolved"] = [u for u in st["unresolved"] if isinstance(u, list) and len(u) == 2 and u[0] != ""]
    _scan_notes(st, text)


def _set_todos(st: dict, items: Any, text_key: str) -> None:
    if not isinstance(items, list):
        return
    todos = []
    for it in items:
        if not isinstance(it, dict):
            continue
        label = _str(it.get(text_key)) or _str(it.get("content")) or _str(it.get("step"))
        status = it.get("status")
        if label and status != "completed":
            marker = " (in progress)" if status == "in_progress" else ""
            todos.append(_clip(label, NOTE_CHARS) + marker)
    st["todos"] = todos[:_MAX_TODOS]


def _last_question(text: str) -> str | None:
    lines = _text_lines(text)
    if not lines:
        return None
    sentences = _SENTENCE_RE.split(lines[-1])
    last = sentences[-1].strip() if sentences else ""
    if last.endswith("?"):
        return _clip(last, NOTE_CHARS)
    return None


def _finish(d: SessionDigest, st: dict) -> None:
    """Recompute the open ends from the folded state (deterministic)."""
    ends: list[str] = []
    if d.requests:
        last = d.requests[-1]
        if st["reply"] == "none":
            ends.append(f"Unanswered request: {last}")
        elif st["reply"] == "interrupted":
            ends.append(f"Interrupted while working on: {last}")
        else:
            question = _last_question(st["last_text"])
            if question:
                ends.append(f"Awaiting reply: {question}")
    for item in st["unresolved"][-3:]:
        if isinstance(item, list) and len(item) == 2 and isinstance(item[1], str):
            ends.append(f"Unresolved error: {item[1]}")
    for todo in st["todos"][:5]:
        if isinstance(todo, str):
            ends.append(f"Unfinished todo: {todo}")
    for note in st["notes"][-5:]:
        if isinstance(note, str):
            ends.append(f"Note: {note}")
    seen: set[str] = set()
    unique = []
    for e in ends:
        if e not in seen:
            seen.add(e)
            unique.append(e)
    d.open_ends = unique[:MAX_OPEN_ENDS]


def _pending_put(st: dict, call_id: Any, info: dict) -> None:
    if not isinstance(call_id, str) or not call_id:
        return
    pending = st["pending"]
    pending.pop(call_id, None)
    pending[call_id] = info
    while len(pending) > _MAX_PENDING:
        pending.pop(next(iter(pending)))


def _pending_pop(st: dict, call_id: Any) -> dict:
    if not isinstance(call_id, str):
        return {}
    info = st["pending"].pop(call_id, None)
    return info if isinstance(info, dict) else {}


# --------------------------------------------------------------------------- Claude Code

_CLAUDE_EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
_CLAUDE_READ_TOOLS = {"Read", "NotebookRead"}
_EXIT_CODE_RE = re.compile(r"^\s*(?:Error:\s*)?Exit code:?\s*(-?\d+)")
_REJECTED_PREFIX = "The user doesn't want to proceed with this tool use"
_LINE_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError)


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, str):
                parts.append(b)
            elif isinstance(b, dict) and isinstance(b.get("text"), str):
                parts.append(b["text"])
        return "\n".join(parts)
    return ""


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
        _resolve(st, key)
        return
    stripped = _TAG_RE.sub("", text).strip()
    if stripped.startswith(_REJECTED_PREFIX) or stripped.startswith(_INTERRUPT_PREFIX):
        st["reply"] = "interrupted"
        return
    _add_error(d, st, key, _error_label(tool, cmd), text, exit_code)


# --------------------------------------------------------------------------- Codex

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
            except ValueError:
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
            except ValueError:
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
        _resolve(st, key)


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


# --------------------------------------------------------------------------- persistence


def digest_to_dict(d: SessionDigest) -> dict:
    """JSON-serialisable snapshot of a digest (including its incremental state)."""
    return asdict(d)


def digest_from_dict(data: Any) -> SessionDigest:
    """Rebuild a digest from :func:`digest_to_dict` output; tolerant of missing,
    extra or mistyped fields (a damaged snapshot yields a partial digest)."""
    if not isinstance(data, dict):
        data = {}

    def opt(name: str) -> str | None:
        v = data.get(name)
        return v if isinstance(v, str) else None

    def strs(name: str) -> list[str]:
        v = data.get(name)
        return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []

    turns = data.get("turns")
    state = data.get("state")
    d = SessionDigest(
        platform=opt("platform") or "unknown",
        session_id=opt("session_id"),
        cwd=opt("cwd"),
        model=opt("model"),
        git_branch=opt("git_branch"),
        started_at=opt("started_at"),
        ended_at=opt("ended_at"),
        requests=strs("requests"),
        files=strs("files"),
        files_read=strs("files_read"),
        commands=strs("commands"),
        errors=strs("errors"),
        open_ends=strs("open_ends"),
        turns=turns if isinstance(turns, int) and not isinstance(turns, bool) and turns >= 0 else 0,
        state=copy.deepcopy(state) if isinstance(state, dict) else {},
    )
    _state(d)
    return d


# --------------------------------------------------------------------------- rendering

_DATE_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})")


def _short(text: str, limit: int) -> str:
    text = _collapse(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def _title(d: SessionDigest) -> str:
    date = None
    for ts in (d.started_at, d.ended_at):
        m = _DATE_RE.match(ts or "")
        if m:
            date = m.group(1)
            break
    topic = next((r for r in d.requests if len(r) >= 15), d.requests[0] if d.requests else None)
    if topic is None and d.cwd:
        topic = os.path.basename(d.cwd.rstrip("/\\")) or d.cwd
    head = f"Session {date}" if date else "Session"
    return f"{head} · {_short(topic, 60)}" if topic else head


def render_digest(d: SessionDigest, *, max_chars: int = 6000) -> tuple[str, str]:
    """Return (title, body).

    The body is plain text: a header line, then 'Requests:', 'Files edited:',
    'Files read:', 'Commands:', 'Errors:' and 'Open ends:' sections of bullet
    lines (empty sections are left out).  It is capped to `max_chars` by
    trimming the longest lists first, keeping their first and last items and
    saying '… N more'; then long items are shortened; then the text is cut.
    Deterministic for a given digest.
    """
    max_chars = max(1, int(max_chars))
    dropped = (d.state or {}).get("dropped") if isinstance(d.state, dict) else None
    dropped = dropped if isinstance(dropped, dict) else {}

    header_parts = [f"Platform: {d.platform}"]
    if d.cwd:
        header_parts.append(f"Project: {d.cwd}")
    if d.git_branch:
        header_parts.append(f"Branch: {d.git_branch}")
    if d.model:
        header_parts.append(f"Model: {d.model}")
    header = " · ".join(header_parts)
    when = []
    if d.started_at:
        when.append(d.started_at if d.ended_at in (None, d.started_at) else f"{d.started_at} → {d.ended_at}")
    n_req = max(d.turns, len(d.requests))
    when.append(f"{n_req} request{'s' if n_req != 1 else ''}")
    header_lines = [header, "Time: " + " · ".join(when)] if d.started_at else [header, " · ".join(when)]

    edited = set(d.files)
    read_only = [f for f in d.files_read if f not in edited]
    # (heading, items, items dropped while parsing, where they were dropped)
    sections = [
        ("Requests:", list(d.requests), _int(dropped.get("requests")), MAX_REQUESTS // 2),
        ("Files edited:", list(d.files), _int(dropped.get("files")), MAX_FILES // 2),
        ("Files read:", read_only, _int(dropped.get("files_read")), MAX_FILES_READ // 2),
        ("Commands:", list(d.commands), _int(dropped.get("commands")), MAX_COMMANDS // 2),
        ("Errors:", list(d.errors), _int(dropped.get("errors")), MAX_ERRORS // 2),
        ("Open ends:", list(d.open_ends), 0, MAX_OPEN_ENDS),
    ]
    sections = [s for s in sections if s[1]]
    # On ties the least valuable list is trimmed first.
    trim_rank = {"Files read:": 5, "Commands:": 4, "Files edited:": 3, "Errors:": 2, "Requests:": 1, "Open ends:": 0}
    keep = [len(s[1]) for s in sections]
    item_limit = [None]

    def render_items(items: list[str], k: int, extra: int, at: int) -> list[str]:
        lim = item_limit[0]
        fmt = (lambda s: "- " + (_short(s, lim) if lim else s))
        n = len(items)
        if k >= n:
            lines = [fmt(s) for s in items]
            if extra:
                lines.insert(min(at, n), f"- … {extra} more")
            return lines
        head_n = (k + 1) // 2
        tail_n = k // 2
        lines = [fmt(s) for s in items[:head_n]]
        lines.append(f"- … {n - k + extra} more")
        if tail_n:
            lines.extend(fmt(s) for s in items[n - tail_n :])
        return lines

    def build() -> str:
        out = list(header_lines)
        for (heading, items, extra, at), k in zip(sections, keep):
            out.append("")
            out.append(heading)
            out.extend(render_items(items, k, extra, at))
        return "\n".join(out)

    body = build()
    floor = 2
    while len(body) > max_chars:
        cands = [i for i, s in enumerate(sections) if keep[i] > min(len(s[1]), floor)]
        if not cands:
            if item_limit[0] is None or item_limit[0] > 60:
                item_limit[0] = 120 if item_limit[0] is None else 60
            elif floor > 1:
                floor = 1
            else:
                break
            body = build()
            continue
        i = max(cands, key=lambda j: (keep[j], trim_rank.get(sections[j][0], 0)))
        # Shrink faster while far over budget, one at a time near it.
        over = len(body) - max_chars
        step = max(1, min(keep[i] - max(min(len(sections[i][1]), floor), 1), over // 400))
        keep[i] -= step
        body = build()
    if len(body) > max_chars:
        body = body[: max(0, max_chars - 1)].rstrip() + "…"
        body = body[:max_chars]
    return _title(d), body


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


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
