"""Backfill: the Claude Code transcripts and Codex rollouts already on disk, found, grouped by session and project, and captured once each.

Discovery reads only the first lines of each file (session id, working directory, first time) and its
last ones (the session's last activity, which `--since` and `--limit` compare);
capture goes through `capture.capture_session`, the hooks' path (redaction, digest, version
chain), with the session's own time and every file of one session (a resumed session's later
file, subagent transcripts) folded into one memory. Returns plain data; `render.py` shows it.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable

from supermemory import capture
from supermemory.config import hashed_namespace, namespace_for_dir, normalize_namespace
from supermemory.errors import InvalidInputError, NamespaceError, SupermemoryError
from supermemory.store import reads, versions, writes
from supermemory.store.records import clean_text, content_hash, parse_id
from supermemory.text import summarize
from supermemory.store.context import StoreContext
from supermemory.timeparse import from_iso, iso, parse_when

SNIFF_LINES = 40                 # lines read per file to find its session id, folder and time
SNIFF_BYTES = 512 * 1024         # and at most this much
STEP_BYTES = 4 * 1024 * 1024     # capture reads a transcript in chunks of this size (bounded memory)
TAIL_BYTES = 64 * 1024           # the end of a file read for its last timestamp, grown while no line there has one
TAIL_MAX_BYTES = 4 * 1024 * 1024  # up to this much (a huge last tool output); past it, the first lines' time
PLATFORMS = ("claude-code", "codex")
_UUID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", re.I)
_READ_ERRORS = (SupermemoryError, OSError, ValueError, UnicodeError, RecursionError, MemoryError)

Progress = Callable[[int, int, int, int], None]   # (sessions done, sessions, bytes done, bytes)
EMPTY = "nothing to keep (no requests, files or commands)"   # why a session with nothing in it is skipped


def add_arguments(parser) -> None:
    """CLI flags of `supermemory backfill` (kept here so the command owns its interface)."""
    parser.add_argument("--claude", metavar="DIR", help="Claude Code projects folder (default ~/.claude/projects)")
    parser.add_argument("--codex", metavar="DIR", help="Codex sessions folder (default ~/.codex/sessions)")
    parser.add_argument("--project", metavar="PATH", help="only the sessions of this project")
    parser.add_argument("--since", help="only sessions active since (30d, ISO date): the last timestamp in their "
                        "transcripts, or the file's modification time when a transcript has none")
    parser.add_argument("--limit", type=int, help="at most this many sessions (the most recently active, as --since "
                        "compares)")
    parser.add_argument("--dry-run", action="store_true", help="show what would be captured; write nothing")


def default_dirs(env: dict | None = None) -> dict[str, str]:
    """Where each agent keeps its history: `~/.claude/projects` (or `$CLAUDE_CONFIG_DIR/projects`)
    and `~/.codex/sessions` (or `$CODEX_HOME/sessions`)."""
    env = os.environ if env is None else env
    home = os.path.expanduser("~")
    claude = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    codex = env.get("CODEX_HOME") or os.path.join(home, ".codex")
    return {"claude-code": os.path.join(claude, "projects"), "codex": os.path.join(codex, "sessions")}


@dataclass
class Session:
    """One session as found on disk: its files (main first), folder and the namespace it files under."""

    platform: str
    session_id: str
    files: list = field(default_factory=list)       # [(path, size, mtime, first time, role, last activity)]
    cwd: str | None = None
    namespace: str = "root"
    folder_missing: bool = False

    @property
    def bytes(self) -> int:
        return sum(f[1] for f in self.files)

    @property
    def mtime(self) -> float:
        return max(f[2] for f in self.files)

    @property
    def stamped(self) -> bool:
        """Whether a file of it carries a timestamp, so a plan can say where its activity time comes from."""
        return any(f[5] is not None for f in self.files)

    @property
    def active(self) -> float:
        """When the session was last active (what `--since` and `--limit` compare): a copied file has a new mtime.

        The newest timestamp in its transcripts; the newest modification time only when none carries one.
        """
        stamps = [f[5] for f in self.files if f[5] is not None]
        return max(stamps) if stamps else self.mtime

    def ordered_paths(self) -> list[str]:
        """The main transcript first, then the others (resumed parts, subagents) by their first time."""
        ranked = sorted(self.files, key=lambda f: ({"main": 0, "part": 1, "subagent": 2}[f[4]], f[3] or "", f[0]))
        return [f[0] for f in ranked]


def _sniff(path: str) -> list[dict]:
    """The first complete JSON objects of a file (OSError when it cannot be read)."""
    out = []
    with open(path, "rb") as fh:
        budget = SNIFF_BYTES
        for _ in range(SNIFF_LINES):
            raw = fh.readline(budget)
            if not raw:
                break
            budget -= len(raw)
            try:
                obj = json.loads(raw.decode("utf-8", errors="replace"))
            except (ValueError, RecursionError):
                obj = None
            if isinstance(obj, dict):
                out.append(obj)
            if budget <= 0:
                break
    return out


def _stamp(obj) -> float | None:
    """A transcript line's time, so a session is dated by what it did: `timestamp` as epoch seconds, or None."""
    value = obj.get("timestamp") if isinstance(obj, dict) else None
    try:
        return from_iso(value.strip()) if isinstance(value, str) and value.strip() else None
    except (ValueError, OverflowError):
        return None


