"""Session capture: new transcript lines folded into one redacted, versioned `session` memory per session."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from supermemory.config import ALL_NAMESPACES, namespace_for_dir
from supermemory.errors import InvalidInputError, NotFoundError, SupermemoryError
from supermemory.store import capture_state, versions, writes
from supermemory.store.context import StoreContext
from supermemory.store.records import format_id, parse_id

logger = logging.getLogger(__name__)


_TEXT_KEYS = ("text", "content")   # where a message's words are, in Claude Code and Codex lines alike


def redact_tree(node: Any, inside: list | None = None, key: str | None = None) -> Any:
    """Redact every string inside a JSON-like tree (session digests are persisted too). With `inside` ([bool]: a
    `<private>` span is open), the span is carried in order from one message text (under `_TEXT_KEYS`) to the next."""
    from supermemory.redact import redact, unclosed_private

    if isinstance(node, str):
        if inside is None or key not in _TEXT_KEYS:
            return redact(node)[0]
        text = "<private>" + node if inside[0] else node
        inside[0] = unclosed_private(text) > 0
        return redact(text)[0]
    if isinstance(node, list):
        return [redact_tree(v, inside, key) for v in node]
    if isinstance(node, dict):
        return {k: redact_tree(v, inside, k) for k, v in node.items()}
    return node


def _enabled(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("0", "false", "no", "off", "")
    return value is None or bool(value)


def is_enabled(ctx: StoreContext) -> bool:
    """True unless `capture.enabled` is off."""
    return _enabled(ctx.config.get("capture.enabled"))


def _same_file(a, b) -> bool:
    try:
        return a == b or os.path.realpath(a) == os.path.realpath(b)
    except (TypeError, ValueError, OSError):
        return False


def _strings(node, out: list) -> list:
    if isinstance(node, str):
        out.append(node)
    elif isinstance(node, list):
        for item in node:
            _strings(item, out)
    elif isinstance(node, dict):
        for item in node.values():
            _strings(item, out)
    return out


def _redact_lines(objs: list, batch: int = 64, inside: list | None = None) -> list:
    """Transcript lines with secrets removed. One redact() call per batch of lines (their strings
    joined by newlines; no rule matches across a newline, and any change falls back to
    string-by-string), ~40x faster than redacting every string of a multi-megabyte transcript.
    A `<private>` span left open by one message's text goes on through the texts after it until one closes it
    (fresh-user run fu32 D4: the user turn between "<private>…" and "…</private>" was stored).

    :param inside: `[bool]`, a span open before these lines (a read of the same file that ended inside one);
        updated in place to whether one is open after them.
    """
    from supermemory.redact import redact

    out = []
    inside = inside if inside is not None else [False]   # a span is open: the texts read from here on are in it
    for start in range(0, len(objs), batch):
        group = objs[start:start + batch]
        texts = ["\n".join(_strings(obj, [])) for obj in group]
        joined = "\n".join(texts)
        if not inside[0]:
            clean, counts = redact(joined)
            if clean == joined and not counts:
                out.extend(group)
                continue
        for obj, text in zip(group, texts):
            if not inside[0]:
                clean, counts = redact(text)
                if clean == text and not counts:
                    out.append(obj)
                    continue
            out.append(redact_tree(obj, inside))
    return out


MAX_FILE_POSITIONS = 500   # read positions kept per session (its transcript files: resumes, subagents)
PRIVATE_OPEN = "private_open"   # digest state: the files whose last read ended inside a `<private>` span
# (no tag in it: the digest is redacted, and a "<private>" here would take the rest of the line with it)
PRIVATE_LEFT_OPEN = ("Left out: a private tag was opened and never closed, so nothing after it in this session was read "
                     "(close it with the closing private tag)")


def _epoch(stamp: str | None) -> float | None:
    """A transcript timestamp as epoch seconds (None when missing or unreadable)."""
    from supermemory.timeparse import from_iso

    try:
        return from_iso(stamp) if isinstance(stamp, str) else None
    except (TypeError, ValueError, OverflowError):
        return None


@dataclass
class CapturePlan:
    """What a capture of one session read and decided, before it writes anything (`plan_capture`)."""

    status: str | None                  # 'no transcript', 'unchanged' or 'empty' when decided; None: write it
    path: str | None = None             # the main transcript (absolute)
    key_id: str = ""                    # capture state key: platform + session id (or 'file:' + path)
    legacy_key: str | None = None       # a pre-platform state key adopted (dropped at the save)
    session: str | None = None          # the session id, stripped (None: keyed by file)
    files: list = field(default_factory=list)     # the session's files read, main first
    starts: dict = field(default_factory=dict)    # file -> byte offset reading resumed at
    ends: dict = field(default_factory=dict)      # file -> byte offset read up to
    n_lines: int = 0
    drained: bool = False               # every file read to its end (no deadline cut it short)
    digest: Any = None
    title: str = ""
    body: str = ""
    memory_id: int | None = None        # the session's memory, when it has one


def plan_capture(ctx: StoreContext, path, *, session_id: str | None = None, platform: str | None = None,
                 deadline: float | None = None, stats: dict | None = None, step_bytes: int | None = None,
                 extra_paths: Sequence[str] = ()) -> CapturePlan:
    """The reading and deciding half of `capture_session`, writing nothing: sniff the platform, load the
    saved state (a pre-platform key for the same file too), resume every file at its offset, read,
    redact and parse the new lines, and render the digest. `capture_session` then writes the plan and
    `backfill.plan` (the dry run) compares it with the stored memory. Parameters as `capture_session`'s.
    """
    from supermemory import transcripts

    if not path or not isinstance(path, (str, os.PathLike)):
        return CapturePlan("no transcript")
    path = os.path.abspath(os.path.expanduser(os.fspath(path)))
    if not os.path.isfile(path):
        return CapturePlan("no transcript", path=path)
    known = capture_state.PLATFORMS
    sniffed = transcripts.detect_platform(transcripts.read_new_lines(path, 0, max_bytes=256 * 1024)[0])
    plat = sniffed if sniffed in known else (platform if platform in known else None)
    session = session_id.strip() if isinstance(session_id, str) and session_id.strip() else None
    key_id = f"{plat or capture_state.UNKNOWN}:{session or 'file:' + path}"

    saved = capture_state.load(ctx, key_id)
    legacy_key = None
    if saved is None:  # state written before keys carried the platform: adopt it for the same file
        old = session or os.path.basename(path)
        legacy = capture_state.load(ctx, old)
        if legacy and _same_file(legacy[3], path):
            saved, legacy_key = legacy, old
    offset, digest, memory_id, old_path = _resumed(saved)
    files = [path] + [os.path.abspath(os.path.expanduser(os.fspath(p))) for p in extra_paths
                      if isinstance(p, (str, os.PathLike))]
    files = [f for i, f in enumerate(files) if f not in files[:i] and (i == 0 or os.path.isfile(f))]
    starts = {}
    for file in files:
        starts[file] = _resume_at(file, offset, old_path, digest)   # digest: None once the main one restarts
        if starts[file] < 0:
            starts[file] = 0
            if file == path:
                digest = None  # the main transcript was truncated or rotated: start over
    # Files a `<private>` span was left open in when the last read of them ended: the next lines are inside it.
    was_open = digest.state.get(PRIVATE_OPEN) if digest is not None else None
    open_spans = {f: [isinstance(was_open, list) and f in was_open] for f in files}
    n_lines, ends, drained = 0, dict(starts), False
    step = step_bytes or (4 * 1024 * 1024 if deadline is not None else 16 * 1024 * 1024)
    counts = stats if stats is not None else {}
    for file in files:
        drained = False
        while True:
            more, further = transcripts.read_new_lines(file, ends[file], max_bytes=step, stats=counts)
            if further <= ends[file]:
                drained = True
                break
            ends[file] = further
            if more:
                n_lines += len(more)
                counts["unknown_type"] = counts.get("unknown_type", 0) + transcripts.unknown_lines(more, plat)
                digest = transcripts.parse(_redact_lines(more, inside=open_spans[file]), digest, platform=plat)
            if deadline is not None and time.monotonic() >= deadline:
                break
        if drained:
            try:
                counts["partial_tail"] = counts.get("partial_tail", 0) + max(0, os.path.getsize(file) - ends[file])
            except OSError:
                pass
        if not drained:
            break
    counts["lines"] = counts.get("lines", 0) + n_lines
    plan = CapturePlan(None, path=path, key_id=key_id, legacy_key=legacy_key, session=session, files=files,
                       starts=starts, ends=ends, n_lines=n_lines, drained=drained, memory_id=memory_id)
    if n_lines == 0 and digest is not None and ends == starts:
        plan.status = "unchanged"
        return plan
    if digest is None:
        digest = transcripts.parse([], None, platform=plat)
    positions = digest.state.get("files")
    positions = dict(positions) if isinstance(positions, dict) else {}
    for file in files:
        positions.pop(file, None)
        positions[file] = ends[file]
    digest.state["files"] = dict(list(positions.items())[-MAX_FILE_POSITIONS:])
    digest.state[PRIVATE_OPEN] = [file for file in files if open_spans[file][0]]
    if digest.state[PRIVATE_OPEN]:   # fail closed, but said: the user sees why the session's rest is missing (fu35 D2)
        counts["private_open"] = 1
        # last: the session's own open ends come first where a briefing line is cut (fresh-user run fu38 D2)
        digest.open_ends = [end for end in digest.open_ends if end != PRIVATE_LEFT_OPEN] + [PRIVATE_LEFT_OPEN]
    digest = transcripts.digest_from_dict(redact_tree(transcripts.digest_to_dict(digest)))
    if digest.platform == "unknown" and plat:
        digest.platform = plat
    plan.digest = digest
    plan.title, plan.body = transcripts.render_digest(digest, max_chars=int(ctx.config.get("capture.max_chars")))
    if memory_id is None:  # state lost (e.g. the hook was killed between the two writes)
        plan.memory_id = capture_state.session_memory(ctx, key_id)
    if not digest.requests and not digest.files and not digest.commands:
        plan.status = "empty"
    return plan


def capture_session(ctx: StoreContext, path: str | None, *, session_id: str | None = None,
                    platform: str | None = None, model: str | None = None, cwd: str | None = None,
                    namespace: str | None = None, deadline: float | None = None, session_time: bool = False,
                    stats: dict | None = None, step_bytes: int | None = None,
                    extra_paths: Sequence[str] = (), claim_dir: str | None = None) -> dict:
    """Fold new transcript lines into the session's digest and store it as one `session` memory.

    Reads incrementally (a byte offset per transcript, complete lines only); a repeat capture of
    the same session writes a new version of the same memory, never a duplicate, and a capture
    with nothing new writes nothing. Sessions are keyed by platform + session id, so a Claude
    Code and a Codex session that share an id stay apart. Transcript lines are redacted before
    they are parsed (the digest clips long texts, which would otherwise keep half a secret).
    The reading and deciding is `plan_capture`'s; this writes what it planned.

    :param platform: 'claude-code' or 'codex' as the caller sees it; the transcript's own lines win.
    :param deadline: a `time.monotonic()` value after which no further chunk is read (the next
        capture continues from there); None reads to the end.
    :param session_time: date the memory by the session's own first and last line (backfill)
        instead of now; a new version is never dated before the one it replaces.
    :param stats: a dict that counts what was read and skipped: `lines`, `malformed`,
        `unknown_type`, `partial_tail` (bytes of an unfinished last line).
    :param step_bytes: read this much per chunk (bounds memory; default 4 MB with a deadline, else 16 MB).
    :param extra_paths: more files of the same session (a resumed session's later file, subagent
        transcripts), folded into the same digest after `path`; one write for all of them. Each
        file keeps its own read position in the digest, so every file is read once.
    :param claim_dir: the session's project folder, when the session memory is new: its name is claimed then, by
        the write (`config.namespace_for_dir`), and wins over `namespace` (the name looked up before); a capture
        that writes nothing claims nothing (backfill, an owed capture's retry).
    :returns: {"status": created|updated|unchanged|empty|disabled|"no transcript", "id", "lines", ...}
    """
    from supermemory import transcripts

    if not _enabled(ctx.config.get("capture.enabled")):
        return {"status": "disabled"}
    plan = plan_capture(ctx, path, session_id=session_id, platform=platform, deadline=deadline, stats=stats,
                        step_bytes=step_bytes, extra_paths=extra_paths)
    if plan.status == "no transcript":
        return {"status": plan.status, "path": plan.path} if plan.path else {"status": plan.status}
    memory_id, digest = plan.memory_id, plan.digest
    if plan.status == "unchanged":
        return {"status": "unchanged", "id": format_id(memory_id) if memory_id else None, "lines": 0}
    model = model or digest.model

    def save(target: int | None) -> None:
        capture_state.save(ctx, plan.key_id, plan.path, plan.ends[plan.path], transcripts.digest_to_dict(digest),
                           target, drop_key=plan.legacy_key)

    if plan.status == "empty":
        save(memory_id)
        return {"status": "empty", "id": format_id(memory_id) if memory_id else None, "lines": plan.n_lines}
    started = _epoch(digest.started_at) if session_time else None
    ended = _epoch(digest.ended_at) if session_time else None
    source = {"platform": digest.platform, "model": model, "cwd": cwd or digest.cwd, "session": plan.session}
    source = {k: v for k, v in source.items() if v}
    result = None
    if memory_id:
        for attempt in range(2):  # a concurrent capture may have just written a newer version
            rec = ctx.fetch(versions.head(ctx, memory_id))
            if rec is None or rec["deleted_at"] is not None:
                break
            try:
                result = versions.update(ctx, rec["id"], content=plan.body, title=plan.title, source=source,
                                         namespace="*", at=ended, revise_superseded=True)
                break
            except (InvalidInputError, NotFoundError):
                if attempt:
                    raise
    if result is None:
        ns = namespace
        if claim_dir:
            try:
                ns = namespace_for_dir(claim_dir, home=ctx.config.home)
            except OSError:
                pass
        if ns is None and ctx.namespace == ALL_NAMESPACES:
            ns = namespace_for_dir(cwd or digest.cwd or os.getcwd(), home=ctx.config.home)
        result = writes.remember(ctx, plan.body, title=plan.title, kind="session", source=source, namespace=ns,
                                 external_key=plan.key_id, importance=0.4, create_namespace=True, at=ended,
                                 created_at=started)
    memory_id = parse_id(result["id"])
    save(memory_id)
    return {"status": result["status"], "id": format_id(memory_id), "lines": plan.n_lines,
            "platform": digest.platform, "complete": plan.drained,
            **({"private_open": True} if digest.state.get(PRIVATE_OPEN) else {})}


def _resumed(saved) -> tuple:
    """(offset, digest, memory id, path) of a saved capture state (`capture_state.load`); a digest that no
    longer decodes starts the reading over."""
    from supermemory import transcripts

    if not saved:
        return 0, None, None, None
    offset, raw, memory_id, old_path = saved
    try:
        return offset, transcripts.digest_from_dict(json.loads(raw)), memory_id, old_path
    except (TypeError, ValueError):
        return 0, None, memory_id, old_path


def _resume_at(file: str, offset: int, old_path: str | None, digest) -> int:
    """Where reading `file` resumes: the saved offset for the file the state names, else that file's own
    entry in the digest (a session spread over several files), else 0; -1 when the file is shorter than
    that (truncated or rotated: read it from the start)."""
    if old_path is not None and _same_file(old_path, file):
        at = offset
    else:
        known_files = digest.state.get("files") if digest is not None else None
        at = known_files.get(file, 0) if isinstance(known_files, dict) else 0
    try:
        at = max(0, int(at or 0))
        return at if at <= os.path.getsize(file) else -1
    except (TypeError, ValueError, OSError):
        return -1


# --- captures a hook left unfinished, retried later -------------------------------------------------
# A capture hook notes its session in a small file of the data dir before it touches the database and
# drops the note once the capture has read the transcript to its end. A hook that ran out of time (the
# database write-locked past its budget, say) leaves its note behind, and `retry_pending` captures the
# session later: from the next SessionStart hook once its briefing is out, or while the MCP server idles.
# The notes live outside the database because a locked database is what they outlast.

PENDING_FOLDER = "pending-captures"
PENDING_MAX_ATTEMPTS = 25   # failed retries before a note is given up (`supermemory backfill` still recovers it)
PENDING_MARGIN = 2.0        # seconds past the hook budget after which a note's own hook has surely ended


def pending_folder(home) -> Path:
    """The folder of the notes of captures still owed, in the data dir."""
    return Path(home) / PENDING_FOLDER


def pending_min_age(config) -> float:
    """How old a note must be before a retry takes it: its hook (budget `hooks.budget_seconds`) has ended."""
    try:
        budget = float(config.get("hooks.budget_seconds"))
    except (TypeError, ValueError):
        budget = 2.0
    return (budget if budget == budget and budget > 0 else 2.0) + PENDING_MARGIN


def _session_tag(platform: str | None, session_id: str | None, path) -> str:
    ident = f"{platform or 'unknown'}:{session_id or 'file:' + os.fspath(path)}"
    return hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _write_note(target: Path, record: dict) -> None:
    temporary = target.with_name("." + target.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    os.replace(temporary, target)   # readers see the whole note or none


def note_pending(home, path, *, session_id: str | None, platform: str | None, model: str | None = None,
                 cwd: str | None = None, namespace: str | None = None) -> Path:
    """Note, atomically and before any write to the database, that this session's capture is owed.

    One file per hook run (`<session tag>-<pid>-<random>.json`), so two hooks of one session never
    overwrite each other's note; `settle_pending` drops it once a capture has read the session to its end.
    :param namespace: where the session memory goes when it is new (the hook's project namespace).
    :returns: the note's path.
    Raises:
        OSError: the data dir cannot be written.
    """
    folder = pending_folder(home)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    note = folder / f"{_session_tag(platform, session_id, path)}-{os.getpid()}-{secrets.token_hex(4)}.json"
    _write_note(note, {"transcript_path": os.fspath(path), "session_id": session_id, "platform": platform,
                       "model": model, "cwd": cwd, "namespace": namespace, "noted_at": time.time(), "attempts": 0})
    return note


def pending_notes(home) -> list[tuple[Path, float]]:
    """(note, time written) of every capture still owed, oldest first; [] when there is none (one listing)."""
    notes = []
    try:
        with os.scandir(pending_folder(home)) as entries:
            for entry in entries:
                if entry.name.endswith(".json") and not entry.name.startswith("."):
                    try:
                        notes.append((Path(entry.path), entry.stat().st_mtime))
                    except OSError:
                        continue
    except OSError:   # no folder: nothing owed
        return []
    return sorted(notes, key=lambda item: (item[1], item[0].name))


def settle_pending(note: Path, since: float) -> None:
    """A capture that began at `since` (epoch seconds) read the note's session to its end: drop the note and
    every other note of the same session written before then (their hooks' lines were read too)."""
    tag = note.name.split("-", 1)[0]
    for other, written in pending_notes(note.parent.parent):
        if other == note or (other.name.startswith(tag + "-") and written <= since):
            try:
                other.unlink()
            except OSError:   # gone already (another capture settled it), or not ours to remove
                pass


def _read_note(note: Path) -> dict | None:
    try:
        record = json.loads(note.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    path = record.get("transcript_path") if isinstance(record, dict) else None
    return record if isinstance(path, str) and path else None


def _text_or_none(record: dict, key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) and value else None


def retry_pending(ctx: StoreContext, home, *, min_age: float, deadline: float | None = None,
                  wait_ms: int = 200, step_bytes: int | None = None, limit: int | None = None) -> list[dict]:
    """Capture the sessions whose hooks left a note (`note_pending`), oldest first, each session once.

    A capture is idempotent (`capture_session` resumes at the saved offset and versions the one session
    memory), so a session a later hook already captured comes back `unchanged`. A note is dropped once its
    session is read to its end; a failed capture counts an attempt in its note and ends the pass.
    :param min_age: seconds a note must have existed (its own hook has ended: `pending_min_age`).
    :param deadline: `time.monotonic()` value after which no further transcript chunk, nor session, is read.
    :param wait_ms: how long to wait for another writer's lock before leaving everything for the next pass.
    :returns: one `capture_session` result per session tried (`{"status": "failed", ...}` for a failure).
    """
    results: list[dict] = []
    done: set = set()
    for note, written in pending_notes(home):
        tag = note.name.split("-", 1)[0]
        if time.time() - written < min_age or tag in done:
            continue
        if (deadline is not None and time.monotonic() >= deadline) or (limit is not None and len(results) >= limit):
            break
        record = _read_note(note)
        if record is None:   # unreadable or half-written by a process that died: nothing to go on
            note.unlink(missing_ok=True)
            continue
        started = time.time()
        try:
            capture_state.wait_for_writes(ctx, wait_ms)
            result = capture_session(
                ctx, record["transcript_path"], session_id=_text_or_none(record, "session_id"),
                platform=_text_or_none(record, "platform"), model=_text_or_none(record, "model"),
                cwd=_text_or_none(record, "cwd"), namespace=_text_or_none(record, "namespace"),
                claim_dir=_text_or_none(record, "cwd"), deadline=deadline,
                step_bytes=step_bytes)
        except (SupermemoryError, OSError, ctx.driver.Error) as exc:
            _failed(note, record, exc)
            results.append({"status": "failed", "error": str(exc), "path": record["transcript_path"]})
            break
        done.add(tag)
        if result.get("complete", True):
            settle_pending(note, started)
        logger.info("owed capture of %s: %s", record["transcript_path"], result.get("status"))
        results.append(result)
    return results


def _failed(note: Path, record: dict, exc: BaseException) -> None:
    attempts = int(record.get("attempts") or 0) + 1 if isinstance(record.get("attempts"), int) else 1
    if attempts >= PENDING_MAX_ATTEMPTS:
        logger.warning("giving up the owed capture of %s after %d attempts (%s); `supermemory backfill` "
                       "captures it", record["transcript_path"], attempts, exc)
        note.unlink(missing_ok=True)
        return
    logger.info("owed capture of %s failed (%s); tried again later", record["transcript_path"], exc)
    try:
        _write_note(note, {**record, "attempts": attempts})
    except OSError:
        pass
