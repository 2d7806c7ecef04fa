"""The MCP stdio server: a hand-rolled JSON-RPC 2.0 loop, the MCP lifecycle, tool schemas, dispatch.

No SDK at runtime. Frames are newline-delimited JSON objects in UTF-8 on stdin/stdout; stdout
belongs to the protocol, so while serving the real process stdio `sys.stdout` and fd 1 point at
stderr and frames go to a private duplicate of the original stdout.

Two error channels:
- protocol errors (bad JSON, bad request shape, unknown method, bad params) are JSON-RPC errors;
- store errors inside `tools/call` (every `SupermemoryError`) are tool results with `isError: true`;
  so are arguments that fail a tool's input schema when the negotiated protocol is 2025-11-25 or
  later (SEP-1303; earlier versions get INVALID_PARAMS). An unknown tool stays INVALID_PARAMS.

`initialize` never imports numpy or onnxruntime; the embedding model warms up in a daemon thread
after `notifications/initialized`. The store is opened lazily and only ever used on the main thread.
Batches (JSON arrays) are not supported and get an `INVALID_REQUEST` error.
"""
from __future__ import annotations

import io
import json
import logging
import os
import re
import signal
import sys
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from supermemory import __version__
from supermemory.config import DEFAULTS, KINDS, RELATIONS, TASK_STATUSES, Config, load_config, namespace_for_dir
from supermemory.errors import InvalidInputError, SupermemoryError
from supermemory.runtime import import_numpy

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

SUPPORTED_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[-1]
TOOL_ARGUMENT_ERRORS_SINCE = "2025-11-25"   # SEP-1303: input validation failures are tool results
SERVER_NAME = "supermemory"
TOOLS_PAGE_SIZE = 50
PARENT_POLL_SECONDS = 1.5
_DISCARD_CHUNK = 64 * 1024

INSTRUCTIONS = (
    "supermemory is the user's long-term memory, shared across sessions and agents.\n"
    "Read: call memory_recall before starting a task and whenever a question touches earlier "
    "decisions, conventions, bugs or preferences; a briefing also arrives at session start.\n"
    "Write: call memory_remember the moment you learn something durable — a decision and its "
    "reason, a gotcha, a user preference, an open task. One fact per memory; no transient chatter, "
    "never secrets.\n"
    "Revise: when a stored fact changes, memory_update its id (a new version; history is kept) "
    "instead of storing a contradicting duplicate; memory_forget memories that are wrong.\n"
    "Namespaces: the current project is the default; use namespace \"global\" for facts that hold "
    "in every project. memory_usage_guide has the full guide."
)