def _last_activity(path: str, size: int, head: list[dict]) -> float | None:
    """When this file's session was last active, read from its end so a huge transcript is never parsed whole.

    The newest timestamp of its complete last lines (the end read backwards, `TAIL_BYTES` growing to
    `TAIL_MAX_BYTES` while no line there has one) or of its first lines (`head`, already read; an older Codex
    rollout stamps only its header); None when neither has one. Only lines naming `"timestamp"` are parsed.
    """
    found = [t for t in map(_stamp, head) if t is not None]
    window = TAIL_BYTES
    with open(path, "rb") as fh:
        while True:
            start = max(0, size - window)
            fh.seek(start)
            lines = fh.read(size - start).split(b"\n")
            tail = []
            for raw in lines[1:] if start else lines:   # the first line of a window that starts mid-file is cut
                if b'"timestamp"' in raw:
                    try:
                        tail.append(_stamp(json.loads(raw.decode("utf-8", errors="replace"))))
                    except (ValueError, RecursionError):
                        continue
            tail = [t for t in tail if t is not None]
            if tail or start == 0 or window >= TAIL_MAX_BYTES:
                break
            window *= 4
    return max(found + tail) if found or tail else None


def _first(objs: list[dict], *getters) -> str | None:
    for obj in objs:
        for get in getters:
            try:
                value = get(obj)
            except (AttributeError, TypeError, KeyError):
                value = None
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def _parent_thread(node, depth: int = 0) -> str | None:
    """A Codex subagent rollout's parent session (`source.subagent.thread_spawn.parent_thread_id`)."""
    if depth > 4 or not isinstance(node, dict):
        return None
    for key, value in node.items():
        if key in ("parent_thread_id", "parent_session_id") and isinstance(value, str) and value.strip():
            return value.strip()
        found = _parent_thread(value, depth + 1)
        if found:
            return found
    return None


