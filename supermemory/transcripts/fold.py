"""Platform-neutral folding of log events into a digest: paths, commands, errors, requests, notes, open ends."""

from __future__ import annotations

import functools
import hashlib
import re
import shlex
from typing import Any

from supermemory.text import lexicons
from supermemory.transcripts.commands import _command_key, _read_paths, covered_keys, shell_tokens
from supermemory.transcripts.digest import (
    _CAPS, _LAST_TEXT_CHARS, _MAX_KEYS, _MAX_NOTES, _MAX_PENDING, _MAX_TODOS, _MAX_UNRESOLVED, _clip, _collapse,
    COMMAND_CHARS, ERROR_CHARS, MAX_INSTRUCTIONS, MAX_OPEN_ENDS, NOTE_CHARS, PATH_CHARS, REQUEST_CHARS, SessionDigest,
)

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _key(text: str) -> str:
    return hashlib.sha1(_collapse(text).lower().encode("utf-8", "replace")).hexdigest()[:16]


def _remember(seq: list, item: Any, bound: int) -> None:
    seq.append(item)
    if len(seq) > bound:
        del seq[: len(seq) - bound]


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


def _unresolved(st: dict) -> list[list]:
    """The well-formed entries of st["unresolved"], each `[key, line, edited since]` (a two-item entry of an
    older snapshot reads as not edited since)."""
    return [
        [u[0], u[1], len(u) > 2 and u[2] is True]
        for u in st["unresolved"]
        if isinstance(u, list) and len(u) in (2, 3) and isinstance(u[0], str) and isinstance(u[1], str)
    ]


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
    # What the user says is still to do is an open end; a question ("can you do the follow-up?") asks for now.
    _scan_notes(st["asks"], _CODE_TODO_RE.sub("", t), questions=False)
    # What the user says holds from now on ("always run make lint before you commit") is a standing instruction.
    _scan_rules(st["rules"], t)


# A user turn made only of acknowledgements ("ok", "thanks", "never mind", "fine, skip it"), agreements and deferrals
# ("leave that for next time", "later", "not now"), clause by clause (`text/lexicons/acknowledgements.txt`,
# `agreement_words.txt`, `deferral_phrases.txt`; fillers such as "please", "just", "so" allowed between them).
_REPLY_FILLERS = r"please|pls|just|then|so|and|but|oh|ah|hmm+|well|also|actually|anyway|for now"
_REPLY_CLAUSE_SPLIT_RE = re.compile(r"[,.;:!?…—–()]+|\s-\s")
_REPLY_MAX_CHARS = 120


@functools.cache
def _reply_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """(any clause made only of reply words, a deferral in it, an acknowledgement in it), read on first use."""
    defer, ack, agree = ("|".join(lexicons.entries(name))
                         for name in ("deferral_phrases", "acknowledgements", "agreement_words"))
    unit = rf"(?:{defer}|{ack}|{agree}|{_REPLY_FILLERS})"
    return (re.compile(rf"{unit}(?:\s+{unit})*"), re.compile(rf"\b(?:{defer})\b"), re.compile(rf"\b(?:{ack})\b"))


def _reply_kind(text: str) -> str | None:
    """"defer", "ack" or "agree" for a user turn that only defers, acknowledges / declines, or agrees; None for
    anything else (a request, a question, a turn that names what to do)."""
    t = text.strip().lower().replace("\u2019", "'")
    if not t or len(t) > _REPLY_MAX_CHARS or "\n" in t:
        return None
    whole, deferral, acknowledgement = _reply_patterns()
    clauses = [" ".join(re.sub(r"[^\w\s']", " ", c).split()) for c in _REPLY_CLAUSE_SPLIT_RE.split(t)]
    clauses = [c for c in clauses if c]
    if not clauses or not all(whole.fullmatch(c) for c in clauses):
        return None
    if any(deferral.search(c) for c in clauses):
        return "defer"
    return "ack" if any(acknowledgement.search(c) for c in clauses) else "agree"


def _not_a_request(st: dict, text: str) -> bool:
    """Whether a user turn acknowledges, declines or defers rather than asks (then it is no request and leaves no
    question of the assistant open). A bare agreement ("ok", "sure") that answers the assistant's question
    approves what it asked, so it stays a request; a deferral keeps what the assistant proposed (its last question,
    else its last sentence) as a deferred open end, unless a note has it already."""
    kind = _reply_kind(text)
    if kind is None or (kind == "agree" and _last_question(st["last_text"])):
        return False
    if kind == "defer":
        proposal = _last_question(st["last_text"]) or _last_sentence(st["last_text"])
        if proposal and len(proposal) >= 8 and proposal not in st["notes"] and proposal not in st["deferred"]:
            _remember(st["deferred"], proposal, _MAX_NOTES)
    if st["reply"] != "none":   # a request still unanswered before it stays unanswered
        st["reply"] = "answered"
    st["last_text"] = ""
    return True