class JsonRpcError(SupermemoryError):
    """A protocol-level failure answered as a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


Handler = Callable[["Session", dict], Any]


# --- argument validation (the JSON Schema subset our tool schemas use) -----------------------

def _type_ok(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    if name == "null":
        return value is None
    return False


def validate(schema: dict, value: Any, path: str = "arguments") -> Any:
    """Check `value` against a JSON Schema subset; returns it (integral floats become ints).

    Supported keywords: type (incl. lists), enum, minimum, maximum, minLength, maxLength,
    items, minItems, maxItems, properties, required, additionalProperties (false only).
    Raises:
        JsonRpcError: INVALID_PARAMS naming the offending field, e.g. "arguments.limit: expected integer".
    """
    def fail(message: str) -> JsonRpcError:
        return JsonRpcError(INVALID_PARAMS, f"{path}: {message}", {"field": path})

    kind = schema.get("type")
    if kind is not None:
        names = kind if isinstance(kind, list) else [kind]
        if not any(_type_ok(value, n) for n in names):
            raise fail(f"expected {' or '.join(names)}, got {_json_type(value)}")
        if isinstance(value, float) and "integer" in names and "number" not in names:
            value = int(value)
    if "enum" in schema and not any(type(value) is type(e) and value == e for e in schema["enum"]):
        raise fail("must be one of " + ", ".join(json.dumps(e) for e in schema["enum"]))
    if isinstance(value, str):
        if len(value) > schema.get("maxLength", len(value)):
            raise fail(f"longer than {schema['maxLength']} characters ({len(value)})")
        if len(value) < schema.get("minLength", 0):
            raise fail("must not be empty" if schema["minLength"] == 1 else
                       f"shorter than {schema['minLength']} characters")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise fail(f"must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise fail(f"must be <= {schema['maximum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise fail(f"needs at least {schema['minItems']} item(s)")
        if len(value) > schema.get("maxItems", len(value)):
            raise fail(f"at most {schema['maxItems']} items")
        if "items" in schema:
            value = [validate(schema["items"], item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise JsonRpcError(INVALID_PARAMS, f"{path}.{key}: required", {"field": f"{path}.{key}"})
        if schema.get("additionalProperties") is False:
            for key in value:
                if key not in props:
                    raise JsonRpcError(INVALID_PARAMS, f"{path}.{key}: unknown field (allowed: "
                                       f"{', '.join(props) or 'none'})", {"field": f"{path}.{key}"})
        value = {key: validate(props[key], item, f"{path}.{key}") if key in props else item
                 for key, item in value.items()}
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# --- tool schemas -----------------------------------------------------------------------------

def _obj(properties: dict, required: tuple = ()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def _out(properties: dict, required: tuple = ()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required)}


_STR = {"type": "string"}
_INT = {"type": "integer"}
_NUM = {"type": "number"}
_BOOL = {"type": "boolean"}
_STR_LIST = {"type": "array", "items": _STR}
_NULL_STR = {"type": ["string", "null"]}
_NS = {"type": "string", "minLength": 1, "maxLength": 200,
       "description": "namespace; default: the current project (reads also include 'global'; '*' reads all)"}
_ID = {"type": "string", "minLength": 1, "maxLength": 24, "description": "memory id, e.g. M12"}
_IDS = {"type": "array", "items": _ID, "minItems": 1, "maxItems": 100, "description": "memory ids, e.g. [\"M12\"]"}
_KINDS = {"type": "array", "items": {"type": "string", "enum": list(KINDS)}, "maxItems": len(KINDS),
          "description": "only these kinds"}
_TAGS = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 200}, "maxItems": 64}
_WHEN = {"type": "string", "minLength": 1, "maxLength": 64, "description": "ISO date or relative: 7d, 24h, last_week"}
_MEMORY = _out({"id": _STR, "namespace": _STR, "kind": _STR, "title": _STR, "summary": _STR, "body": _STR,
                "tags": _STR_LIST, "importance": _NUM, "pinned": _BOOL, "status": _NULL_STR,
                "superseded_by": _NULL_STR}, ("id", "kind", "title"))
_HIT = _out({**_MEMORY["properties"], "score": _NUM, "attention": _NUM, "features": {"type": "object"},
             "contributions": {"type": "object"}}, ("id", "kind", "title", "score", "attention"))
_RECALL_LIMIT = DEFAULTS["recall"]["max_limit"]


def _annotations(read_only: bool, destructive: bool, idempotent: bool) -> dict:
    return {"readOnlyHint": read_only, "destructiveHint": destructive, "idempotentHint": idempotent,
            "openWorldHint": False}


@dataclass(frozen=True)
class Tool:
    """One MCP tool: its wire description plus the shell code that calls one store method."""

    name: str
    title: str
    description: str
    input_schema: dict
    output_schema: dict
    annotations: dict
    call: Callable[["Session", Any, dict], dict]
    render: Callable[[dict, dict], str]
    fit: Callable[[dict, dict, int], dict] | None = None
    needs_store: bool = True
    summary: str = ""

    def describe(self) -> dict:
        """The `tools/list` entry."""
        return {"name": self.name, "title": self.title, "description": self.description,
                "inputSchema": self.input_schema, "outputSchema": self.output_schema,
                "annotations": {"title": self.title, **self.annotations}}


def _kw(args: dict, *names: str) -> dict:
    """The given arguments among `names`, as store keyword arguments (same names)."""
    return {name: args[name] for name in names if name in args}


# --- tool bodies: each calls one MemoryStore method ---------------------------------------------

def _call_briefing(session: "Session", store, args: dict) -> dict:
    return store.briefing(**_kw(args, "query", "max_tokens", "namespace"))


def _call_remember(session: "Session", store, args: dict) -> dict:
    return store.remember(args["content"], source={"platform": session.platform, "cwd": session.cwd},
                          **_kw(args, "kind", "title", "tags", "importance", "pinned", "ttl_days", "namespace",
                                "create_namespace"))


def _call_recall(session: "Session", store, args: dict) -> dict:
    return store.recall(args["query"], origin="mcp",
                        **_kw(args, "limit", "kinds", "tags", "since", "until", "max_tokens", "explain",
                              "min_similarity", "relative_cutoff", "gates", "namespace"))


def _call_get(session: "Session", store, args: dict) -> dict:
    return store.get(args["ids"], **_kw(args, "namespace"))


def _call_list(session: "Session", store, args: dict) -> dict:
    return store.list(**_kw(args, "kinds", "tags", "status", "since", "until", "limit", "offset", "order",
                            "namespace"))


def _call_merge(session: "Session", store, args: dict) -> dict:
    return store.merge(args["keep"], args["other"], **_kw(args, "content", "namespace"))


def _render_merge(result: dict, args: dict) -> str:
    return f"{result['merged']} merged into {result['kept']}; current version {result['id']}"


def _call_update(session: "Session", store, args: dict) -> dict:
    return store.update(args["id"], **_kw(args, "content", "title", "kind", "tags", "importance", "pinned",
                                          "status", "namespace"))


def _call_history(session: "Session", store, args: dict) -> dict:
    return store.history(args["id"], **_kw(args, "namespace"))


def _call_forget(session: "Session", store, args: dict) -> dict:
    return store.forget(args["ids"], **_kw(args, "hard", "namespace"))


def _call_restore(session: "Session", store, args: dict) -> dict:
    return store.restore(args["ids"], **_kw(args, "namespace"))


def _call_link(session: "Session", store, args: dict) -> dict:
    return store.link(args["src"], args["dst"], **_kw(args, "relation", "weight", "namespace"))


def _call_stats(session: "Session", store, args: dict) -> dict:
    return store.stats(**_kw(args, "namespace"))


def _call_export(session: "Session", store, args: dict) -> dict:
    target = resolve_export_path(session.config, args["path"])
    export = getattr(store, "export", None)
    if export is None:
        raise SupermemoryError("export is not available in this build of supermemory")
    result = export(target, **_kw(args, "namespaces"))
    out = dict(result) if isinstance(result, dict) else {"result": result}
    out["path"] = target
    return out


def _call_guide(session: "Session", store, args: dict) -> dict:
    from supermemory.guide import usage_guide

    return {"text": usage_guide(session.config, tools=TOOLS)}


# --- renderers (compact text for the model) -------------------------------------------------------

def _line(item: dict, **kw) -> str:
    from supermemory.render import memory_line

    return memory_line(item, **kw)


def _with_note(text: str, result: dict) -> str:
    return text + (f"\n({result['note']})" if result.get("note") else "")


def _render_text(result: dict, args: dict) -> str:
    return result.get("text", "")


def _render_remember(result: dict, args: dict) -> str:
    if result.get("status") == "duplicate":
        lines = [f"Already stored as {result['id']} (exact duplicate); nothing new written."]
    else:
        lines = [f"Stored {result['id']} ({result.get('kind', 'note')}) in namespace {result.get('namespace')}."]
        if result.get("embedded") is False:
            lines.append("(stored without a vector: only keyword search will find it until `supermemory reindex`)")
    for near in result.get("near_duplicates") or []:
        lines.append(f"Similar: {near['id']} ({near.get('similarity', 0):.2f}) {near.get('title', '')} — if the new "
                     f"memory revises it, memory_update {near['id']} and memory_forget {result['id']}.")
    redacted = result.get("redacted") or {}
    if redacted:
        lines.append("Redacted before storing: " + ", ".join(f"{n} × {k}" for k, n in redacted.items()))
    return "\n".join(lines)


def _render_recall(result: dict, args: dict) -> str:
    from supermemory.render import render_recall

    return render_recall(result, full=args.get("format") == "full", explain=bool(args.get("explain")))


def _render_memories(items: list[dict], *, body_key: str = "body") -> list[str]:
    lines = []
    for item in items:
        state = ""
        if item.get("superseded_by"):
            state = f" · superseded by {item['superseded_by']}"
        if item.get("deleted_at"):
            state += f" · deleted {item['deleted_at']}"
        lines.append(f"{item['id']} [{item['kind']}{'/' + item['status'] if item.get('status') else ''}] "
                     f"{item['title']}")
        lines.append(f"  namespace {item.get('namespace')} · tags {', '.join(item.get('tags') or []) or '-'} · "
                     f"importance {item.get('importance')} · updated {item.get('updated_at')}{state}")
        body = item.get(body_key) or ""
        if body:
            lines.append("  " + body.replace("\n", "\n  "))
        if item.get("body_truncated"):
            lines.append(f"  …(body cut at {len(body)} of {item.get('body_chars')} characters)")
    return lines


def _render_get(result: dict, args: dict) -> str:
    lines = _render_memories(result.get("memories", []))
    for item in result.get("memories", []):
        for link in item.get("links") or []:
            lines.append(f"  link {link['src']} -{link['relation']}→ {link['dst']} ({link['weight']})")
    forgotten = result.get("forgotten") or []
    gone = [m for m in result.get("missing", []) if m not in forgotten]
    if gone:
        lines.append("Not found: " + ", ".join(gone))
    if forgotten:
        lines.append("Forgotten (memory_restore brings them back): " + ", ".join(forgotten))
    return _with_note("\n".join(lines) or "Nothing found.", result)


def _render_list(result: dict, args: dict) -> str:
    items = result.get("items", [])
    if not items:
        return "No memories."
    lines = [_line(i) for i in items]
    shown_to = result.get("offset", 0) + len(items)
    if shown_to < result.get("total", 0):
        lines.append(f"(showing {result.get('offset', 0) + 1}-{shown_to} of {result['total']}; "
                     f"next page: offset={shown_to})")
    return _with_note("\n".join(lines), result)


def _render_update(result: dict, args: dict) -> str:
    if result.get("status") == "unchanged":
        return f"{result['id']} unchanged: the new values equal the current ones."
    return f"Updated: {result['id']} is the new version and supersedes {result.get('previous')} (history kept)."


def _render_history(result: dict, args: dict) -> str:
    lines = [f"History of {result['id']} (current version {result.get('current')}):"]
    for version in result.get("versions", []):
        state = "current" if version["id"] == result.get("current") else f"until {version.get('valid_to')}"
        if version.get("deleted_at"):
            state += f", deleted {version['deleted_at']}"
        lines.append(f"- {version['id']} {version.get('valid_from')} ({state}) {version['title']}")
        body = version.get("body") or ""
        if body:
            lines.append("    " + body.replace("\n", "\n    "))
    for event in result.get("redactions", []):
        lines.append(f"- {event['id']} {event['at']} redacted in place: {', '.join(event['fields'])}")
    return _with_note("\n".join(lines), result)


def _render_forget(result: dict, args: dict) -> str:
    ids = ", ".join(result.get("forgotten", [])) or "nothing"
    if result.get("hard"):
        return f"Hard-deleted with their history: {ids}."
    return f"Forgotten (soft delete; memory_restore brings them back): {ids}."


def _render_restore(result: dict, args: dict) -> str:
    if not result.get("restored"):
        return "Nothing to restore: those memories are not deleted."
    return "Restored: " + ", ".join(result["restored"]) + "."


def _render_link(result: dict, args: dict) -> str:
    return f"Linked {result['src']} -{result['relation']}→ {result['dst']} (weight {result['weight']})."


def _render_stats(result: dict, args: dict) -> str:
    by_kind = ", ".join(f"{k} {v}" for k, v in sorted((result.get("by_kind") or {}).items())) or "none"
    by_ns = ", ".join(f"{k} {v}" for k, v in sorted((result.get("by_namespace") or {}).items())) or "none"
    embedder = result.get("embedder") or {}
    lines = [
        f"{result.get('memories', 0)} live memories ({by_kind}); by namespace: {by_ns}",
        f"{result.get('versions_superseded', 0)} superseded versions, {result.get('deleted', 0)} deleted",
        f"database {result.get('db_path')} ({result.get('db_bytes', 0)} bytes), driver {result.get('driver')}, "
        f"vectors via {result.get('vector_index')}",
        f"embedder {embedder.get('provider', 'not pinned yet')}/{embedder.get('model', '-')}",
        f"{result.get('searches', 0)} searches, empty-result rate {result.get('empty_result_rate', 0)}, "
        f"p50 {result.get('latency_ms_p50')} ms, p95 {result.get('latency_ms_p95')} ms",
    ]
    if result.get("recent_empty_queries"):
        lines.append("recent queries with no result: " + "; ".join(result["recent_empty_queries"]))
    return _with_note("\n".join(lines), result)


def _render_export(result: dict, args: dict) -> str:
    extra = ", ".join(f"{k} {v}" for k, v in result.items() if k != "path" and isinstance(v, (int, float, str)))
    return f"Exported to {result['path']}" + (f" ({extra})" if extra else "") + "."


# --- fitting results into mcp.max_response_bytes ------------------------------------------------

def _size(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))


def _cut(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    return data[:max(0, max_bytes)].decode("utf-8", "ignore")


def _add_note(result: dict, note: str) -> None:
    result["note"] = (result["note"] + "; " + note) if result.get("note") else note


def _fit_recall(result: dict, args: dict, cap: int) -> dict:
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


def _fit_bodies(key: str) -> Callable[[dict, dict, int], dict]:
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


def _fit_list(result: dict, args: dict, cap: int) -> dict:
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


def _fit_any(result: dict, cap: int) -> dict:
    """Last resort for any tool: cut every long string until the JSON fits (types are kept)."""
    limit = cap
    while _size(result) > cap and limit >= 16:
        result = _shrink_strings(result, limit)
        limit //= 2
    if _size(result) > cap:
        logger.warning("structured result still exceeds %d bytes", cap)
    return result


# --- the tool table -------------------------------------------------------------------------------

TOOLS: list[Tool] = [
    Tool(
        name="memory_briefing",
        summary="the session hand-off: pinned rules, open tasks, decisions, gotchas, recent changes",
        title="Session briefing",
        description=("Use at the start of a task, or after context was compacted, to get the hand-off for this "
                     "project: pinned rules, open tasks, key decisions, preferences, gotchas and recent changes. "
                     "Cheap (never loads the embedding model); pass `query` to add memories relevant to it."),
        input_schema=_obj({"query": {"type": "string", "maxLength": 10_000, "description": "optional topic to add"},
                           "max_tokens": {"type": "integer", "minimum": 50, "maximum": 100_000,
                                          "description": "token budget (default: setting briefing.max_tokens)"},
                           "namespace": _NS}),
        output_schema=_out({"text": _STR, "tokens": _INT, "sections": {"type": "object"},
                            "namespaces": _STR_LIST, "items": {"type": "object"}}, ("text",)),
        annotations=_annotations(True, False, True),
        call=_call_briefing, render=_render_text,
    ),
    Tool(
        name="memory_remember",
        summary="store one durable fact the moment you learn it",
        title="Remember",
        description=("Use the moment you learn a durable fact worth knowing in a later session: a decision and "
                     "why, a gotcha, a user preference, an open task, a convention. One fact per call, written to "
                     "stand alone. Not for transient chatter; never secrets (they are redacted anyway). If it "
                     "revises an existing memory, use memory_update instead. Exact repeats return the existing id."),
        input_schema=_obj({
            "content": {"type": "string", "minLength": 1, "maxLength": DEFAULTS["store"]["max_content_chars"],
                        "description": "the memory, self-contained"},
            "kind": {"type": "string", "enum": list(KINDS), "default": "note",
                     "description": "decision, gotcha, preference, task, fact, note or session"},
            "title": {"type": "string", "maxLength": 500, "description": "short title (default: first sentence)"},
            "tags": _TAGS,
            "importance": {"type": "number", "minimum": 0, "maximum": 1,
                           "description": "0..1 (default: setting store.default_importance)"},
            "pinned": {"type": "boolean", "description": "always show in the briefing (rules that must not be missed)"},
            "ttl_days": {"type": "number", "minimum": 0, "maximum": 36500, "description": "expire after N days"},
            "namespace": _NS,
            "create_namespace": {"type": "boolean",
                                 "description": "allow writing to a namespace that does not exist yet"},
        }, ("content",)),
        output_schema=_out({"id": _STR, "status": {"type": "string", "enum": ["created", "duplicate"]},
                            "namespace": _STR, "near_duplicates": {"type": "array"},
                            "redacted": {"type": "object"}}, ("id", "status")),
        annotations=_annotations(False, False, True),
        call=_call_remember, render=_render_remember,
    ),
    Tool(
        name="memory_recall",
        summary="search memories before a task or when past decisions matter",
        title="Recall",
        description=("Use before starting a task, and whenever a question touches past decisions, conventions, "
                     "bugs or the user's preferences: hybrid keyword + semantic search over this project's and "
                     "global memories, ranked and cut to a token budget. Results carry ids for memory_get."),
        input_schema=_obj({
            "query": {"type": "string", "minLength": 1, "maxLength": 10_000, "description": "what you want to know"},
            "limit": {"type": "integer", "minimum": 1, "maximum": _RECALL_LIMIT,
                      "description": "maximum results (default: setting recall.default_limit)"},
            "kinds": _KINDS, "tags": {**_TAGS, "description": "only memories carrying all these tags"},
            "since": {**_WHEN, "description": "updated since (ISO date or 7d, 24h, last_week)"},
            "until": {**_WHEN, "description": "created until (ISO date or relative)"},
            "max_tokens": {"type": "integer", "minimum": 1, "maximum": 1_000_000, "description": "token budget"},
            "explain": {"type": "boolean", "description": "add the ranking features per hit"},
            "format": {"type": "string", "enum": ["compact", "full"], "default": "compact",
                       "description": "compact: summaries; full: whole bodies"},
            "min_similarity": {"type": "number", "minimum": 0, "maximum": 1, "description": "cosine floor; 0 disables"},
            "relative_cutoff": {"type": "number", "minimum": 0, "maximum": 1,
                                "description": "drop hits below this share of the best; 0 disables"},
            "gates": {"type": "boolean", "default": True,
                      "description": "false: no relevance gate at all, the best-ranked come back (for browsing)"},
            "namespace": _NS,
        }, ("query",)),
        output_schema=_out({"query": _STR, "namespaces": _STR_LIST, "results": {"type": "array", "items": _HIT},
                            "candidates": _INT, "note": _STR, "omitted": _STR_LIST}, ("results",)),
        annotations=_annotations(True, False, True),
        call=_call_recall, render=_render_recall, fit=_fit_recall,
    ),
    Tool(
        name="memory_get",
        summary="full text, links and version state of memories by id",
        title="Get memories",
        description=("Use when a recall or list line is not enough and you need the full text, tags, links and "
                     "version state of specific memories by id."),
        input_schema=_obj({"ids": _IDS, "namespace": _NS}, ("ids",)),
        output_schema=_out({"memories": {"type": "array", "items": _MEMORY}, "missing": _STR_LIST,
                            "forgotten": _STR_LIST, "note": _STR},
                           ("memories", "missing")),
        annotations=_annotations(True, False, True),
        call=_call_get, render=_render_get, fit=_fit_bodies("memories"),
    ),
    Tool(
        name="memory_list",
        summary="browse titles by kind, tag, status or date, with paging",
        title="List memories",
        description=("Use to browse or audit what is stored (e.g. all open tasks, all decisions, what changed "
                     "this week): a cheap index of titles and summaries, newest first, with paging."),
        input_schema=_obj({
            "kinds": _KINDS, "tags": _TAGS,
            "status": {"type": "string", "enum": list(TASK_STATUSES), "description": "task status"},
            "since": {**_WHEN, "description": "updated since"}, "until": {**_WHEN, "description": "created until"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50, "description": "page size"},
            "offset": {"type": "integer", "minimum": 0, "maximum": 10**9, "default": 0, "description": "page offset"},
            "order": {"type": "string", "enum": ["recent", "importance"], "default": "recent"},
            "namespace": _NS,
        }),
        output_schema=_out({"items": {"type": "array", "items": _MEMORY}, "total": _INT, "limit": _INT,
                            "offset": _INT, "truncated": _BOOL, "note": _STR}, ("items", "total")),
        annotations=_annotations(True, False, True),
        call=_call_list, render=_render_list, fit=_fit_list,
    ),
    Tool(
        name="memory_update",
        summary="revise a memory (new version, history kept); close tasks",
        title="Update a memory",
        description=("Use when a stored fact changed or was incomplete: writes a new version that supersedes the "
                     "old one (history kept). Prefer this over storing a contradicting duplicate. Also closes "
                     "tasks (status done/dropped) and pins or unpins."),
        input_schema=_obj({
            "id": _ID,
            "content": {"type": "string", "minLength": 1, "maxLength": DEFAULTS["store"]["max_content_chars"]},
            "title": {"type": "string", "maxLength": 500}, "kind": {"type": "string", "enum": list(KINDS)},
            "tags": {**_TAGS, "description": "replaces the tags"},
            "importance": {"type": "number", "minimum": 0, "maximum": 1}, "pinned": _BOOL,
            "status": {"type": "string", "enum": list(TASK_STATUSES)}, "namespace": _NS,
        }, ("id",)),
        output_schema=_out({"id": _STR, "previous": _NULL_STR,
                            "status": {"type": "string", "enum": ["updated", "unchanged"]}}, ("id", "status")),
        annotations=_annotations(False, False, True),
        call=_call_update, render=_render_update,
    ),
    Tool(
        name="memory_history",
        summary="every version of a memory, oldest first",
        title="Version history",
        description=("Use to see how a memory evolved: every version of its chain, oldest first, with the time "
                     "each one was current, and any secret redacted from a version in place."),
        input_schema=_obj({"id": _ID, "namespace": _NS}, ("id",)),
        output_schema=_out({"id": _STR, "current": _STR, "versions": {"type": "array", "items": _MEMORY},
                            "redactions": {"type": "array", "items": {"type": "object"}}, "note": _STR},
                           ("id", "versions")),
        annotations=_annotations(True, False, True),
        call=_call_history, render=_render_history, fit=_fit_bodies("versions"),
    ),
    Tool(
        name="memory_forget",
        summary="soft-delete wrong or obsolete memories (`hard`: permanent)",
        title="Forget memories",
        description=("Use when a memory is wrong, obsolete or was stored by mistake. Soft delete by default "
                     "(memory_restore undoes it); hard=true deletes permanently with its history."),
        input_schema=_obj({"ids": _IDS, "hard": {"type": "boolean", "default": False,
                                                 "description": "permanent, with history"}, "namespace": _NS},
                          ("ids",)),
        output_schema=_out({"forgotten": _STR_LIST, "hard": _BOOL}, ("forgotten", "hard")),
        annotations=_annotations(False, True, True),
        call=_call_forget, render=_render_forget,
    ),
    Tool(
        name="memory_restore",
        summary="undo a forget or an archive sweep",
        title="Restore memories",
        description="Use to undo memory_forget (soft deletes) or an archive sweep.",
        input_schema=_obj({"ids": _IDS, "namespace": _NS}, ("ids",)),
        output_schema=_out({"restored": _STR_LIST}, ("restored",)),
        annotations=_annotations(False, False, True),
        call=_call_restore, render=_render_restore,
    ),
    Tool(
        name="memory_link",
        summary="relate two memories: " + ", ".join(RELATIONS),
        title="Link memories",
        description=("Use when two memories are related in a way worth keeping: one refines, contradicts, "
                     "depends on or supersedes the other."),
        input_schema=_obj({"src": _ID, "dst": _ID,
                           "relation": {"type": "string", "enum": list(RELATIONS), "default": "related"},
                           "weight": {"type": "number", "minimum": 0, "maximum": 100, "default": 1},
                           "namespace": _NS}, ("src", "dst")),
        output_schema=_out({"src": _STR, "dst": _STR, "relation": _STR, "weight": _NUM},
                           ("src", "dst", "relation")),
        annotations=_annotations(False, False, True),
        call=_call_link, render=_render_link,
    ),
    Tool(
        name="memory_merge",
        summary="fold a duplicate into the memory to keep (explicit; history kept)",
        title="Merge two memories",
        description=("Use when two memories say the same thing (e.g. a near-duplicate hint from memory_remember): "
                     "closes OTHER into KEEP as a new version of KEEP — tags unioned, links moved, both texts kept "
                     "in history. Never merge memories that disagree; link them as contradicts instead."),
        input_schema=_obj({"keep": _ID, "other": _ID,
                           "content": {"type": "string", "minLength": 1,
                                       "maxLength": DEFAULTS["store"]["max_content_chars"],
                                       "description": "text of the merged version (default: KEEP's text)"},
                           "namespace": _NS}, ("keep", "other")),
        output_schema=_out({"id": _STR, "kept": _STR, "merged": _STR}, ("id", "kept", "merged")),
        annotations=_annotations(False, False, False),
        call=_call_merge, render=_render_merge,
    ),
    Tool(
        name="memory_stats",
        summary="counts, size, embedder and search health",
        title="Memory statistics",
        description=("Use to check the memory store's health: counts by kind and namespace, database size, "
                     "embedder, and search figures such as the empty-result rate."),
        input_schema=_obj({"namespace": _NS}),
        output_schema=_out({"memories": _INT, "by_kind": {"type": "object"}, "by_namespace": {"type": "object"},
                            "db_path": _STR}, ("memories",)),
        annotations=_annotations(True, False, True),
        call=_call_stats, render=_render_stats,
    ),
    Tool(
        name="memory_export",
        summary="JSONL backup into the exports folder (only when asked)",
        title="Export memories",
        description=("Use only when the user asks for a backup or a copy of their memories: writes a JSONL export "
                     "(with history and links) inside the data dir's exports/ folder or the configured export.dir."),
        input_schema=_obj({"path": {"type": "string", "minLength": 1, "maxLength": 1024,
                                    "description": "file name (relative names go to <data dir>/exports/)"},
                           "namespaces": {"type": "array", "items": {"type": "string", "minLength": 1,
                                                                     "maxLength": 200}, "maxItems": 100,
                                          "description": "only these namespaces (default: all)"}}, ("path",)),
        output_schema=_out({"path": _STR}, ("path",)),
        annotations=_annotations(False, True, True),
        call=_call_export, render=_render_export,
    ),
    Tool(
        name="memory_usage_guide",
        summary="this guide",
        title="How to use supermemory",
        description=("Use when unsure when to write, read, revise or forget memories, or which kind or namespace "
                     "to pick: returns the usage guide built from the live settings."),
        input_schema=_obj({}),
        output_schema=_out({"text": _STR}, ("text",)),
        annotations=_annotations(True, False, True),
        call=_call_guide, render=_render_text, needs_store=False,
    ),
]
TOOLS_BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}


# --- export path policy ---------------------------------------------------------------------------

def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


def resolve_export_path(config: Config, path: str) -> str:
    """Where an MCP export may write: inside `<data dir>/exports/` or the configured `export.dir`.

    Relative names go to `<data dir>/exports/` (created 0700). `..` components, absolute paths
    elsewhere and symlinks pointing outside are rejected; the returned path is fully resolved.
    Raises:
        InvalidInputError: the path is outside the allowed folders.
    """
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise InvalidInputError("path must be a non-empty file name")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError("path must be valid Unicode text (it holds a lone surrogate)") from None
    raw = Path(os.path.expanduser(path) if path.startswith("~") else path)
    if ".." in raw.parts:
        raise InvalidInputError("path must not contain '..'")
    exports = Path(config.home) / "exports"
    try:
        exports.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(exports, 0o700)
    except OSError as exc:
        raise InvalidInputError(f"cannot create the exports folder {exports}: {exc}") from exc
    roots = [os.path.realpath(exports)]
    custom = config.get("export.dir") or ""
    if isinstance(custom, str) and custom.strip():
        roots.append(os.path.realpath(os.path.expanduser(custom)))
    real = os.path.realpath(raw if raw.is_absolute() else exports / raw)
    if not any(_inside(os.path.dirname(real), root) for root in roots):
        raise InvalidInputError(f"exports may only be written inside {' or '.join(roots)} (relative names go to "
                                f"{roots[0]}); set export.dir to allow another folder")
    if os.path.isdir(real):
        raise InvalidInputError(f"{real} is a directory; give a file name")
    try:
        os.makedirs(os.path.dirname(real), mode=0o700, exist_ok=True)
    except OSError as exc:
        raise InvalidInputError(f"cannot create {os.path.dirname(real)}: {exc}") from exc
    return real


# --- the session ------------------------------------------------------------------------------------

def _platform(client_name: str | None) -> str:
    """The `source.platform` recorded on writes, from the client's `clientInfo.name`."""
    low = (client_name or "").strip().lower()
    if not low:
        return "mcp"
    if "codex" in low:
        return "codex"
    if "claude" in low:
        return "claude-code" if "code" in low else "claude"
    return re.sub(r"[^a-z0-9._-]+", "-", low).strip("-")[:40] or "mcp"


