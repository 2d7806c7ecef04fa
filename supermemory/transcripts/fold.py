"""Platform-neutral folding of log events into a digest: paths, commands, errors, requests, notes, open ends."""

from __future__ import annotations

import hashlib
import re
import shlex
from typing import Any

from supermemory.transcripts.commands import _command_key, _read_paths, covered_keys, shell_tokens
from supermemory.transcripts.digest import (
    _CAPS, _LAST_TEXT_CHARS, _MAX_KEYS, _MAX_PENDING, _MAX_TODOS, _MAX_UNRESOLVED, _clip, _collapse,
    COMMAND_CHARS, ERROR_CHARS, MAX_INSTRUCTIONS, NOTE_CHARS, PATH_CHARS, REQUEST_CHARS, SessionDigest,
)
from supermemory.transcripts.open_ends import (  # noqa: F401  (_finish, _remember: the parsers' names, from here)
    take_up, work_words, _CODE_TODO_RE, _finish, _not_a_request, _QUESTION_END_RE, _remember, _scan_notes,
    _SENTENCE_RE, _text_lines, _unresolved,
)

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _key(text: str) -> str:
    return hashlib.sha1(_collapse(text).lower().encode("utf-8", "replace")).hexdigest()[:16]


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
        if d.started_at is None or ts < d.started_at:   # files of one session may come out of order
            d.started_at = ts
        if d.ended_at is None or ts > d.ended_at:
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


# --------------------------------------------------------------------------- tool output

_LINE_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError)


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
    key = key.split(_KEY_SEP)[0]
    unresolved = [u for u in _unresolved(st) if u[0] != key]
    unresolved.append([key, line, False])
    st["unresolved"] = unresolved[-_MAX_UNRESOLVED:]


def _resolve(st: dict, key: str, *, edited: bool = False) -> None:
    """A success with `key` clears unresolved errors of any of its keys (`_error_key`) and any generic ones; a
    successful file edit (`edited`) marks the others as edited since (possibly fixed, until their command runs
    again)."""
    cleared = {"", *key.split(_KEY_SEP)}
    st["unresolved"] = [[k, line, was or edited] for k, line, was in _unresolved(st) if k not in cleared]


_KEY_SEP = "\t"


def _error_key(tool: str | None, cmd: str | None) -> str:
    """What a failure is filed under and a success clears: `cmd:` + the program a command runs
    (`commands._command_key`), else `tool:` + the tool. A command that chains others with `&&` also carries their
    keys, tab-separated after its own: exited 0, every one of them ran and succeeded, so `alembic upgrade head &&
    pytest -q` clears an earlier `pytest` failure; so do the steps each of them necessarily re-runs
    (`commands.covered_keys`: `cargo test` builds the crate, clearing a `cargo build` failure). A failure is filed
    under the first key only (which part of the chain failed is not known)."""
    if cmd:
        programs = [_command_key(cmd)] + [_command_key(part) for part in _chained(cmd)]
        keys: list[str] = []
        for k in ("cmd:" + k for program in programs for k in (program, *covered_keys(program))):
            if k not in keys:
                keys.append(k)
        return _KEY_SEP.join(keys)
    if tool:
        return "tool:" + tool
    return ""


def _chained(cmd: str) -> list[str]:
    """The commands of `cmd`'s last statement (after its last `;` or `&`) when they are joined by `&&` alone (an
    exit status of 0 then means each succeeded; after `||` it may not); [] when it is one command or does not parse.
    A multi-line script reads as one statement (its newlines are not told apart from quoted ones)."""
    tokens = shell_tokens(cmd)
    if tokens is None:
        return []
    statement: list[str] = []
    for tok in tokens:
        if tok in (";", "&", ";;", ";&", ";;&"):
            statement = []
        elif tok not in ("(", ")"):
            statement.append(tok)
    if "||" in statement or "&&" not in statement:
        return []
    parts: list[list[str]] = [[]]
    for tok in statement:
        if tok == "&&":
            parts.append([])
        else:
            parts[-1].append(tok)
    return [shlex.join(part) for part in parts if part]


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
    if _not_a_request(st, t):
        return
    k = _key(t)
    if k in st["req_keys"]:
        return
    _remember(st["req_keys"], k, _MAX_KEYS)
    d.turns += 1
    _append_capped(d, st, "requests", _clip(t, REQUEST_CHARS), unique=False)
    st["reply"] = "none"
    st["last_text"] = ""
    # A to-do the user now asks for is taken up: the request stands for it, done or not (`take_up`).
    take_up(st["asks"], t)
    take_up(st["notes"], t)
    # What the user says is still to do is an open end; a question ("can you do the follow-up?") asks for now.
    # A sentence that puts off a thing it names ("let's leave the data checks for next week") defers that thing.
    _scan_notes(st["asks"], _CODE_TODO_RE.sub("", t), questions=False, deferred=st["deferred"])
    # What the user says holds from now on ("always run make lint before you commit") is a standing instruction; a
    # turn that only sets such rules ("Also remember: the header is Idempotency-Key.") asks for nothing now.
    _drop_revoked(st["rules"], t)
    if _scan_rules(st["rules"], t):
        st["reply"] = "answered"



