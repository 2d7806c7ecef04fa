"""The session digest: its model and caps, its JSON snapshot and its plain-text rendering."""

from __future__ import annotations

import copy
import os
import re
from dataclasses import asdict, dataclass, field
from typing import Any

# --------------------------------------------------------------------------- caps

MAX_REQUESTS = 50
MAX_FILES = 200
MAX_FILES_READ = 200
MAX_COMMANDS = 100
MAX_ERRORS = 50
MAX_OPEN_ENDS = 12
MAX_INSTRUCTIONS = 8

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

    ``open_ends`` is what the session left open, in this order: the last request
    when it went unanswered, was interrupted or got a question back; to-dos the
    user stated ("we still need to …", "that's a TODO", "a follow-up"); what the user
    put off ("Deferred: …": the thing named in "let's leave the data checks for next
    week", "X can wait", 数据质量检查先放一放; after "ok, leave that for next time" or
    先放一放 the assistant's proposal); errors nothing has cleared yet; the agent's
    unfinished todo list; to-dos the agent stated (also as a label: "Still to do: …",
    "Next steps: …", 还没做完的：, 待办：; a label ending its line introduces a list,
    each item of which is an open end of its own, shown without a label); last,
    errors after which a file was edited but the failing
    command was not run again ("Possibly fixed, not re-run: …": an edit may be the
    fix, so such an error is not called unresolved, yet nothing showed it passing).
    A later success of the same command (``pytest`` after ``pytest``, also chained
    with ``&&`` after others: ``alembic upgrade head && pytest -q``), or of one that
    necessarily re-runs its step (``cargo test`` after ``cargo build``:
    ``commands.covered_keys``) clears an error entirely; a sentence that only asks to fix a TODO ("fix the TODO in
    x.py") is a request, not an open end, and a user turn that only acknowledges,
    declines or defers ("thanks", "never mind", "later") is no request at all.

    ``instructions`` are the standing instructions the user stated, each sentence once, the latest
    ``MAX_INSTRUCTIONS``: a rule for the sessions to come ("from now on always run make lint before you commit",
    "never push to main", "每次提交前都要跑 lint", "记住：…"), not a request for now ("run make lint now") and never a
    question or an assistant turn.
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
    instructions: list[str] = field(default_factory=list)
    turns: int = 0
    state: dict = field(default_factory=dict)


def _state(d: SessionDigest) -> dict:
    """Return d.state with every key present and of the right type."""
    st = d.state if isinstance(d.state, dict) else {}
    d.state = st
    st["v"] = _STATE_VERSION
    for name in ("uuids", "req_keys", "err_keys", "done_calls", "unresolved", "todos", "notes", "asks", "rules",
                 "deferred"):
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


# --------------------------------------------------------------------------- item text

_WS_RE = re.compile(r"\s+")


def _collapse(text: str) -> str:
    return _WS_RE.sub(" ", text).strip()


def _clip(text: str, limit: int) -> str:
    text = _collapse(text)
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + "…"


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
        instructions=strs("instructions"),
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


REQUESTS_HEADING = "Requests:"
OPEN_ENDS_HEADING = "Open ends:"
STANDING_HEADING = "Standing instructions:"
_MORE_RE = re.compile(r"^… \d+ more$")
_HEADLINE_JOIN = " · "


def headline(body: str, *, standing_first: bool = False, requests: bool = False) -> str:
    """The substance of a body `render_digest` wrote, for a one-line mention of the session (the briefing's
    "Last sessions", the open-task listing): what it left open and what the user set for the sessions to come,
    `Open ends: a; b · Standing instructions: c` (each when it has any; `standing_first` puts the instructions
    first, where a line cut short keeps them), else its requests as `Requests: a; b`; '' for a text that is not
    such a body (the header's platform / project / branch / model are never part of it). `requests`: its requests
    after them as well (the session just compacted: what it was doing)."""
    blocks = [block.split("\n") for block in (body or "").replace("\r\n", "\n").split("\n\n")]
    by_heading = {lines[0].strip(): lines[1:] for lines in blocks if lines}

    def listed(heading: str) -> list[str]:
        items = [line[2:].strip() for line in by_heading.get(heading, []) if line.startswith("- ")]
        return [item for item in items if item and not _MORE_RE.match(item)]

    def part(heading: str) -> str:
        items = listed(heading)
        if heading == REQUESTS_HEADING and requests:    # a turn that only set a rule is said among the rules
            rules = {rule.casefold() for rule in listed(STANDING_HEADING)}
            items = [item for item in items if item.casefold() not in rules]
        return f"{heading} {'; '.join(items)}" if items else ""

    order = (STANDING_HEADING, OPEN_ENDS_HEADING) if standing_first else (OPEN_ENDS_HEADING, STANDING_HEADING)
    order += (REQUESTS_HEADING,) if requests else ()
    return _HEADLINE_JOIN.join(p for p in map(part, order) if p) or part(REQUESTS_HEADING)


def render_digest(d: SessionDigest, *, max_chars: int = 6000) -> tuple[str, str]:
    """Return (title, body).

    The body is plain text: a header line, then 'Requests:', 'Files edited:',
    'Files read:', 'Commands:', 'Errors:', 'Standing instructions:' and 'Open ends:' sections of bullet
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
        (REQUESTS_HEADING, list(d.requests), _int(dropped.get("requests")), MAX_REQUESTS // 2),
        ("Files edited:", list(d.files), _int(dropped.get("files")), MAX_FILES // 2),
        ("Files read:", read_only, _int(dropped.get("files_read")), MAX_FILES_READ // 2),
        ("Commands:", list(d.commands), _int(dropped.get("commands")), MAX_COMMANDS // 2),
        ("Errors:", list(d.errors), _int(dropped.get("errors")), MAX_ERRORS // 2),
        (STANDING_HEADING, list(d.instructions), 0, MAX_INSTRUCTIONS),
        (OPEN_ENDS_HEADING, list(d.open_ends), 0, MAX_OPEN_ENDS),
    ]
    sections = [s for s in sections if s[1]]
    # On ties the least valuable list is trimmed first.
    trim_rank = {"Files read:": 5, "Commands:": 4, "Files edited:": 3, "Errors:": 2, REQUESTS_HEADING: 1,
                 OPEN_ENDS_HEADING: 0, STANDING_HEADING: -1}
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
