"""Incremental JSONL reading: the complete lines after a byte offset, and the new offset."""

from __future__ import annotations

import json
import os


def read_new_lines(
    path: str, offset: int = 0, *, max_bytes: int = 16 * 1024 * 1024, stats: dict | None = None
) -> tuple[list[dict], int]:
    """Read complete JSON lines from byte `offset`; return (parsed objects, new_offset).

    A trailing partial line (no ``\\n``) is not consumed; malformed complete
    lines (and JSON values that are not objects) are skipped but consumed.
    Never raises: a missing or unreadable file gives ``([], offset)``.  If the
    file is shorter than `offset` (rotated or truncated) reading restarts at 0.
    At most about `max_bytes` are read per call; call again until the offset
    stops moving to drain a large file.  A single line longer than
    `max_bytes` is skipped as malformed once it is complete.  `stats`, when given,
    counts the skipped lines under ``malformed`` and ``too_long``.
    """
    counts = stats if stats is not None else {}
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
                        counts["too_long"] = counts.get("too_long", 0) + 1
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
            counts["malformed"] = counts.get("malformed", 0) + 1
            continue
        if isinstance(obj, dict):
            objs.append(obj)
        else:
            counts["malformed"] = counts.get("malformed", 0) + 1
    return objs, offset + len(complete)
