"""The MCP tool table: each tool's schemas and annotations, and a handler that calls one MemoryStore method."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from supermemory.config import KINDS, RELATIONS, TASK_STATUSES, Config
from supermemory.settings import DEFAULTS
from supermemory.errors import InvalidInputError, SupermemoryError
from supermemory.guide import usage_guide
from supermemory.mcp.fitting import fit_bodies, fit_list, fit_recall
from supermemory.store.records import parse_id
from supermemory.render import (MCP_COMMANDS, render_export, render_forget, render_get,
                                render_history, render_link, render_list, render_unlink, render_merge, render_recall,
                                render_remember, render_restore, render_stats, render_update)
from supermemory.render_briefing import briefing_view


# --- schema building blocks -----------------------------------------------------------------------

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
       "description": "namespace name, not a path (a known project's root folder stands for its namespace); "
                      "default: the current project (reads also include 'global'; '*' reads all)"}
_ID = {"type": "string", "minLength": 1, "maxLength": 24, "description": "memory id, e.g. M12"}
_IDS = {"type": "array", "items": _ID, "minItems": 1, "maxItems": 100, "description": "memory ids, e.g. [\"M12\"]"}
_KINDS = {"type": "array", "items": {"type": "string", "enum": list(KINDS)}, "maxItems": len(KINDS),
          "description": "only these kinds"}
_TAGS = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 200}, "maxItems": 64}
_WHEN = {"type": "string", "minLength": 1, "maxLength": 64, "description": "ISO date or relative: 7d, 24h, last_week"}
_MEMORY = _out({"id": _STR, "namespace": _STR, "kind": _STR, "title": _STR, "summary": _STR, "body": _STR,
                "tags": _STR_LIST, "importance": _NUM, "pinned": _BOOL, "status": _NULL_STR,
                "superseded_by": _NULL_STR, "body_offset": _INT, "body_chars": _INT, "body_truncated": _BOOL},
               ("id", "kind", "title"))
_HIT = _out({**_MEMORY["properties"], "score": _NUM, "attention": _NUM, "features": {"type": "object"},
             "contributions": {"type": "object"},
             "passage": _out({"chunk": _INT, "chunks": _INT, "text": _STR}, ("chunk", "chunks", "text")),
             # a broad query's listing (retrieval/broad.py) ranks nothing: null score, the filter as reason
             **{key: {"type": ["number", "null"]} for key in ("score", "attention", "relevance")},
             "reason": _STR}, ("id", "kind", "title", "score", "attention"))
_RECALL_LIMIT = DEFAULTS["recall"]["max_limit"]

# The one rule of the id-taking tools, in their descriptions. A malformed id (not like M12) fails the call
# (`check_ids`, naming the argument). An id that names no memory here (unknown, another namespace's, forgotten):
# memory_get, a read of several, answers with the memories found and lists it under `missing`; every other
# tool acts on the memories it names, so it fails the call and changes nothing.
_IDS_READ = (" Ids: a malformed one (not like M12) fails the call; one not found here (unknown, in another namespace, "
             "forgotten) is listed under `missing` beside the memories found, not an error.")
_IDS_FAIL = " Ids: a malformed or unknown one fails the call (isError)"
_IDS_WRITE = _IDS_FAIL + " and nothing is changed."
ID_ARGUMENTS = ("id", "ids", "src", "dst", "keep", "other")


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
    call: Callable[[Any, Any, dict], dict]    # (session, store or None, validated arguments) -> result
    render: Callable[[dict, dict], str]       # (result, arguments) -> the text content
    fit: Callable[[dict, dict, int], dict] | None = None
    needs_store: bool = True
    summary: str = ""

    def describe(self) -> dict:
        """The `tools/list` entry; every output may carry `warnings` (methods.py: text a call's arguments held that
        was stored changed)."""
        output = {**self.output_schema, "properties": {**self.output_schema["properties"], "warnings": _STR_LIST}}
        return {"name": self.name, "title": self.title, "description": self.description,
                "inputSchema": self.input_schema, "outputSchema": output,
                "annotations": {"title": self.title, **self.annotations}}


def check_ids(arguments: dict) -> None:
    """Refuse a call whose id arguments hold a malformed id before the store reads anything, naming the argument.

    Raises:
        InvalidInputError: e.g. "arguments.ids[2]: not a memory id: 'bogus' (expected something like M12)".
    """
    for name in ID_ARGUMENTS:
        value = arguments.get(name)
        values = value if isinstance(value, list) else [] if value is None else [value]
        for index, item in enumerate(values):
            try:
                parse_id(item)
            except InvalidInputError:
                where = f"{name}[{index}]" if isinstance(value, list) else name
                raise InvalidInputError(f"arguments.{where}: not a memory id: {item!r} (expected something like "
                                        f"M12)") from None


def _kw(args: dict, *names: str) -> dict:
    """The given arguments among `names`, as store keyword arguments (same names)."""
    return {name: args[name] for name in names if name in args}


# --- tool bodies: each calls one MemoryStore method ---------------------------------------------

def _call_briefing(session, store, args: dict) -> dict:
    return briefing_view(store.briefing(**_kw(args, "query", "max_tokens", "namespace"), platform=session.platform))


def _call_remember(session, store, args: dict) -> dict:
    return store.remember(args["content"], source={"platform": session.platform, "cwd": session.cwd},
                          **_kw(args, "kind", "title", "tags", "importance", "pinned", "ttl_days", "status",
                                "namespace", "create_namespace"))


def _call_recall(session, store, args: dict) -> dict:
    return store.recall(args["query"], origin="mcp",
                        **_kw(args, "limit", "kinds", "tags", "since", "until", "max_tokens", "explain",
                              "min_similarity", "relative_cutoff", "gates", "intent", "namespace"))


def _call_get(session, store, args: dict) -> dict:
    offset = args.get("offset")
    if offset is not None and len(args["ids"]) != 1:
        raise InvalidInputError(f"offset pages through one memory's body: pass exactly one id with it "
                                f"(got {len(args['ids'])})")
    result = store.get(args["ids"], **_kw(args, "namespace"))
    for item in result["memories"] if offset is not None else []:
        _body_from(item, offset)
        if offset:
            result["note"] = f"{item['id']}'s body from character {offset} of {item['body_chars']}"
    return result


def _body_from(item: dict, offset: int) -> None:
    """Keep the part of a memory's body from character `offset` on, marked with where it starts.

    Raises:
        InvalidInputError: the offset lies past the end of the body.
    """
    body = item.get("body") or ""
    if offset > len(body):
        raise InvalidInputError(f"offset {offset} is past the end of {item['id']}'s body ({len(body)} characters)")
    item["body"], item["body_offset"], item["body_chars"] = body[offset:], offset, len(body)


def _call_list(session, store, args: dict) -> dict:
    """A list page with its records under `memories`, as memory_get has them; no `items` alias here (the CLI keeps
    one, `render.list_json`): it would send every record twice and halve the page a response can hold."""
    page = store.list(**_kw(args, "kinds", "tags", "status", "since", "until", "pinned", "limit", "offset", "order",
                            "namespace"))
    return {"memories": page.pop("items"), **page}


def _call_merge(session, store, args: dict) -> dict:
    return store.merge(args["keep"], args["other"], **_kw(args, "content", "namespace"))


_UPDATE_FIELDS = ("content", "title", "kind", "tags", "importance", "pinned", "status")


def _call_update(session, store, args: dict) -> dict:
    if not any(name in args for name in _UPDATE_FIELDS):   # else the answer would read "unchanged", as if compared
        raise InvalidInputError("nothing to update: give " + ", ".join(_UPDATE_FIELDS[:-1]) + " or "
                                + _UPDATE_FIELDS[-1])
    return store.update(args["id"], source={"by": session.platform},
                        **_kw(args, *_UPDATE_FIELDS, "namespace"))


def _call_history(session, store, args: dict) -> dict:
    return store.history(args["id"], **_kw(args, "namespace"))


def _call_forget(session, store, args: dict) -> dict:
    return store.forget(args["ids"], by=session.platform, **_kw(args, "hard", "namespace"))


def _call_restore(session, store, args: dict) -> dict:
    return store.restore(args["ids"], by=session.platform, **_kw(args, "namespace"))


def _call_link(session, store, args: dict) -> dict:
    if args.get("remove"):
        return store.unlink(args["src"], args["dst"], **_kw(args, "relation", "namespace"))
    return store.link(args["src"], args["dst"], **_kw(args, "relation", "weight", "namespace"))


def _render_link(result: dict) -> str:
    return render_unlink(result) if "removed" in result else render_link(result)


def _call_stats(session, store, args: dict) -> dict:
    return store.stats(**_kw(args, "namespace"))


def _call_export(session, store, args: dict) -> dict:
    target = resolve_export_path(session.config, args["path"])
    export = getattr(store, "export", None)
    if export is None:
        raise SupermemoryError("export is not available in this build of supermemory")
    result = export(target, **_kw(args, "namespaces"))
    out = dict(result) if isinstance(result, dict) else {"result": result}
    out["path"] = target
    return out


def _call_guide(session, store, args: dict) -> dict:
    return {"text": usage_guide(session.config, TOOLS)}


# --- the text each tool answers with: the shared views in render.py -------------------------------

def _text(result: dict, args: dict) -> str:
    return result.get("text", "")


def _view(renderer: Callable[..., str], **options: Any) -> Callable[[dict, dict], str]:
    """A tool's text: one shared renderer applied to the result (the arguments do not change it)."""
    return lambda result, args: renderer(result, **options)