def _path_from_uri(uri: str) -> str | None:
    """Local path of a `file://` URI (None for other schemes)."""
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = urllib.parse.unquote(parsed.path)
    if os.name == "nt" and re.match(r"^/[A-Za-z]:", path):
        path = path[1:]
    return path or None


class Session:
    """State of one client connection: negotiated version, client identity, namespace, the store.

    :param config: resolved settings.
    :param store_factory: `factory(namespace) -> MemoryStore`; the default opens `config.db_path`.
    :param write: callable that sends one frame (a JSON-ready dict).
    """

    def __init__(self, config: Config, *, store_factory: Callable[[str], Any] | None = None,
                 write: Callable[[dict], None] | None = None):
        self.config = config
        self._custom_factory = store_factory is not None
        self._factory = store_factory or self._open_default
        self._write = write or (lambda message: None)
        self._store = None
        self.protocol_version: str | None = None
        self.client_info: dict = {}
        self.client_capabilities: dict = {}
        self.platform = "mcp"
        self.initialized = False
        self.roots_dir: str | None = None
        self.roots_namespace: str | None = None
        self._pending: dict[Any, str] = {}
        self._request_seq = 0
        self.warmup_thread: threading.Thread | None = None

    # namespace and store

    def default_namespace(self) -> str:
        """SUPERMEMORY_NAMESPACE, then the client's first root, then the project dir / cwd."""
        if self.config.explicit_namespace:
            return self.config.default_namespace()
        if self.roots_namespace:
            return self.roots_namespace
        return self.config.default_namespace()

    @property
    def cwd(self) -> str:
        if self.roots_dir:
            return self.roots_dir
        if self.config.project_dir:
            return str(self.config.project_dir)
        return os.getcwd()

    def _open_default(self, namespace: str):
        from supermemory.core import MemoryStore

        # `initialize` must answer fast: a search-index rebuild after an upgrade waits for the first tool call.
        return MemoryStore(self.config.db_path, config=self.config, namespace=namespace, cache_vectors=True,
                           rebuild_index=False)

    @property
    def store(self):
        """The MemoryStore, opened on first use (main thread only).

        Raises:
            SupermemoryError: the database cannot be opened.
        """
        if self._store is None:
            self._store = self._factory(self.default_namespace())
        return self._store

    def store_is_cheap(self) -> bool:
        """True when the store is open or its database already exists (so opening it creates nothing)."""
        return self._store is not None or self._custom_factory or Path(self.config.db_path).exists()

    def close(self) -> None:
        store, self._store = self._store, None
        if store is not None and not self._custom_factory:
            store.close()

    # outgoing traffic

    def send(self, message: dict) -> None:
        self._write(message)

    def request_client(self, method: str, params: dict | None = None) -> str:
        """Send a request to the client; its response is matched by our own id."""
        self._request_seq += 1
        request_id = f"sm-{method.split('/')[0]}-{self._request_seq}"
        self._pending[request_id] = method
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def on_client_response(self, message: dict) -> None:
        """Responses to our requests (roots/list); anything else is dropped silently."""
        method = self._pending.pop(message.get("id"), None) if _valid_id(message.get("id")) else None
        if method != "roots/list":
            logger.debug("ignoring a response from the client: id %r", message.get("id"))
            return
        if "error" in message:
            logger.info("client could not list roots: %s", message.get("error"))
            return
        result = message.get("result")
        roots = result.get("roots") if isinstance(result, dict) else None
        for root in roots if isinstance(roots, list) else []:
            uri = root.get("uri") if isinstance(root, dict) else None
            path = _path_from_uri(uri) if isinstance(uri, str) else None
            if path:
                self.apply_root(path)
                return
        logger.info("client listed no file:// roots; keeping namespace %s", self.default_namespace())

    def apply_root(self, path: str) -> None:
        """Use a workspace root as the project (unless SUPERMEMORY_NAMESPACE pins one)."""
        self.roots_dir = path
        self.roots_namespace = namespace_for_dir(path)
        if self._store is not None and not self.config.explicit_namespace:
            self._store.namespace = self.roots_namespace
        logger.info("workspace root %s → namespace %s", path, self.default_namespace())

    def start_warmup(self) -> None:
        """Resolve the embedder on this thread, then load its model in a daemon thread."""
        try:
            embedder = self.store.embedder
        except SupermemoryError as exc:
            logger.warning("embedding model warm-up skipped: %s", exc)
            return
        load = getattr(embedder, "load", None)
        if not callable(load):
            return
        self.warmup_thread = threading.Thread(target=_warm, args=(load,), name="supermemory-warmup", daemon=True)
        self.warmup_thread.start()

    # incoming traffic

    def handle_frame(self, frame: bytes) -> dict | None:
        """One raw line in, at most one response out (None for notifications and client responses)."""
        try:
            text = frame.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _error(None, PARSE_ERROR, f"Parse error: invalid UTF-8 ({exc.reason} at byte {exc.start})")
        if not text.strip():
            return None
        try:
            message = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            return _error(None, PARSE_ERROR, f"Parse error: {str(exc)[:200]}")
        return self.handle_message(message)

    def handle_message(self, message: Any) -> dict | None:
        """Dispatch one decoded JSON-RPC message through HANDLERS."""
        if isinstance(message, list):
            return _error(None, INVALID_REQUEST, "batch requests are not supported; send one JSON-RPC object per line")
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "a request must be a JSON object")
        if "method" not in message and ("result" in message or "error" in message):
            self.on_client_response(message)
            return None
        notification = "id" not in message
        request_id = message.get("id")
        reply_id = request_id if _valid_id(request_id) else None
        method = message.get("method")
        if message.get("jsonrpc") != "2.0":
            return None if notification else _error(reply_id, INVALID_REQUEST, 'jsonrpc must be "2.0"')
        if not isinstance(method, str) or not method:
            return None if notification else _error(reply_id, INVALID_REQUEST, "method must be a non-empty string")
        if not notification and reply_id is None:
            return _error(None, INVALID_REQUEST, "id must be a string or an integer")
        params = message.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return None if notification else _error(request_id, INVALID_PARAMS, "params must be an object")
        handler = HANDLERS.get(method)
        if handler is None:
            if notification:
                logger.debug("ignoring unknown notification %s", method)
                return None
            return _error(request_id, METHOD_NOT_FOUND, "Method not found", method)
        try:
            result = handler(self, params)
        except JsonRpcError as exc:
            return None if notification else _error(request_id, exc.code, exc.message, exc.data)
        except Exception:  # noqa: BLE001 - the dispatch loop's top-level handler: log, generic error
            logger.exception("internal error while handling %s", method)
            return None if notification else _error(request_id, INTERNAL_ERROR, "Internal error")
        if notification:
            return None
        return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _warm(load: Callable[[], None]) -> None:
    try:
        load()
        logger.debug("embedding model loaded")
    except SupermemoryError as exc:
        logger.warning("embedding model warm-up failed: %s", exc)
    except Exception:  # noqa: BLE001 - the warm-up thread's top-level handler: never fatal
        logger.exception("embedding model warm-up failed")


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict:
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


