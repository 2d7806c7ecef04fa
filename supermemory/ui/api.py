"""The page's JSON endpoints: each request calls one `MemoryStore` method and returns its plain data.

`GET` holds the reads (they never change the store: searches pass `touch=False` and the page's
origin, so they count as no recall and stay out of the search figures), `POST` the writes. Each
handler takes the store and the request's parameters (a dict of strings for a GET, the JSON object
of a POST) and returns a JSON-ready dict; a bad parameter raises `InvalidInputError`.
"""
from __future__ import annotations

from typing import Any, Callable

from supermemory.config import ALL_NAMESPACES, KINDS, RELATIONS, TASK_STATUSES
from supermemory.errors import InvalidInputError
from supermemory.render import repeated
from supermemory.store.search_log import UI_ORIGIN
from supermemory.ui.diff import changes

Handler = Callable[[Any, dict], dict]
GET: dict[str, Handler] = {}
POST: dict[str, Handler] = {}
BY_UI = {"by": UI_ORIGIN}   # a version written here says so in `history` ("by ui"), as the CLI's say "by cli"


def _route(table: dict[str, Handler], path: str):
    def register(fn: Handler) -> Handler:
        table[path] = fn
        return fn
    return register


# --- reading parameters ---------------------------------------------------------------------------

def _text(params: dict, name: str, *, required: bool = False) -> str | None:
    value = params.get(name)
    if isinstance(value, list):
        value = value[-1] if value else None
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InvalidInputError(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string")
    return value.strip()


def _texts(params: dict, name: str) -> list[str]:
    value = params.get(name)
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, str) for v in values):
        raise InvalidInputError(f"{name} must be a list of strings")
    return [v.strip() for v in values if v.strip()]


def _last(params: dict, name: str):
    """A query parameter's value (the last one when repeated); None when absent or empty."""
    value = params.get(name)
    if isinstance(value, list):
        value = value[-1] if value else None
    return None if value is None or value == "" else value


def _parsed(params: dict, name: str, cast, what: str):
    """`cast(value)` of a parameter, or a clear error naming it; None when absent (never a bool)."""
    value = _last(params, name)
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidInputError(f"{name} must be {what}")
    try:
        return cast(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} must be {what}, got {value!r}") from None


def _integer(params: dict, name: str, default: int | None = None) -> int | None:
    value = _parsed(params, name, int, "an integer")
    return default if value is None else value


def _number(params: dict, name: str) -> float | None:
    return _parsed(params, name, float, "a number")


def _flag(params: dict, name: str) -> bool | None:
    value = _last(params, name)
    if value is None or isinstance(value, bool):
        return value
    if str(value).lower() in ("1", "true", "yes", "on"):
        return True
    if str(value).lower() in ("0", "false", "no", "off"):
        return False
    raise InvalidInputError(f"{name} must be true or false, got {value!r}")


def _namespace(params: dict) -> str:
    return _text(params, "namespace") or ALL_NAMESPACES


# --- reads ----------------------------------------------------------------------------------------

@_route(GET, "/api/meta")
def meta(store, params: dict) -> dict:
    """What the filters offer: namespaces holding memories, kinds, task statuses, relations, and `current`, the
    namespace of the project `supermemory ui` was started in (the page opens on it, not on every project's
    memories, when it holds any)."""
    return {"namespaces": store.namespaces(), "kinds": list(KINDS), "statuses": list(TASK_STATUSES),
            "relations": list(RELATIONS), "db_path": store.path, "current": store.namespace}


@_route(GET, "/api/memories")
def memories(store, params: dict) -> dict:
    """A page of live memories, newest first (`MemoryStore.list`); `cursor` is the previous page's
    `next_cursor`. The first page (no cursor) also counts every match."""
    cursor = _text(params, "cursor")
    kind = _text(params, "kind")
    return store.list(namespace=_namespace(params), kinds=[kind] if kind else None, tags=_texts(params, "tag") or None,
                      status=_text(params, "status"), since=_text(params, "since"), until=_text(params, "until"),
                      pinned=_flag(params, "pinned"), limit=_integer(params, "limit", 50), cursor=cursor,
                      count=cursor is None)


@_route(GET, "/api/search")
def search(store, params: dict) -> dict:
    """`MemoryStore.recall` with explanations: per-feature numbers, the gate's reason when nothing
    came back, the dropped candidates when `dropped` is set; without bodies (the page opens a memory for
    its text). Not counted as a recall."""
    kind = _text(params, "kind")
    found = store.recall(_text(params, "q", required=True), namespace=_namespace(params),
                         limit=_integer(params, "limit"), kinds=[kind] if kind else None, explain=True,
                         explain_all=bool(_flag(params, "dropped")), touch=False, origin=UI_ORIGIN)
    for hit in found["results"]:
        hit.pop("body", None)   # the page shows title and summary; a 1 MB memory made the answer 1 MB
    return found


