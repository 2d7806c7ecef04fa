"""Memory rows: ids, argument validation, the column list, row ↔ record ↔ public dict, vector BLOBs."""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import logging
import math
import re
import unicodedata
from typing import Any, Iterator, Sequence

from supermemory.config import KINDS, TASK_STATUSES
from supermemory.errors import InvalidInputError
from supermemory.text import index_text
from supermemory.timeparse import iso

logger = logging.getLogger(__name__)

# {(field, what): characters} that `clean_text` changed in the texts it validated inside `replacements()` (None
# outside one); `what` is NUL (removed) or SURROGATES (replaced with U+FFFD)
_REPLACED: contextvars.ContextVar[dict[tuple[str, str], int] | None] = contextvars.ContextVar(
    "replaced_characters", default=None)
NUL, SURROGATES = "NUL", "lone surrogates"

LIVE = "m.superseded_by IS NULL AND m.deleted_at IS NULL"
COLUMNS = ("id", "namespace", "kind", "title", "body", "summary", "tags", "source", "platform", "importance",
           "confidence", "pinned", "status", "ttl_days", "expires_at", "created_at", "updated_at",
           "last_recalled_at", "recall_count", "content_hash", "root_id", "superseded_by", "valid_from",
           "valid_to", "deleted_at", "delete_reason", "external_key")
SELECT_COLUMNS = ", ".join(COLUMNS)              # unqualified (FROM memories)
SELECT_M_COLUMNS = ", ".join("m." + c for c in COLUMNS)   # qualified (FROM memories m)


def format_id(row_id: int) -> str:
    return f"M{row_id}"


def parse_id(value: Any) -> int:
    """`M12`, `m12`, `12` or 12 → 12.

    Raises:
        InvalidInputError: anything else.
    """
    if isinstance(value, bool):
        raise InvalidInputError(f"not a memory id: {value!r}")
    if isinstance(value, int):
        if value > 0:
            return value
    elif isinstance(value, str):
        text = value.strip()
        if text[:1] in ("M", "m"):
            text = text[1:]
        # ASCII digits only ("M٣" is no M3: fu32 D12); ids start at 1: "M0" names none
        if text.isascii() and text.isdigit() and 0 < len(text) <= 18 and int(text) > 0:
            return int(text)
    raise InvalidInputError(f"not a memory id: {value!r} (expected something like M12)")


def parse_ids(ids: Any) -> list[int]:
    """One id or a list of them, parsed, each once (in the order first given)."""
    return list(dict.fromkeys(parse_id(i) for i in (ids if isinstance(ids, (list, tuple)) else [ids])))


def json_text(value: Any, *, sort_keys: bool = False) -> str:
    """`value` as JSON text SQLite can store: a lone surrogate (a folder name that is not UTF-8, as
    `os.getcwd()` decodes it; half an emoji a JavaScript transcript cut) becomes U+FFFD."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)
    return without_surrogates(text)


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (SQLite and stdout take UTF-8 only)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


@contextlib.contextmanager
def replacements() -> Iterator[dict[tuple[str, str], int]]:
    """Collect, per field, the characters `clean_text` removed (NUL) or replaced with U+FFFD (lone surrogates)
    within the block, as {(field, NUL | SURROGATES): count}, so that the shell that called the store can tell its
    caller (stderr reaches no agent); the dict is filled as the block runs."""
    found: dict[tuple[str, str], int] = {}
    token = _REPLACED.set(found)
    try:
        yield found
    finally:
        _REPLACED.reset(token)


def clean_text(value: Any, field: str, *, max_chars: int, allow_empty: bool = False) -> str:
    """Validate user text: a str, no NUL characters (removed), valid UTF-8 (lone surrogates replaced), both
    counted for `replacements`, bounded.

    Raises:
        InvalidInputError: wrong type, empty, or too long.
    """
    if value is None and allow_empty:
        return ""
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}")
    if len(value) > max_chars:
        raise InvalidInputError(f"{field} is too long ({len(value)} characters; limit {max_chars})")
    text = value.replace("\x00", "")
    if len(text) != len(value):
        logger.warning("%s held %d NUL character(s); removed", field, len(value) - len(text))
        _collect(field, NUL, len(value) - len(text))
    fixed = without_surrogates(text)
    if fixed is not text:
        bad = sum(1 for old, new in zip(text, fixed) if old != new)
        logger.warning("%s held %d character(s) that are not valid UTF-8; replaced by U+FFFD", field, bad)
        _collect(field, SURROGATES, bad)
        text = fixed
    if blank(text) and not allow_empty:
        raise InvalidInputError(f"{field} must not be empty")
    return text


def blank(text: str) -> bool:
    """Whether `text` is empty once cleaned (nothing but whitespace and NULs): the one rule `clean_text` and the
    MCP input schema's `minLength: 1` both apply, so "", "   " and "\\u0000" are refused alike."""
    return not text.replace("\x00", "").strip()


def _collect(field: str, what: str, count: int) -> None:
    """Count characters `clean_text` changed for the `replacements()` block around it, if any."""
    collected = _REPLACED.get()
    if collected is not None:   # the same text validated twice (a recall retried) counts once
        collected[field, what] = max(collected.get((field, what), 0), count)