_TODO_CS_RE = re.compile(r"\b(?:TODO|FIXME|XXX|WIP)\b")
_TODO_CI_RE = re.compile(
    r"(?i)\bfollow[- ]?ups?\b|\bnext steps?\b|\bstill (?:need|needs|have|has) to\b|"
    r"\b(?:remaining|outstanding|open) (?:work|issues?|items?|tasks?|questions?|problems?)\b|"
    r"\bnot (?:yet )?(?:implemented|done|handled|supported|covered|addressed|fixed|tested)\b|"
    r"\bleft to do\b|\b(?:didn't|did not|couldn't|could not|haven't|have not) (?:get to|yet)\b|"
    r"\bknown (?:issues?|limitations?)\b|\bwork[- ]in[- ]progress\b|\b(?:for|until) later\b|"
    r"\b(?:leave|leaving|park|parking|defer|deferring|postpone|postponing|punt|save|saving|revisit|tackle|"
    r"address|handle|fix|finish|do|add|look into|deal with|come back to|circle back to)\b[^.;?!]{0,60}"
    r"(?<!\bor )(?<!\band )\blater\b"
)
# A sentence whose TODO is what it asks to do ("fix the TODO in x.py", "I resolved the FIXME") is no open end.
_DOING_TODO_RE = re.compile(
    r"(?i)\b(?:fix|implement|resolv|address|remov|handl|clean(?:ed|s|ing)? up|finish|complet|tackl)\w{0,4}\s+"
    r"(?:(?:the|this|that|these|those|all|each|every|any|our|my|your|remaining)\s+)?"
    r"(?:[\w.-]+\s+){0,2}?(?:TODO|FIXME|XXX)"
)
# A TODO comment of code pasted into a prompt outside a fence.
_CODE_TODO_RE = re.compile(r"(?m)^\s*(?:#|//|/\*|--|;)\s*(?:TODO|FIXME|XXX)\b.*$")
_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.S)
_BULLET_RE = re.compile(r"^(?:[-*•+]\s+|\d+[.)]\s+|#+\s+|>\s*)")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；])\s*(?=\S)")


def _text_lines(text: str) -> list[str]:
    text = _FENCE_RE.sub("\n", text)
    out = []
    for ln in text.splitlines():
        ln = _BULLET_RE.sub("", ln.strip()).replace("**", "").replace("__", "").strip()
        if ln:
            out.append(ln)
    return out


@functools.cache
def _leftover_label_re() -> re.Pattern:
    """A sentence that starts with a label of leftover work and a colon or dash ("Still to do: …", "Next steps:",
    "Remaining — …"; `text/lexicons/leftover_work_labels.txt`)."""
    labels = "|".join(lexicons.entries("leftover_work_labels"))
    return re.compile(rf"(?i)^(?:{labels})\s*(?::|[—–]|-\s)")


def _scan_notes(notes: list, text: str, *, questions: bool = True) -> None:
    """Collect TODO-ish statements of prose into `notes` (code blocks ignored; questions too unless `questions`)."""
    lines = _text_lines(text)
    for i, ln in enumerate(lines):
        for sentence in _SENTENCE_RE.split(ln):
            if not (_TODO_CS_RE.search(sentence) or _TODO_CI_RE.search(sentence)
                    or _leftover_label_re().match(sentence)):
                continue
            if _DOING_TODO_RE.search(sentence) or (not questions and sentence.rstrip().endswith("?")):
                continue
            note = sentence
            if note.endswith(":"):  # "Next steps:" → take the items below it
                following = [x for x in lines[i + 1 : i + 4]]
                if following:
                    note = note + " " + "; ".join(following)
            note = _clip(note, NOTE_CHARS)
            if len(note) < 8 or note in notes:
                continue
            _remember(notes, note, _MAX_NOTES)