# A standing instruction: a rule the user sets for the sessions to come, not a request for now. English: "from now
# on" / "going forward" anywhere in the sentence, or a sentence that starts (after "and", "please", "make sure to",
# "you should" …) with "always", "never", "don't ever", "every time you" or "whenever you" ("always fails" and
# "never mind" are no rule), or with "remember:" / "remember that" / "keep in mind that", a fact to keep (as 记住).
# Chinese: 从现在开始/从今以后, 以后都/以后不要 …, 每次 … 都要/必须/记得 …, 永远不要, a sentence that starts with 记住.
# Questions are never one.
_RULE_LEAD = (r"(?:(?:and|also|so|but|oh|ok|okay|then|please|pls|remember to|make sure(?: to| you| that you)?|"
              r"be sure to|(?:you|we) (?:should|must|need to|have to)|i want you to|let'?s)\b[\s,:]*)*")
_RULE_EN_RE = re.compile(
    r"(?i)\b(?:from now on|from here on(?: out)?|going forward|henceforth)\b|^" + _RULE_LEAD +
    r"(?:always\b(?!\s+(?:fails?|failed|failing|happens|happened|crashes|crashed|breaks|broke|was|were|is|are|has|"
    r"had|gets|got|seems|returns|shows)\b)|never\b(?!\s+(?:mind|seen|had|been|worked|works|got|did|does|was|were|"
    r"happened|heard|thought|knew|used)\b)|(?:don'?t|do not) ever\b|(?:every|each) time you\b|whenever you\b|"
    r"(?:remember|keep in mind)(?:\s+that\b|\s*:))"
)
_RULE_ZH_RE = re.compile(
    r"从现在(?:开始|起)|从今(?:以后|往后|天起)|(?:以后|今后)(?:都|也都|一律|每次|永远|始终|总是|不要|别|不许|不准|请)|"
    r"每次.{0,30}?(?:都要|都得|都先|必须|记得|务必|一定要|之前先|前先|不要|别|不许|不准)|"
    r"永远(?:不要|别|不许|不准|不能)|绝对?不要|^(?:请|你要|要|一定要)?记住"
)
_RULE_CONNECTIVE_RE = re.compile(r"(?i)^(?:(?:and|also|so|but|oh|ok|okay|then)\b[\s,]*)+")


def _rule_key(rule: str) -> str:
    """The same rule said again ("Always run go vet!" after "always run go vet.") has the same key."""
    return _key(rule.rstrip(" .!。！;；"))


# A rule the user takes back later in the session ("scratch the pristine build rule", "forget that rule", "you don't
# need to run the linters anymore", "取消那条构建的规则"): fresh-user run fu37 D7 kept it as standing.
_REVOKE_RE = re.compile(
    r"(?i)\b(?:scratch|forget(?: about)?|drop|ignore|cancel|disregard|revoke|undo|lift|never ?mind)\b[\s,:]+"
    r"(?:the|that|this|my|our|your)?\s*(?P<what>[^.;!?\n]{0,80}?)\s*\b(?:rule|instruction)s?\b"
    r"|\b(?:you |we )?(?:don'?t|do not|no longer) (?:need|have) to (?P<task>[^.;!?\n]{3,80}?) any ?more\b"
    r"|(?:取消|作废|撤销|忽略|不用管)(?:那条|这条|之前的|刚才的)?(?P<zh>[^。；！？\n]{0,30}?)的?(?:规则|要求|规定)")


def _drop_revoked(rules: list, text: str) -> None:
    """Take out of `rules` those a user turn revokes: each that shares a word (three letters or more, or two
    Chinese characters) with what the revocation names, or the latest one when it names nothing ("scratch that
    rule")."""
    for m in _REVOKE_RE.finditer(text):
        words = work_words(m.group("what") or m.group("task") or m.group("zh") or "")
        live = [r for r in rules if isinstance(r, str)]
        gone = [r for r in live if any(w in r.casefold() for w in words)] if words else live[-1:]
        rules[:] = [r for r in rules if r not in gone]


def _scan_rules(rules: list, text: str) -> bool:
    """Collect the standing instructions a user turn states into `rules`, as their sentences (code blocks, code
    TODO comments and questions ignored; a leading "and" / "also" left out), each once. True when every sentence of
    the turn is one (fresh-user run fu34 D6: "Also remember: …" was listed as an unanswered request)."""
    only = True
    for ln in _text_lines(_CODE_TODO_RE.sub("", text)):
        for sentence in _SENTENCE_RE.split(ln):
            sentence = _RULE_CONNECTIVE_RE.sub("", sentence.strip())
            if _QUESTION_END_RE.search(sentence) or not (
                    _RULE_EN_RE.search(sentence) or _RULE_ZH_RE.search(sentence)):
                only = only and not sentence.strip(" .!。！")
                continue
            rule = _clip(sentence[:1].upper() + sentence[1:], NOTE_CHARS)
            if len(rule) < 8 or any(_rule_key(rule) == _rule_key(seen) for seen in rules if isinstance(seen, str)):
                continue
            _remember(rules, rule, MAX_INSTRUCTIONS)
    return only and bool(text.strip())


def _assistant_text(st: dict, text: Any) -> None:
    if not isinstance(text, str) or not text.strip():
        return
    st["reply"] = "answered"
    st["last_text"] = text.strip()[-_LAST_TEXT_CHARS:]
    # The agent carried on: generic errors (API/stream hiccups) are behind it.
    st["unresolved"] = [u for u in _unresolved(st) if u[0] != ""]
    _scan_notes(st["notes"], text)


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