def number(value: Any, field: str, lo: float, hi: float) -> float:
    """A float in [lo, hi]. Raises InvalidInputError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise InvalidInputError(f"{field} must be a number between {lo} and {hi}")
    if not lo <= float(value) <= hi:
        raise InvalidInputError(f"{field} must be between {lo} and {hi}, got {value}")
    return float(value)


def integer(value: Any, field: str, lo: int, hi: int) -> int:
    """An int in [lo, hi]. Raises InvalidInputError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{field} must be an integer between {lo} and {hi}")
    if not lo <= value <= hi:
        raise InvalidInputError(f"{field} must be between {lo} and {hi}, got {value}")
    return value


def str_list(value: Any, field: str, *, max_items: int = 64) -> list[str]:
    """A list of distinct non-empty strings (one string counts as a list of one)."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise InvalidInputError(f"{field} must be a list of strings")
    if len(value) > max_items:
        raise InvalidInputError(f"{field} has too many items ({len(value)}; limit {max_items})")
    out: list[str] = []
    for item in value:
        item = clean_text(item, field, max_chars=200, allow_empty=True).strip()
        if item and item not in out:
            out.append(item)
    return out


def kind(value: Any) -> str:
    """One of KINDS, case-insensitive."""
    if not isinstance(value, str) or value.strip().lower() not in KINDS:
        raise InvalidInputError(f"kind must be one of {', '.join(KINDS)}; got {value!r}")
    return value.strip().lower()


# A task written down once it was over says so first: "Done: …", "DONE - …", "Dropped: …", 已完成：…
# (fresh-user run fu29 D6: "Done: PDF rendering … was migrated" was filed as an open task and listed as still open).
_HEADED_STATUS = re.compile(r"^\W*(?:(?P<done>done|completed|finished|fixed|resolved|已完成|完成|已解决)|"
                            r"(?P<dropped>dropped|cancell?ed|won'?t do|wontfix|已取消|取消|放弃))\s*[:：\-–—]", re.IGNORECASE)


def headed_status(text: str) -> str | None:
    """The status a task's text opens with ("Done: …" → done, "Dropped: …" → dropped), None when it names none."""
    m = _HEADED_STATUS.match(text or "")
    return None if m is None else ("done" if m.group("done") else "dropped")


def task_status(value: Any, kind_name: str, subject: str, *, field: str = "status", text: str = "") -> str | None:
    """The status to store on a memory of `kind_name`: the given one for a task (default: the one its `text` opens
    with, `headed_status`, else "open"), None for every other kind.

    :param subject: how the refusal names the memory, e.g. "M6 is" or "this memory is".
    Raises:
        InvalidInputError: not one of TASK_STATUSES, or a status for a memory that is not a task.
    """
    if value is None:
        return (headed_status(text) or "open") if kind_name == "task" else None
    if value not in TASK_STATUSES:
        raise InvalidInputError(f"{field} must be one of {', '.join(TASK_STATUSES)}")
    if kind_name != "task":
        raise InvalidInputError(f"status applies to tasks; {subject} a {kind_name}")
    return value


def content_hash(kind_name: str, title: str, body: str) -> str:
    """What makes two memories exact repeats: kind, title and body (NFKC, outer whitespace stripped). Case
    counts: `ls -a` / `ls -A` and `API_URL` / `api_url` are different facts (store/db.py m006 rehashed the
    rows the case-folded hash wrote)."""
    title, body = unicodedata.normalize("NFKC", title).strip(), unicodedata.normalize("NFKC", body).strip()
    return hashlib.sha256(f"{kind_name}\x1f{title}\x1f{body}".encode()).hexdigest()


def to_blob(vector) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(data: bytes):
    import numpy as np

    return np.frombuffer(data, dtype="<f4")


def embed_text(title: str, piece: str) -> str:
    """What a chunk's vector is computed from: its memory's title, then the chunk."""
    return (title + "\n" + piece).strip() if title else piece


def fts_tokens(title: str, tags_json: str, chunk_text: str) -> str:
    """What the FTS `tokens` column holds for one chunk: its memory's title and tags, then its text."""
    return index_text(title, " ".join(json.loads(tags_json or "[]")), chunk_text)


def record(row: Sequence) -> dict:
    """A `SELECT {SELECT_COLUMNS}` row as a dict keyed by column."""
    return dict(zip(COLUMNS, row))


def public(rec: dict, *, body: bool = True) -> dict:
    """What callers see of a record: ids as `M12`, JSON decoded, times as ISO strings."""
    out = {
        "id": format_id(rec["id"]),
        "namespace": rec["namespace"],
        "kind": rec["kind"],
        "title": rec["title"],
        "summary": rec["summary"],
        "tags": json.loads(rec["tags"] or "[]"),
        "importance": rec["importance"],
        "confidence": rec["confidence"],
        "pinned": bool(rec["pinned"]),
        "status": rec["status"],
        "source": json.loads(rec["source"] or "{}"),
        "created_at": iso(rec["created_at"]),
        "updated_at": iso(rec["updated_at"]),
        "last_recalled_at": iso(rec["last_recalled_at"]),
        "recall_count": rec["recall_count"],
        "expires_at": iso(rec["expires_at"]),
        "valid_from": iso(rec["valid_from"]),
        "valid_to": iso(rec["valid_to"]),
        "superseded_by": format_id(rec["superseded_by"]) if rec["superseded_by"] else None,
        "version_of": format_id(rec["root_id"]) if rec["root_id"] else None,
        "deleted_at": iso(rec["deleted_at"]),
    }
    if body:
        out["body"] = rec["body"]
    return out
