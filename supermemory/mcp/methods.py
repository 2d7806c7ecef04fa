"""The MCP methods (initialize, ping, tools/list, tools/call, notifications) as the HANDLERS table."""
from __future__ import annotations

import logging
import re
from typing import Any, Callable

from supermemory import __version__
from supermemory.errors import SupermemoryError, did_you_mean
from supermemory.mcp.fitting import fit_any
from supermemory.mcp.protocol import (INVALID_PARAMS, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS,
                                      TOOL_ARGUMENT_ERRORS_SINCE, JsonRpcError, valid_id)
from supermemory.mcp.tools import TOOLS, TOOLS_BY_NAME, check_ids
from supermemory.mcp.validation import validate
from supermemory.render import fit_bytes
from supermemory.runtime import import_numpy
from supermemory.store.records import NUL, replacements

logger = logging.getLogger(__name__)

SERVER_NAME = "supermemory"
TOOLS_PAGE_SIZE = 50

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

# A handler takes the connection's `Session` (mcp/session.py, which dispatches through this table,
# so it is not imported here) and the request's params; it returns the result or raises JsonRpcError.
Handler = Callable[[Any, dict], Any]


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


def client_platform(client_name: str | None) -> str:
    """The `source.platform` recorded on writes, from the client's `clientInfo.name`."""
    low = (client_name or "").strip().lower()
    if not low:
        return "mcp"
    if "codex" in low:
        return "codex"
    if "claude" in low:
        return "claude-code" if "code" in low else "claude"
    return re.sub(r"[^a-z0-9._-]+", "-", low).strip("-")[:40] or "mcp"


def _initialize(session, params: dict) -> dict:
    requested = _param(params, "protocolVersion", str, required=True)
    capabilities = _param(params, "capabilities", dict) or {}
    client_info = _param(params, "clientInfo", dict) or {}
    version = requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
    session.protocol_version = version
    session.client_capabilities = capabilities
    session.client_info = client_info
    name = client_info.get("name")
    session.platform = client_platform(name if isinstance(name, str) else None)
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": SERVER_NAME, "title": "supermemory", "version": __version__},
        "instructions": _instructions(session),
    }


def _instructions(session) -> str:
    text = INSTRUCTIONS
    config = session.config
    if not config.get("mcp.instructions_briefing") or not session.store_is_cheap():
        return text
    budget = max(50, int(config.get("mcp.instructions_briefing_tokens") or 300))
    try:
        briefing = session.store.briefing(max_tokens=budget, platform=session.platform)
    except SupermemoryError as exc:
        logger.warning("no briefing in the instructions: %s", exc)
        return text
    from supermemory.render_briefing import briefing_view

    return text + "\n\n" + briefing_view(briefing)["text"]


def _initialized(session, params: dict) -> dict:
    session.initialized = True
    if isinstance(session.client_capabilities.get("roots"), dict):
        session.request_client("roots/list")
    session.start_warmup()
    return {}


def _roots_changed(session, params: dict) -> dict:
    if isinstance(session.client_capabilities.get("roots"), dict):
        session.request_client("roots/list")
    return {}


def _cancelled(session, params: dict) -> dict:
    request_id = params.get("requestId")
    if valid_id(request_id):
        session.cancelled(request_id)
    return {}


def _tools_list(session, params: dict) -> dict:
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


def _tools_call(session, params: dict) -> dict:
    name = _param(params, "name", str, required=True)
    arguments = _param(params, "arguments", dict) or {}
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise JsonRpcError(INVALID_PARAMS, f"unknown tool {name}{did_you_mean(name, TOOLS_BY_NAME, prefix='memory_')}",
                           {"field": "params.name"})
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
        check_ids(arguments)   # a malformed id fails the call, naming its argument (tools.py: the id rule)
        with replacements() as replaced:
            result = tool.call(session, store, arguments)
    except JsonRpcError:
        raise
    except SupermemoryError as exc:
        return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
    cap = int(session.config.get("mcp.max_response_bytes"))
    warnings = replacement_warnings(replaced)
    if warnings:
        result["warnings"] = warnings
    if tool.fit is not None:
        result = tool.fit(result, arguments, cap)
    result = fit_any(result, cap)
    notes = "".join(f"\n({warning})" for warning in warnings)   # kept whole: the text is cut before them
    text = fit_bytes(tool.render(result, arguments), cap - len(notes.encode("utf-8")),
                     pointer="memory_get with specific ids returns full records") + notes
    return {"content": [{"type": "text", "text": text}], "structuredContent": result, "isError": False}


def replacement_warnings(replaced: dict[tuple[str, str], int]) -> list[str]:
    """What the agent is told of the characters its arguments held that the store cannot keep: NUL (removed) and
    what no UTF-8 text can hold (lone surrogates, e.g. half an emoji cut by a JavaScript string slice: replaced).
    Only the server's stderr heard of them before, so an agent never knew its text was stored changed."""
    return [f"{field} held {count} NUL character(s), removed" if what == NUL else
            f"{field} held {count} invalid character(s) ({what}), replaced with U+FFFD"
            for (field, what), count in replaced.items()]


def _argument_errors_are_tool_results(session) -> bool:
    """From protocol 2025-11-25 on, arguments that fail the input schema are a tool result with
    `isError`; earlier versions answered them with JSON-RPC INVALID_PARAMS."""
    return (session.protocol_version or LATEST_PROTOCOL_VERSION) >= TOOL_ARGUMENT_ERRORS_SINCE


def _ping(session, params: dict) -> dict:
    return {}


HANDLERS: dict[str, Handler] = {
    "initialize": _initialize,
    "ping": _ping,
    "tools/list": _tools_list,
    "tools/call": _tools_call,
    "notifications/initialized": _initialized,
    "notifications/cancelled": _cancelled,
    "notifications/roots/list_changed": _roots_changed,
}