# --- method handlers ------------------------------------------------------------------------------

def _param(params: dict, name: str, kind: type, *, required: bool = False) -> Any:
    value = params.get(name)
    if value is None:
        if required:
            raise JsonRpcError(INVALID_PARAMS, f"params.{name}: required", {"field": f"params.{name}"})
        return None
    if not isinstance(value, kind):
        expected = {str: "string", dict: "object", list: "array"}.get(kind, kind.__name__)
        raise JsonRpcError(INVALID_PARAMS, f"params.{name}: expected {expected}", {"field": f"params.{name}"})
    return value


def _initialize(session: Session, params: dict) -> dict:
    requested = _param(params, "protocolVersion", str, required=True)
    capabilities = _param(params, "capabilities", dict) or {}
    client_info = _param(params, "clientInfo", dict) or {}
    version = requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
    session.protocol_version = version
    session.client_capabilities = capabilities
    session.client_info = client_info
    name = client_info.get("name")
    session.platform = _platform(name if isinstance(name, str) else None)
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": SERVER_NAME, "title": "supermemory", "version": __version__},
        "instructions": _instructions(session),
    }


def _instructions(session: Session) -> str:
    text = INSTRUCTIONS
    config = session.config
    if not config.get("mcp.instructions_briefing", True) or not session.store_is_cheap():
        return text
    budget = max(50, int(config.get("mcp.instructions_briefing_tokens", 300) or 300))
    try:
        briefing = session.store.briefing(max_tokens=budget)
    except SupermemoryError as exc:
        logger.warning("no briefing in the instructions: %s", exc)
        return text
    return text + "\n\n" + briefing["text"]


