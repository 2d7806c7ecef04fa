"""Fitting tool results into `mcp.max_response_bytes`: fewer results, cut bodies, shorter strings, with a note."""
from __future__ import annotations

import json
import logging
from typing import Any, Callable

logger = logging.getLogger(__name__)


def _size(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))


def _cut(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    return data[:max(0, max_bytes)].decode("utf-8", "ignore")


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


def fit_bodies(key: str) -> Callable[[dict, dict, int], dict]:
    """A fitter that cuts the `body` of every record under `key` to an equal share, marking the cut."""
    def fit(result: dict, args: dict, cap: int) -> dict:
        items = result.get(key, [])
        if _size(result) <= cap or not items:
            return result
        originals = [item.get("body") or "" for item in items]
        overhead = _size({**result, key: [{**item, "body": "", "body_truncated": True, "body_chars": 10**9}
                                          for item in items]}) + 400
        share = max(64, (cap - overhead) // len(items))
        while True:
            for item, body in zip(items, originals):
                if len(body.encode("utf-8", "surrogatepass")) > share:
                    item["body"] = _cut(body, share)
                    item["body_truncated"] = True
                    item["body_chars"] = len(body)
            if _size(result) <= cap or share <= 64:
                break
            share //= 2
        _add_note(result, "long bodies were cut to fit the response limit; call memory_get with one id at a "
                          "time, or run `supermemory get ID` in a shell, for the full text")
        return result
    return fit


def fit_list(result: dict, args: dict, cap: int) -> dict:
    """List: a shorter page, saying the offset to continue from."""
    items = result.get("items", [])
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