def _describe(path: str, platform: str, objs: list[dict]) -> tuple[str, str | None, str | None, str]:
    """(session id, cwd, first time, role) of one file from its first lines and its name."""
    name = os.path.basename(path)
    if platform == "claude-code":
        parts = os.path.normpath(path).split(os.sep)
        under_subagents = len(parts) >= 3 and parts[-2] == "subagents"
        sid = _first(objs, lambda o: o.get("sessionId"))
        if sid is None:
            sid = parts[-3] if under_subagents else name[:-len(".jsonl")]
        sidechain = under_subagents or any(o.get("isSidechain") is True and o.get("agentId") for o in objs[:3])
        role = "subagent" if sidechain else ("main" if name == f"{sid}.jsonl" else "part")
        cwd = _first(objs, lambda o: o.get("cwd"))
        when = _first(objs, lambda o: o.get("timestamp"))
        return sid, cwd, when, role
    meta = [o.get("payload") if isinstance(o.get("payload"), dict) else o for o in objs
            if o.get("type") in ("session_meta", None)]
    sid = _first(meta, lambda o: o.get("id"))
    if sid is None:
        match = _UUID_RE.search(name)
        sid = match.group(1) if match else name[:-len(".jsonl")]
    parent = next((p for p in (_parent_thread(m.get("source")) for m in meta) if p), None)
    cwd = _first(meta + [o.get("payload") for o in objs if isinstance(o.get("payload"), dict)], lambda o: o.get("cwd"))
    when = _first(meta, lambda o: o.get("timestamp")) or _first(objs, lambda o: o.get("timestamp"))
    if parent and parent != sid:
        return parent, cwd, when, "subagent"
    return sid, cwd, when, "main"


def _walk(root: str, platform: str, unreadable: list) -> list[str]:
    """Every transcript file under `root` (Codex: `rollout-*.jsonl`), sorted."""
    found = []

    def failed(exc: OSError) -> None:
        unreadable.append({"path": getattr(exc, "filename", None) or root, "reason": f"unreadable folder: {exc.strerror or exc}"})

    for folder, dirs, names in os.walk(root, onerror=failed):
        dirs.sort()
        for name in names:
            if name.endswith(".jsonl") and (platform != "codex" or name.startswith("rollout-")):
                found.append(os.path.join(folder, name))
    return sorted(found)


def _namespace(cwd: str | None, slug: str, cache: dict, claims: dict) -> tuple[str, bool]:
    """(namespace, folder missing) for a recorded working directory, as live capture files it; without one,
    from `slug`, the folder Claude Code names after it (Codex's folders are dates: `slug` is '' there)."""
    if (cwd, slug) in cache:
        return cache[cwd, slug]
    if cwd:   # a folder gone since keeps the rules (its path's hash), and never takes a live project's name
        answer = (namespace_for_dir(cwd, **claims), not os.path.isdir(cwd))
    else:
        try:
            answer = (normalize_namespace(slug.rsplit("-", 1)[-1] or "root"), True)
        except InvalidInputError:   # no letter or digit: the folder's own name, as for a path
            answer = (hashed_namespace(slug), True)
    cache[cwd, slug] = answer
    return answer