def _initialized(session: Session, params: dict) -> dict:
    session.initialized = True
    if isinstance(session.client_capabilities.get("roots"), dict):
        session.request_client("roots/list")
    session.start_warmup()
    return {}


def _roots_changed(session: Session, params: dict) -> dict:
    if isinstance(session.client_capabilities.get("roots"), dict):
        session.request_client("roots/list")
    return {}


def _ignore(session: Session, params: dict) -> dict:
    return {}


def _tools_list(session: Session, params: dict) -> dict:
    cursor = params.get("cursor")
    offset = 0
    if cursor is not None:
        if not isinstance(cursor, str) or not cursor.isdigit() or int(cursor) > len(TOOLS):
            raise JsonRpcError(INVALID_PARAMS, f"params.cursor: invalid cursor {cursor!r}", {"field": "params.cursor"})
        offset = int(cursor)
    page = TOOLS[offset:offset + TOOLS_PAGE_SIZE]
    result: dict = {"tools": [tool.describe() for tool in page]}
    if offset + TOOLS_PAGE_SIZE < len(TOOLS):
        result["nextCursor"] = str(offset + TOOLS_PAGE_SIZE)
    return result


def _tools_call(session: Session, params: dict) -> dict:
    name = _param(params, "name", str, required=True)
    arguments = _param(params, "arguments", dict) or {}
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise JsonRpcError(INVALID_PARAMS, f"unknown tool {name}", {"field": "params.name"})
    try:
        arguments = validate(tool.input_schema, arguments)
    except JsonRpcError as exc:
        if not _argument_errors_are_tool_results(session):
            raise
        # SEP-1303: the model sees what to correct, as a tool result (the field is named in the text).
        return {"content": [{"type": "text", "text": f"invalid arguments: {exc.message}"}], "isError": True}
    try:
        if tool.needs_store:
            import_numpy()   # waits while the warm-up thread imports it: never two first imports at once
        store = session.store if tool.needs_store else None
        if getattr(store, "index_stale", False):
            try:
                store.rebuild_search_index()
            except SupermemoryError as exc:   # e.g. locked by another writer: old tokens still work
                logger.warning("search index rebuild deferred: %s", exc)
        result = tool.call(session, store, arguments)
    except JsonRpcError:
        raise
    except SupermemoryError as exc:
        return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
    cap = int(session.config.get("mcp.max_response_bytes", 30_000))
    if tool.fit is not None:
        result = tool.fit(result, arguments, cap)
    result = _fit_any(result, cap)
    from supermemory.render import fit_bytes

    text = fit_bytes(tool.render(result, arguments), cap,
                     pointer="memory_get with specific ids returns full records")
    return {"content": [{"type": "text", "text": text}], "structuredContent": result, "isError": False}