# A standing instruction: a rule the user sets for the sessions to come, not a request for now. English: "from now
# on" / "going forward" anywhere in the sentence, or a sentence that starts (after "and", "please", "make sure to",
# "you should" …) with "always", "never", "don't ever", "every time you" or "whenever you" ("always fails" and
# "never mind" are no rule). Chinese: 从现在开始/从今以后, 以后都/以后不要 …, 每次 … 都要/必须/记得 …, 永远不要, a
# sentence that starts with 记住. Questions are never one.
_RULE_LEAD = (r"(?:(?:and|also|so|but|oh|ok|okay|then|please|pls|remember to|make sure(?: to| you| that you)?|"
              r"be sure to|(?:you|we) (?:should|must|need to|have to)|i want you to|let'?s)\b[\s,:]*)*")
_RULE_EN_RE = re.compile(
    r"(?i)\b(?:from now on|from here on(?: out)?|going forward|henceforth)\b|^" + _RULE_LEAD +
    r"(?:always\b(?!\s+(?:fails?|failed|failing|happens|happened|crashes|crashed|breaks|broke|was|were|is|are|has|"
    r"had|gets|got|seems|returns|shows)\b)|never\b(?!\s+(?:mind|seen|had|been|worked|works|got|did|does|was|were|"
    r"happened|heard|thought|knew|used)\b)|(?:don'?t|do not) ever\b|(?:every|each) time you\b|whenever you\b)"
)
_RULE_ZH_RE = re.compile(
    r"从现在(?:开始|起)|从今(?:以后|往后|天起)|(?:以后|今后)(?:都|也都|一律|每次|永远|始终|总是|不要|别|不许|不准|请)|"
    r"每次.{0,30}?(?:都要|都得|都先|必须|记得|务必|一定要|之前先|前先|不要|别|不许|不准)|"
    r"永远(?:不要|别|不许|不准|不能)|绝对?不要|^(?:请|你要|要|一定要)?记住"
)
_RULE_CONNECTIVE_RE = re.compile(r"(?i)^(?:(?:and|also|so|but|oh|ok|okay|then)\b[\s,]*)+")
_QUESTION_END_RE = re.compile(r"(?:[?？]|[吗呢])[\s\"'”’)）]*$")


def _rule_key(rule: str) -> str:
    """The same rule said again ("Always run go vet!" after "always run go vet.") has the same key."""
    return _key(rule.rstrip(" .!。！;；"))


def _scan_rules(rules: list, text: str) -> None:
    """Collect the standing instructions a user turn states into `rules`, as their sentences (code blocks, code
    TODO comments and questions ignored; a leading "and" / "also" left out), each once."""
    for ln in _text_lines(_CODE_TODO_RE.sub("", text)):
        for sentence in _SENTENCE_RE.split(ln):
            sentence = _RULE_CONNECTIVE_RE.sub("", sentence.strip())
            if _QUESTION_END_RE.search(sentence) or not (
                    _RULE_EN_RE.search(sentence) or _RULE_ZH_RE.search(sentence)):
                continue
            rule = _clip(sentence[:1].upper() + sentence[1:], NOTE_CHARS)
            if len(rule) < 8 or any(_rule_key(rule) == _rule_key(seen) for seen in rules if isinstance(seen, str)):
                continue
            _remember(rules, rule, MAX_INSTRUCTIONS)


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


def _last_sentence(text: str) -> str | None:
    lines = _text_lines(text)
    sentences = _SENTENCE_RE.split(lines[-1]) if lines else []
    last = sentences[-1].strip() if sentences else ""
    return _clip(last, NOTE_CHARS) if last else None


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
    for ask in st["asks"][-5:]:
        if isinstance(ask, str):
            ends.append(f"To do: {ask}")
    for item in st["deferred"][-3:]:
        if isinstance(item, str):
            ends.append(f"Deferred: {item}")
    errors = _unresolved(st)[-3:]
    ends.extend(f"Unresolved error: {line}" for _key, line, edited in errors if not edited)
    for todo in st["todos"][:5]:
        if isinstance(todo, str):
            ends.append(f"Unfinished todo: {todo}")
    for note in st["notes"][-5:]:
        if isinstance(note, str):
            ends.append(f"Note: {note}")
    ends.extend(f"Possibly fixed, not re-run: {line}" for _key, line, edited in errors if edited)
    seen: set[str] = set()
    unique = []
    for e in ends:
        if e not in seen:
            seen.add(e)
            unique.append(e)
    d.open_ends = unique[:MAX_OPEN_ENDS]
    d.instructions = [rule for rule in st["rules"] if isinstance(rule, str)][-MAX_INSTRUCTIONS:]


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