def discover(*, claude: str | None = None, codex: str | None = None, project: str | None = None,
             since=None, limit: int | None = None, now: float | None = None,
             home=None) -> tuple[list[Session], list[dict], dict]:
    """The sessions on disk, newest first, the files that could not be read, and what the filters left (`selection`).

    :param claude: Claude Code projects folder (default `default_dirs()`); `codex` likewise.
    :param project: only sessions filed under this project's namespace or folder.
    :param since: only sessions active at or after this (`30d`, ISO): `Session.active`, the last timestamp in
        their transcripts (the file's modification time for one without any).
    :param limit: at most this many (the most recently active).
    :param home: the data dir whose namespace records name the projects (`config.namespace_for_dir`); names are
        only looked up here, and claimed by the capture that writes a session under one (`claim_dir`).
    :returns: `selection` says where it looked, the project asked for (its namespace, whether its folder
        exists, how many sessions matched it) and how many sessions `since` kept, so an empty answer says why.
    Raises:
        InvalidInputError: an unreadable `since`, a bad `limit`, none of the `claude` / `codex` folders given
            exists (one of two missing is listed under the unreadable), or `project` names a folder that does
            not exist and no session on disk ran in it (a typo, most likely; a deleted one with sessions is fine).
    """
    now = time.time() if now is None else now
    start = parse_when(since, now)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInputError("limit must be a positive whole number")
    roots = default_dirs()
    roots = {"claude-code": os.path.expanduser(claude) if claude else roots["claude-code"],
             "codex": os.path.expanduser(codex) if codex else roots["codex"]}
    unreadable: list[dict] = []
    # A default folder may well be missing (that agent is not used here); a folder named is reported,
    # and an error when none of those named exists (nothing the user asked for can be read).
    named = [(label, roots[platform]) for label, platform, given in (
        ("Claude Code", "claude-code", claude), ("Codex", "codex", codex)) if given]
    absent = [(label, root) for label, root in named if not os.path.isdir(root)]
    if named and len(absent) == len(named):
        raise InvalidInputError("; ".join(f"the {label} folder {root} does not exist" for label, root in absent))
    unreadable.extend({"path": root, "reason": f"the {label} folder does not exist"} for label, root in absent)
    sessions: dict[tuple, Session] = {}
    cache: dict = {}
    claims = {"home": home, "record": False}
    for platform, root in roots.items():
        if not os.path.isdir(root):
            continue
        for path in _walk(root, platform, unreadable):
            try:
                st = os.stat(path)
                objs = _sniff(path)
                last = _last_activity(path, st.st_size, objs)
            except OSError as exc:
                unreadable.append({"path": path, "reason": f"unreadable: {exc.strerror or exc}"})
                continue
            sid, cwd, when, role = _describe(path, platform, objs)
            slug = os.path.relpath(path, root).split(os.sep)[0] if platform == "claude-code" else ""
            item = sessions.setdefault((platform, sid), Session(platform, sid))
            item.files.append((os.path.abspath(path), st.st_size, st.st_mtime, when, role, last))
            if item.cwd is None and cwd:
                item.cwd = cwd
            item.namespace, item.folder_missing = _namespace(item.cwd, slug, cache, claims)
    found = list(sessions.values())
    selection: dict = {"roots": [root for root in roots.values() if os.path.isdir(root)], "on_disk": len(found)}
    if project:
        folder = os.path.abspath(os.path.expanduser(project))
        wanted = namespace_for_dir(folder, **claims)
        found = [s for s in found if s.namespace == wanted or (s.cwd and (s.cwd == folder or s.cwd.startswith(folder + os.sep)))]
        selection.update(project=folder, project_namespace=wanted, project_exists=os.path.isdir(folder),
                         project_matched=len(found))
        if not found and not selection["project_exists"]:
            raise InvalidInputError(f"no such project folder: {folder}, and no transcript on disk matched it "
                                    f"(no session ran there, none filed under '{wanted}')")
    if start is not None:
        found = [s for s in found if s.active >= start]
        selection.update(since=iso(start), since_matched=len(found))
    found.sort(key=lambda s: (-s.active, s.platform, s.session_id))
    return (found[:limit] if limit else found), unreadable, selection


def _add_counts(lines: dict, counts: dict) -> None:
    """A session's skipped-line counts into the run's (`partial_tail`: files whose last line is unfinished)."""
    for key, value in counts.items():
        lines[key] = lines.get(key, 0) + ((1 if value else 0) if key == "partial_tail" else value)


def _outcome(ctx: StoreContext, session: Session, stored: dict, stats: dict | None = None) -> str:
    """What `capture.capture_session` would answer for this session ('created', 'updated', 'unchanged',
    'empty', 'duplicate', 'no transcript'), writing nothing: `capture.plan_capture` reads and decides as the
    capture does (the same saved state, a live capture's too, the same lines into the same digest), and the
    rendered memory is compared with the stored one. `stored` caches, per namespace, the content hashes of
    its live session memories, the ones this plan would write included.
    """
    paths = session.ordered_paths()
    planned = capture.plan_capture(ctx, paths[0], extra_paths=paths[1:], session_id=session.session_id,
                                   platform=session.platform, step_bytes=STEP_BYTES, stats=stats)
    if planned.status is not None:   # 'no transcript', 'unchanged' or 'empty'
        return planned.status
    body, title = _as_stored(ctx, planned.body, planned.title)
    rec = ctx.fetch(versions.head(ctx, planned.memory_id)) if planned.memory_id else None
    if rec is not None and rec["deleted_at"] is None:   # a new version of it, unless nothing changed
        new_hash = content_hash(rec["kind"], title, body)
        hashes = _session_hashes(ctx, rec["namespace"], stored)
        if new_hash == rec["content_hash"]:
            return "unchanged"
        hashes.discard(rec["content_hash"])
        hashes.add(new_hash)
        return "updated"
    hashes = _session_hashes(ctx, normalize_namespace(session.namespace), stored)
    new_hash = content_hash("session", title, body)
    if new_hash in hashes:
        return "duplicate"
    hashes.add(new_hash)
    return "created"