def _argument_errors_are_tool_results(session: Session) -> bool:
    """From protocol 2025-11-25 on, arguments that fail the input schema are a tool result with
    `isError`; earlier versions answered them with JSON-RPC INVALID_PARAMS."""
    return (session.protocol_version or LATEST_PROTOCOL_VERSION) >= TOOL_ARGUMENT_ERRORS_SINCE


def _ping(session: Session, params: dict) -> dict:
    return {}


HANDLERS: dict[str, Handler] = {
    "initialize": _initialize,
    "ping": _ping,
    "tools/list": _tools_list,
    "tools/call": _tools_call,
    "notifications/initialized": _initialized,
    "notifications/cancelled": _ignore,
    "notifications/roots/list_changed": _roots_changed,
}


# --- framing and the process --------------------------------------------------------------------

class _Oversize:
    """Marker for a frame longer than the limit (its bytes were discarded)."""


OVERSIZE = _Oversize()


def read_frames(stream, limit: int) -> Iterator[bytes | _Oversize]:
    """Yield newline-delimited frames, never holding more than `limit` + 1 bytes of one in memory."""
    while True:
        line = stream.readline(limit + 1)
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogatepass")
        if not line:
            return
        if line.endswith(b"\n") or len(line) <= limit:
            yield line
            continue
        while True:
            rest = stream.readline(_DISCARD_CHUNK)
            if isinstance(rest, str):
                rest = rest.encode("utf-8", "surrogatepass")
            if not rest or rest.endswith(b"\n"):
                break
        yield OVERSIZE