def _get_text(result: dict, args: dict | None = None) -> str:
    """memory_get's text: the shared view; a page from an offset on leaves its "cut at" line to the note
    (the view counts that line from the start of the body)."""
    memories = [{**item, "body_truncated": False} if item.get("body_offset") else item
                for item in result.get("memories", [])]
    return render_get({**result, "memories": memories}, commands=MCP_COMMANDS)


def _recall_text(result: dict, args: dict) -> str:
    return render_recall(result, full=args.get("format") == "full", explain=bool(args.get("explain")))


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
                                          "description": "token budget (default: setting briefing.max_tokens); "
                                                         "the most important memory is always shown, cut to fit"},
                           "namespace": _NS}),
        output_schema=_out({"text": _STR, "tokens": _INT, "sections": {"type": "object"},
                            "not_shown": {"type": "object"}, "namespaces": _STR_LIST,
                            "items": {"type": "object"}}, ("text",)),
        annotations=_annotations(True, False, True),
        call=_call_briefing, render=_text,
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
            "ttl_days": {"type": "number", "minimum": 0, "maximum": 36500, "description": "expire after N days (0 = never, the default)"},
            "status": {"type": "string", "enum": list(TASK_STATUSES),
                       "description": "a task's status (default: the one its text opens with, 'Done: …', else open)"},
            "namespace": _NS,
            "create_namespace": {"type": "boolean",
                                 "description": "allow writing to a namespace that does not exist yet"},
        }, ("content",)),
        output_schema=_out({"id": _STR, "status": {"type": "string", "enum": ["created", "duplicate"]},
                            "namespace": _STR, "near_duplicates": {"type": "array"},
                            "possible_contradictions": {"type": "array"},
                            "supersedes": _STR_LIST, "redacted": {"type": "object"},
                            "unclosed_private": _INT}, ("id", "status")),
        annotations=_annotations(False, False, True),
        call=_call_remember, render=_view(render_remember, commands=MCP_COMMANDS),
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
            "max_tokens": {"type": "integer", "minimum": 1, "maximum": 1_000_000,
                           "description": "token budget of the page, passages included (default: the recall.max_tokens setting, 1500)"},
            "explain": {"type": "boolean", "description": "add the ranking features per hit"},
            "format": {"type": "string", "enum": ["compact", "full"], "default": "compact",
                       "description": "compact: summaries; full: whole bodies"},
            "min_similarity": {"type": "number", "minimum": 0, "maximum": 1, "description": "cosine floor; 0 disables"},
            "relative_cutoff": {"type": "number", "minimum": 0, "maximum": 1,
                                "description": "drop hits below this share of the best; 0 disables"},
            "gates": {"type": "boolean", "default": True,
                      "description": "false: no relevance gate at all, the best-ranked come back (for browsing)"},
            "intent": {"type": "boolean", "default": True,
                       "description": "false: ignore kind / status / time words (todo, decisions, this week); "
                                      "default: setting recall.intent"},
            "namespace": _NS,
        }, ("query",)),
        output_schema=_out({"query": _STR, "namespaces": _STR_LIST, "results": {"type": "array", "items": _HIT},
                            "candidates": _INT, "relevant_from": _NUM, "note": _STR, "omitted": _STR_LIST, "intent": {"type": "object"}},
                           ("results",)),
        annotations=_annotations(True, False, True),
        call=_call_recall, render=_recall_text, fit=fit_recall,
    ),
    Tool(
        name="memory_get",
        summary="full text, links and version state of memories by id",
        title="Get memories",
        description=("Use when a recall or list line is not enough and you need the full text, tags, links and "
                     "version state of specific memories by id. A body too long for one response comes in parts: "
                     "the note names the call for the next part (one id with `offset`)." + _IDS_READ),
        input_schema=_obj({"ids": _IDS, "offset": {
            "type": "integer", "minimum": 0,
            "description": "with one id: return its body from this character on (a cut body's note names the "
                           "offset of the next part)"}, "namespace": _NS}, ("ids",)),
        output_schema=_out({"memories": {"type": "array", "items": _MEMORY}, "missing": _STR_LIST,
                            "forgotten": _STR_LIST, "namespaces": _STR_LIST, "note": _STR},
                           ("memories", "missing")),
        annotations=_annotations(True, False, True),
        call=_call_get, render=_get_text, fit=fit_bodies("memories", _get_text),
    ),
    Tool(
        name="memory_list",
        summary="browse titles by kind, tag, status or date, with paging",
        title="List memories",
        description=("Use to browse or audit what is stored (e.g. all open tasks, all decisions, what changed "
                     "this week): a cheap index of titles and summaries, newest first, with paging; records under "
                     "`memories`, as in memory_get."),
        input_schema=_obj({
            "kinds": _KINDS, "tags": _TAGS,
            "status": {"type": "string", "enum": list(TASK_STATUSES), "description": "task status"},
            "since": {**_WHEN, "description": "updated since"}, "until": {**_WHEN, "description": "created until"},
            "pinned": {**_BOOL, "description": "only pinned rules (true) or only unpinned memories (false)"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50, "description": "page size"},
            "offset": {"type": "integer", "minimum": 0, "maximum": 10**9, "default": 0, "description": "page offset"},
            "order": {"type": "string", "enum": ["recent", "importance"], "default": "recent"},
            "namespace": _NS,
        }),
        output_schema=_out({"memories": {"type": "array", "items": _MEMORY, "description": "the page's records"},
                            "total": _INT, "limit": _INT, "offset": _INT, "truncated": _BOOL, "note": _STR},
                           ("memories", "total")),
        annotations=_annotations(True, False, True),
        call=_call_list, render=_view(render_list, commands=MCP_COMMANDS), fit=fit_list,
    ),
    Tool(
        name="memory_update",
        summary="revise a memory (new version, history kept); close tasks",
        title="Update a memory",
        description=("Use when a stored fact changed or was incomplete: writes a new version that supersedes the "
                     "old one (history kept). Prefer this over storing a contradicting duplicate. Also closes "
                     "tasks (status done/dropped) and pins or unpins." + _IDS_WRITE),
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
        call=_call_update, render=_view(render_update),
    ),
    Tool(
        name="memory_history",
        summary="every version of a memory, oldest first",
        title="Version history",
        description=("Use to see how a memory evolved: every version of its chain, oldest first, with the time "
                     "each one was current, who wrote it, what changed (e.g. a task's status open → done), and any "
                     "secret redacted from a version in place." + _IDS_FAIL + "."),
        input_schema=_obj({"id": _ID, "namespace": _NS}, ("id",)),
        output_schema=_out({"id": _STR, "current": _STR, "versions": {"type": "array", "items": _MEMORY},
                            "redactions": {"type": "array", "items": {"type": "object"}},
                            "links": {"type": "array", "items": {"type": "object"}}, "note": _STR},
                           ("id", "versions")),
        annotations=_annotations(True, False, True),
        call=_call_history, render=_view(render_history), fit=fit_bodies("versions", render_history),
    ),
    Tool(
        name="memory_forget",
        summary="soft-delete wrong or obsolete memories (`hard`: permanent)",
        title="Forget memories",
        description=("Use when a memory is wrong, obsolete or was stored by mistake. Soft delete by default "
                     "(memory_restore undoes it); hard=true deletes permanently with its history." + _IDS_WRITE),
        input_schema=_obj({"ids": _IDS, "hard": {"type": "boolean", "default": False,
                                                 "description": "permanent, with history"}, "namespace": _NS},
                          ("ids",)),
        output_schema=_out({"forgotten": _STR_LIST, "hard": _BOOL}, ("forgotten", "hard")),
        annotations=_annotations(False, True, True),
        call=_call_forget, render=_view(render_forget, commands=MCP_COMMANDS),
    ),
    Tool(
        name="memory_restore",
        summary="undo a forget or an archive sweep",
        title="Restore memories",
        description="Use to undo memory_forget (soft deletes) or an archive sweep." + _IDS_WRITE,
        input_schema=_obj({"ids": _IDS, "namespace": _NS}, ("ids",)),
        output_schema=_out({"restored": _STR_LIST}, ("restored",)),
        annotations=_annotations(False, False, True),
        call=_call_restore, render=_view(render_restore),
    ),
    Tool(
        name="memory_link",
        summary="relate two memories: " + ", ".join(RELATIONS),
        title="Link memories",
        description=("Use when two memories are related in a way worth keeping: one refines, contradicts, "
                     "depends on or supersedes the other; `remove: true` takes a wrong link back." + _IDS_WRITE),
        input_schema=_obj({"src": _ID, "dst": _ID,
                           "relation": {"type": "string", "enum": list(RELATIONS), "default": "related"},
                           "weight": {"type": "number", "minimum": 0, "maximum": 100, "default": 1},
                           "remove": {"type": "boolean", "default": False,
                                      "description": "remove the link instead (without relation: every one)"},
                           "namespace": _NS}, ("src", "dst")),
        output_schema=_out({"src": _STR, "dst": _STR, "relation": _STR, "weight": _NUM, "removed": _STR_LIST,
                            "status": {"type": "string", "enum": ["created", "updated", "unchanged"]}},
                           ("src", "dst")),
        annotations=_annotations(False, False, True),
        call=_call_link, render=_view(_render_link),
    ),
    Tool(
        name="memory_merge",
        summary="fold a duplicate into the memory to keep (explicit; history kept)",
        title="Merge two memories",
        description=("Use when two memories say the same thing (e.g. a near-duplicate hint from memory_remember): "
                     "closes OTHER into KEEP as a new version of KEEP — tags unioned, links moved, both texts kept "
                     "in history. Never merge memories that disagree; link them as contradicts instead."
                     + _IDS_WRITE),
        input_schema=_obj({"keep": _ID, "other": _ID,
                           "content": {"type": "string", "minLength": 1,
                                       "maxLength": DEFAULTS["store"]["max_content_chars"],
                                       "description": "text of the merged version (default: KEEP's text)"},
                           "namespace": _NS}, ("keep", "other")),
        output_schema=_out({"id": _STR, "kept": _STR, "merged": _STR}, ("id", "kept", "merged")),
        annotations=_annotations(False, False, False),
        call=_call_merge, render=_view(render_merge),
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
        call=_call_stats, render=_view(render_stats, commands=MCP_COMMANDS),
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
                                          "description": "only these namespaces (default: the session's project and global; '*': all)"}}, ("path",)),
        output_schema=_out({"path": _STR, "memories": _INT,
                            "namespaces": {"type": "object", "additionalProperties": _INT,
                                           "description": "memories written per namespace"}}, ("path",)),
        annotations=_annotations(False, True, True),
        call=_call_export, render=_view(render_export),
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
        call=_call_guide, render=_text, needs_store=False,
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