def _as_stored(ctx: StoreContext, body: str, title: str) -> tuple[str, str]:
    """A capture's body and title as `remember` / `update` store them (cleaned, redacted, a title made
    from the body when none is left)."""
    body = clean_text(body, "content", max_chars=int(ctx.config.get("store.max_content_chars")))
    title = clean_text(title, "title", max_chars=500, allow_empty=True)
    body, title, _counts, _left_out = writes.prepare_content(ctx, body, title)
    if not body:
        raise InvalidInputError("content is empty after removing <private> spans")
    return body, title or summarize(body, max_chars=writes.TITLE_CHARS)


def _session_hashes(ctx: StoreContext, namespace: str, stored: dict) -> set:
    """The content hashes of the live session memories of `namespace` (read once per plan)."""
    if namespace not in stored:
        hashes, cursor = set(), None
        while True:
            try:
                page = reads.list_memories(ctx, namespace=namespace, kinds=["session"], limit=1000, cursor=cursor,
                                           count=False)
            except NamespaceError:   # no memory in it yet
                break
            for item in page["items"]:
                rec = ctx.fetch(parse_id(item["id"])) if item["namespace"] == namespace else None
                if rec is not None:
                    hashes.add(rec["content_hash"])
            cursor = page.get("next_cursor")
            if not cursor:
                break
        stored[namespace] = hashes
    return stored[namespace]


def _tally(row: dict, status: str | None) -> None:
    """Count one session's capture answer (the real one, or the plan's) in its project's row."""
    if status in ("created", "updated", "unchanged"):
        row[{"created": "captured"}.get(status, status)] += 1
    elif status == "duplicate":
        _skip(row, "same digest as another session")
    elif status == "empty":
        _skip(row, EMPTY)
    elif status == "no transcript":
        _skip(row, "file vanished")
    elif status is not None:
        _skip(row, str(status))


def _row(rows: dict, session: Session) -> dict:
    row = rows.setdefault(session.namespace, {"namespace": session.namespace, "found": 0, "captured": 0,
                                              "updated": 0, "unchanged": 0, "skipped": 0, "reasons": {},
                                              "bytes": 0, "missing_folders": []})
    row["found"] += 1
    row["bytes"] += session.bytes
    if session.folder_missing and session.cwd and session.cwd not in row["missing_folders"]:
        row["missing_folders"].append(session.cwd)
    return row


def _skip(row: dict, reason: str) -> None:
    row["skipped"] += 1
    row["reasons"][reason] = row["reasons"].get(reason, 0) + 1


def _result(rows: dict, sessions: list[Session], unreadable: list, lines: dict, started: float, dry_run: bool,
            selection: dict) -> dict:
    projects = sorted(rows.values(), key=lambda r: (-r["found"], r["namespace"]))
    totals = {k: sum(r[k] for r in projects) for k in ("found", "captured", "updated", "unchanged", "skipped")}
    return {"dry_run": dry_run, "sessions": totals["found"], **{k: v for k, v in totals.items() if k != "found"},
            "bytes": sum(s.bytes for s in sessions), "files": sum(len(s.files) for s in sessions),
            "projects": projects, "unreadable": unreadable, "lines": lines,
            "missing_folders": [{"namespace": r["namespace"], "paths": r["missing_folders"]}
                                for r in projects if r["missing_folders"]],
            "selection": selection, "seconds": round(time.monotonic() - started, 3)}


def _check_enabled(ctx: StoreContext) -> None:
    if not capture.is_enabled(ctx):
        raise InvalidInputError("capture is switched off (capture.enabled = false): nothing to backfill into")