def _encode(message: dict) -> bytes:
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        text = json.dumps(message, ensure_ascii=True, separators=(",", ":"), allow_nan=False, default=str)
        return text.encode("ascii") + b"\n"


class _FrameWriter:
    """Writes one JSON object + newline per frame to a binary (or text) stream, flushed each time."""

    def __init__(self, stream):
        self.stream = stream
        self.text = isinstance(stream, io.TextIOBase)
        self.lock = threading.Lock()

    def __call__(self, message: dict) -> None:
        try:
            data = _encode(message)
        except (TypeError, ValueError) as exc:
            logger.error("cannot encode a response: %s", exc)
            data = _encode(_error(message.get("id"), INTERNAL_ERROR, "Internal error"))
        with self.lock:
            self.stream.write(data.decode("utf-8") if self.text else data)
            self.stream.flush()


def _claim_stdout():
    """Keep the real stdout for frames and point fd 1 and `sys.stdout` at stderr.

    Returns (binary frame stream, restore callable).
    """
    saved = sys.stdout
    try:
        saved.flush()
    except (OSError, ValueError, AttributeError):
        pass
    try:
        fd = os.dup(1)
        os.dup2(2, 1)
    except (OSError, AttributeError, ValueError):
        out = getattr(saved, "buffer", saved)
        sys.stdout = sys.stderr

        def restore_plain() -> None:
            sys.stdout = saved
        return out, restore_plain
    out = open(fd, "wb", buffering=64 * 1024)  # noqa: SIM115 - closed by restore()
    sys.stdout = sys.stderr

    def restore() -> None:
        try:
            out.flush()
        except (OSError, ValueError):
            pass
        try:
            os.dup2(fd, 1)
        except OSError:
            pass
        try:
            out.close()
        except OSError:
            pass
        sys.stdout = saved
    return out, restore


