"""Fitting tool results into `mcp.max_response_bytes`: fewer results, cut bodies, shorter strings, with a note."""
from __future__ import annotations

import json
import logging
from typing import Any, Callable

logger = logging.getLogger(__name__)


def _size(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))


def _cut(text: str, max_bytes: int) -> str:
    """The longest prefix of `text` (whole characters: a true prefix, so offsets stay exact) within `max_bytes`."""
    if len(text.encode("utf-8", "surrogatepass")) <= max_bytes:
        return text
    low, high = 0, min(len(text), max(0, max_bytes))    # every character takes at least one byte
    while low < high:
        mid = (low + high + 1) // 2
        if len(text[:mid].encode("utf-8", "surrogatepass")) <= max_bytes:
            low = mid
        else:
            high = mid - 1
    return text[:low]


def _add_note(result: dict, note: str) -> None:
    result["note"] = (result["note"] + "; " + note) if result.get("note") else note


def fit_recall(result: dict, args: dict, cap: int) -> dict:
    """Recall: compact bodies, then the compact format, then fewer (lowest-ranked last) results."""
    results = result.get("results", [])
    full = args.get("format") == "full"
    if not full:
        for item in results:
            item.pop("body", None)
    if _size(result) <= cap:
        return result
    if full:
        for item in results:
            item.pop("body", None)
        _add_note(result, "switched to the compact format to fit the response limit; memory_get returns full bodies")
    omitted = []
    while len(results) > 1 and _size(result) > cap:
        omitted.insert(0, results.pop()["id"])
    if omitted:
        result["omitted"] = omitted
        _add_note(result, f"{len(omitted)} lower-ranked results left out to fit the response limit "
                          f"({', '.join(omitted)}); memory_get returns them")
    return result


def next_part(memory_id: str, offset: int) -> str:
    """The call that returns a memory's body from character `offset` on (memory_get's paging)."""
    return f'call memory_get with ids ["{memory_id}"] and offset {offset}'


def fit_bodies(key: str, text: Callable[[dict], str] | None = None) -> Callable[[dict, dict, int], dict]:
    """A fitter that cuts the `body` of every record under `key` to an equal share, marking the cut.

    A record may hold a page of its body (`body_offset`: where it starts, set by memory_get's `offset`).
    Each cut record gets `body_truncated` and `body_chars` (the whole body's length), and the note names
    the exact call that returns the rest (`next_part`). `text`, when given, renders the result as the tool's
    text content, which must fit `cap` as well.
    """
    def fits(result: dict, cap: int) -> bool:
        return _size(result) <= cap and (text is None or len(text(result).encode("utf-8", "surrogatepass")) <= cap)

    def fit(result: dict, args: dict, cap: int) -> dict:
        items = result.get(key, [])
        if not items or fits(result, cap):
            return result
        note = result.get("note")
        originals = [item.get("body") or "" for item in items]
        overhead = _size({**result, key: [{**item, "body": "", "body_truncated": True, "body_chars": 10**9}
                                          for item in items]}) + 400
        share = max(64, (cap - overhead) // len(items))
        while True:
            parts = []
            for item, body in zip(items, originals):
                start = int(item.get("body_offset") or 0)
                if len(body.encode("utf-8", "surrogatepass")) > share:
                    item["body"] = _cut(body, share)
                    item["body_truncated"] = True
                    item["body_chars"] = start + len(body)
                    end = start + len(item["body"])
                    parts.append((item["id"], f"cut at character {end} of {start + len(body)}", end))
            result.pop("note", None)
            if note:
                result["note"] = note
            if len(parts) == 1:
                memory_id, where, end = parts[0]
                _add_note(result, f"{memory_id}'s body was {where} to fit the response limit; for the next part, "
                                  + next_part(memory_id, end))
            elif parts:
                _add_note(result, "long bodies were cut to fit the response limit; for the next parts, one id per "
                                  "call: " + "; ".join(f"{memory_id} ({where}): {next_part(memory_id, end)}"
                                                       for memory_id, where, end in parts))
            if fits(result, cap) or share <= 64:
                break
            share = max(64, share * 3 // 4)
        return result
    return fit


def fit_list(result: dict, args: dict, cap: int) -> dict:
    """List: a shorter page, saying the offset to continue from."""
    items = result["memories"] if "memories" in result else result.get("items", [])
    cut = 0
    while len(items) > 1 and _size(result) > cap:
        items.pop()
        cut += 1
    if cut:
        result["truncated"] = True
        _add_note(result, f"page cut to {len(items)} items to fit the response limit; continue with "
                          f"offset={result.get('offset', 0) + len(items)}")
    return result


def _shrink_strings(obj: Any, max_chars: int) -> Any:
    if isinstance(obj, str):
        return obj if len(obj) <= max_chars else obj[:max_chars - 1] + "…"
    if isinstance(obj, dict):
        return {k: _shrink_strings(v, max_chars) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_shrink_strings(v, max_chars) for v in obj]
    return obj


def fit_any(result: dict, cap: int) -> dict:
    """Last resort for any tool: cut every long string until the JSON fits (types are kept)."""
    limit = cap
    while _size(result) > cap and limit >= 16:
        result = _shrink_strings(result, limit)
        limit //= 2
    if _size(result) > cap:
        logger.warning("structured result still exceeds %d bytes", cap)
    return result