def _error(exc: BaseException) -> str:
    return f"error: {type(exc).__name__}: {str(exc)[:120]}"


def plan(ctx: StoreContext, *, claude: str | None = None, codex: str | None = None, project: str | None = None,
         since=None, limit: int | None = None) -> dict:
    """What `backfill` would do, writing nothing: per project the sessions found, how many are new
    or grown (would be captured), how many are captured already and how many it would skip (nothing
    in them to keep, a file that cannot be read), with the same reasons: each session's answer is
    worked out as the capture works it out (`_outcome`) and counted by the same `_tally`.

    Raises:
        InvalidInputError: an unreadable `since`, a bad `limit`, or capture is switched off (`capture.enabled`).
    """
    started = time.monotonic()
    _check_enabled(ctx)
    sessions, unreadable, selection = discover(claude=claude, codex=codex, project=project, since=since, limit=limit,
                                    now=ctx.clock(), home=ctx.config.home)
    rows: dict = {}
    stored: dict = {}
    lines: dict = {}
    for session in sessions:
        row = _row(rows, session)
        counts: dict = {}
        try:
            status = _outcome(ctx, session, stored, counts)
        except _READ_ERRORS + (ctx.driver.Error,) as exc:
            _skip(row, _error(exc))
            continue
        finally:
            _add_counts(lines, counts)   # the lines the real run would skip, said as it says them (fu38 D3)
        _tally(row, status)
    out = _result(rows, sessions, unreadable, lines, started, True, selection)
    out["sessions_list"] = [{"platform": s.platform, "session": s.session_id, "namespace": s.namespace,
                             "cwd": s.cwd, "files": len(s.files), "bytes": s.bytes, "modified": iso(s.mtime),
                             "active": iso(s.active), "active_from": "transcript" if s.stamped else "file time"}
                            for s in sessions]
    return out


def backfill(ctx: StoreContext, *, claude: str | None = None, codex: str | None = None, project: str | None = None,
             since=None, limit: int | None = None, progress: Progress | None = None) -> dict:
    """Capture every session found on disk (or the ones `project`, `since`, `limit` select) as its
    one `session` memory, dated by the session's own time, in its project's namespace.

    Idempotent: a session captured before (live or by a backfill) is left alone unless one of its
    files grew, which writes one new version. A file that cannot be read, or a session whose
    capture fails, is skipped with its reason; nothing is half-written (each memory is written in
    one transaction, the read position after it).

    :param progress: `progress(sessions done, sessions, bytes done, bytes)` (the CLI shows it).
    :returns: totals, per-project rows (found / captured / updated / unchanged / skipped and why),
        the folders that no longer exist, the unreadable files and the line counts.
    Raises:
        InvalidInputError: bad arguments, or capture is switched off (`capture.enabled`).
    """
    started = time.monotonic()
    _check_enabled(ctx)
    sessions, unreadable, selection = discover(claude=claude, codex=codex, project=project, since=since, limit=limit,
                                    now=ctx.clock(), home=ctx.config.home)
    rows: dict = {}
    lines: dict = {}
    total_bytes = sum(s.bytes for s in sessions)
    done_bytes = 0
    if progress:
        progress(0, len(sessions), 0, total_bytes)
    for index, session in enumerate(sessions):
        row = _row(rows, session)
        counts: dict = {}
        paths = session.ordered_paths()
        try:
            result = capture.capture_session(
                ctx, paths[0], extra_paths=paths[1:], session_id=session.session_id, platform=session.platform,
                cwd=session.cwd, namespace=session.namespace, session_time=True, stats=counts, step_bytes=STEP_BYTES,
                claim_dir=session.cwd)
        except _READ_ERRORS + (ctx.driver.Error,) as exc:
            _skip(row, _error(exc))
            result = None
        _add_counts(lines, counts)
        _tally(row, result["status"] if result else None)
        done_bytes += session.bytes
        if progress:
            progress(index + 1, len(sessions), done_bytes, total_bytes)
    return _result(rows, sessions, unreadable, lines, started, False, selection)