def _watch_parent(stop: threading.Event) -> None:
    parent = os.getppid()

    def run() -> None:
        while not stop.wait(PARENT_POLL_SECONDS):
            if os.getppid() != parent:
                logger.info("parent process %d is gone; exiting", parent)
                os._exit(0)
    threading.Thread(target=run, name="supermemory-parent-watch", daemon=True).start()


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def serve(stdin=None, stdout=None, *, config: Config | None = None,
          store_factory: Callable[[str], Any] | None = None) -> int:
    """Run the MCP stdio server until EOF, SIGTERM/SIGINT or the parent's death; returns the exit code.

    :param stdin: binary stream of frames (default: the process stdin).
    :param stdout: binary stream for frames (default: the process stdout, with fd 1 moved to stderr).
    :param config: settings (default `load_config(strict=False)`: config file problems are logged
        on stderr and the settings they concern keep their defaults).
    :param store_factory: `factory(namespace) -> MemoryStore` (default: open `config.db_path`).
    """
    real_stdio = stdin is None and stdout is None
    if config is None:
        config = load_config(strict=False)  # a bad config file must not keep the agent's tools away
        for problem in config.problems:
            logger.warning("%s (built-in defaults used instead)", problem)
    saved_stdout = sys.stdout
    restore: Callable[[], None]
    if stdout is None:
        out, restore = _claim_stdout()
    else:
        out = stdout
        sys.stdout = sys.stderr

        def restore() -> None:
            sys.stdout = saved_stdout
    inp = stdin if stdin is not None else sys.stdin.buffer
    limit = int(config.get("mcp.max_frame_bytes", 8 * 1024 * 1024))
    session = Session(config, store_factory=store_factory, write=_FrameWriter(out))
    stop = threading.Event()
    previous: dict[int, Any] = {}
    if real_stdio:
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                previous[sig] = signal.signal(sig, _interrupt)
            except (ValueError, OSError):
                pass
        _watch_parent(stop)
    try:
        for frame in read_frames(inp, limit):
            if frame is OVERSIZE:
                session.send(_error(None, INVALID_REQUEST, f"frame larger than mcp.max_frame_bytes ({limit} bytes)"))
                continue
            response = session.handle_frame(frame)
            if response is not None:
                session.send(response)
    except KeyboardInterrupt:
        logger.info("interrupted; exiting")
    except (BrokenPipeError, ConnectionResetError):
        logger.info("the client closed the connection")
    finally:
        stop.set()
        for sig, handler in previous.items():
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError):
                pass
        try:
            session.close()
        except SupermemoryError as exc:
            logger.warning("closing the store: %s", exc)
        try:
            restore()
        except (BrokenPipeError, OSError):
            pass
    return 0