@_route(GET, "/api/memory")
def memory(store, params: dict) -> dict:
    """One memory (any state): the version asked for, its chain oldest first with what changed at
    each step, its links (with the linked titles) and the in-place redactions. Each text travels once:
    the asked version's entry in `versions` has no `body` (it is `memory.body`), and diffs leave out
    long unchanged stretches (`diff.elide`)."""
    history = store.history(_text(params, "id", required=True), namespace=ALL_NAMESPACES)
    versions = history["versions"]
    asked = next(v for v in versions if v["id"] == history["id"])
    current = next((v for v in versions if v["id"] == history["current"]), asked)
    previous = None
    for version in versions:
        if version.get("merged_into"):
            version["changes"] = []      # another chain closed into this one: nothing to compare with
            continue
        version["changes"] = changes(previous, version)
        previous = version
    links = []
    if current["deleted_at"] is None:
        found = store.get(current["id"], namespace=ALL_NAMESPACES)["memories"]
        links = found[0]["links"] if found else []
        others = sorted({end for link in links for end in (link["src"], link["dst"]) if end != current["id"]})
        titles = {m["id"]: m["title"] for m in store.get(others[:100], namespace=ALL_NAMESPACES)["memories"]} \
            if others else {}
        for link in links:
            other = link["dst"] if link["src"] == current["id"] else link["src"]
            link.update(other=other, other_title=titles.get(other), outgoing=link["src"] == current["id"])
    versions = [{k: v for k, v in version.items() if k != "body"} if version is asked else version
                for version in versions]
    return {"memory": asked, "current": current["id"], "is_current": asked["id"] == current["id"],
            "forgotten": current["deleted_at"] is not None, "versions": versions, "links": links,
            "redactions": history["redactions"]}


@_route(GET, "/api/graph")
def graph(store, params: dict) -> dict:
    """Nodes and typed edges (`MemoryStore.graph`): every live link, or the neighbourhood of `id`."""
    return store.graph(id=_text(params, "id"), depth=_integer(params, "depth", 2), namespace=_namespace(params),
                       limit=_integer(params, "limit", 500))


@_route(GET, "/api/health")
def health(store, params: dict) -> dict:
    """`MemoryStore.health` (near-duplicates, contradicts links, expired, stale), the agents' recall
    figures from `stats` (the page's own searches left out; the failed queries as `render.repeated` gives
    them: cut short, each once with how many times) and `growth` for the chart."""
    namespace = _namespace(params)
    stats = store.stats(namespace=namespace)
    searches = stats["searches"]
    recall = {"searches": searches, "latency_ms_p50": stats["latency_ms_p50"],
              "latency_ms_p95": stats["latency_ms_p95"], "mean_hits": stats["mean_hits"],
              "hit_rate": round(1 - stats["empty_result_rate"], 4) if searches else None,
              "recent_empty_queries": [{"query": query, "times": times}   # shown short, each once
                                       for query, times in repeated(stats["recent_empty_queries"])]}
    counts = {key: stats[key] for key in ("memories", "by_kind", "by_namespace", "versions_superseded", "deleted",
                                          "db_bytes", "db_path", "driver", "vector_index", "embedder")}
    return {"health": store.health(namespace=namespace), "recall": recall, "counts": counts,
            "growth": store.growth(namespace=namespace, bucket_days=_number(params, "bucket_days") or 7,
                                   buckets=_integer(params, "buckets", 12))}


def _sweep_args(params: dict) -> dict:
    return {"namespace": _namespace(params), "stale_days": _number(params, "stale_days"),
            "importance_floor": _number(params, "importance_floor")}


@_route(GET, "/api/sweep")
def sweep_preview(store, params: dict) -> dict:
    """The dry run of `forget --sweep`: what applying it would archive (stale AND unimportant)."""
    return store.sweep(apply=False, sample=_integer(params, "sample", 50), **_sweep_args(params))


# --- writes ---------------------------------------------------------------------------------------

@_route(POST, "/api/sweep")
def sweep_apply(store, params: dict) -> dict:
    """Archive what the dry run listed (`MemoryStore.sweep(apply=True)`); restore brings any back."""
    return store.sweep(apply=True, sample=_integer(params, "sample", 50), **_sweep_args(params))


@_route(POST, "/api/update")
def update(store, params: dict) -> dict:
    """Edit a memory: a new version supersedes it (`MemoryStore.update`; redaction applies)."""
    fields: dict = {}
    for name in ("content", "title", "kind"):
        if params.get(name) is not None:
            fields[name] = params[name]
    if params.get("tags") is not None:
        fields["tags"] = params["tags"]
    importance = _number(params, "importance")
    if importance is not None:
        fields["importance"] = importance
    if not fields:
        raise InvalidInputError("nothing to change: give content, title, kind, tags or importance")
    return store.update(_text(params, "id", required=True), namespace=ALL_NAMESPACES, source=BY_UI, **fields)


@_route(POST, "/api/pin")
def pin(store, params: dict) -> dict:
    """Pin or unpin (`MemoryStore.update(pinned=...)`: a new version)."""
    pinned = _flag(params, "pinned")
    if pinned is None:
        raise InvalidInputError("pinned is required (true or false)")
    return store.update(_text(params, "id", required=True), pinned=pinned, namespace=ALL_NAMESPACES, source=BY_UI)


@_route(POST, "/api/status")
def status(store, params: dict) -> dict:
    """Set a task's status (`MemoryStore.update(status=...)`: a new version)."""
    return store.update(_text(params, "id", required=True), status=_text(params, "status", required=True),
                        namespace=ALL_NAMESPACES, source=BY_UI)


@_route(POST, "/api/forget")
def forget(store, params: dict) -> dict:
    """Soft-delete (`MemoryStore.forget`); restore brings it back."""
    return store.forget(_text(params, "id", required=True), namespace=ALL_NAMESPACES, by=UI_ORIGIN)


@_route(POST, "/api/restore")
def restore(store, params: dict) -> dict:
    """Bring a forgotten or archived memory back (`MemoryStore.restore`)."""
    return store.restore(_text(params, "id", required=True), namespace=ALL_NAMESPACES, by=UI_ORIGIN)
