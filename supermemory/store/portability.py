"""Moving a store: JSONL export and import (ids, times, history, links and link removals kept) and re-embedding."""
from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any, Callable, Sequence

from supermemory.config import ALL_NAMESPACES, RELATIONS, TASK_STATUSES, looks_like_path, normalize_namespace
from supermemory.errors import EmbeddingUnavailableError, InvalidInputError, StorageError
from supermemory.jsonl import read_jsonl
from supermemory.store import db as dbm
from supermemory.store import embedding, search_index, windows, writes
from supermemory.store import namespaces as nsm
from supermemory.store import records as rec_
from supermemory.store.context import StoreContext
from supermemory.store.records import SELECT_COLUMNS, SELECT_M_COLUMNS, embed_text, format_id, parse_id, record, to_blob
from supermemory.text import summarize
from supermemory.timeparse import from_iso, iso

logger = logging.getLogger(__name__)

EXPORT_FIELDS = ("id", "namespace", "kind", "title", "body", "tags", "source", "importance", "confidence",
                 "pinned", "status", "ttl_days", "expires_at", "created_at", "updated_at", "last_recalled_at",
                 "recall_count", "valid_from", "valid_to", "deleted_at", "delete_reason", "external_key",
                 "superseded_by", "root_id")
TIME_FIELDS = ("expires_at", "created_at", "updated_at", "last_recalled_at", "valid_from", "valid_to",
               "deleted_at")


def _export_record(rec: dict) -> dict:
    out = {}
    for key in EXPORT_FIELDS:
        value = rec[key]
        if key in TIME_FIELDS:
            value = iso(value, exact=True)
        elif key in ("tags", "source"):
            value = json.loads(value or ("[]" if key == "tags" else "{}"))
        elif key in ("id", "superseded_by", "root_id"):
            value = format_id(value) if value else None
        elif key == "pinned":
            value = bool(value)
        out[key] = value
    return out


def export(ctx: StoreContext, path: str | os.PathLike, *, namespaces: Sequence[str] | None = None) -> dict:
    """Write JSONL so that an import gives the store back: one line per head (a current or forgotten memory), its
    `history` every version behind it (its older versions and the memories merged into it, with their state),
    its `links` every link from any of them, and `unlinked` (only when there are any) the links the user removed from
    any of them (`unlink`: the pair, relation and `removed_at`), so that the store it is imported into never writes
    them again; no vectors.

    :param namespaces: only these namespaces (default: the current project's and `global`, as every read; one of
        them `*`: all). An agent working in one project must not write another's memories into a file by
        default (fresh-user run fu30 D2).
    :returns: `path`, `memories` (lines written) and `namespaces` (memories per namespace: what the file holds).
    Raises:
        InvalidInputError: the file cannot be written (a folder, a folder that does not exist: export creates
            none, no permission, disk full); no partial file is left behind.
        NamespaceError: a named namespace never held a memory (a typo, named with the near ones).
    """
    ns_list = [nsm.named(ctx, n, allow_all=True) for n in namespaces] if namespaces else nsm.for_read(ctx, None)
    if ns_list is not None and ALL_NAMESPACES in ns_list:
        ns_list = None
    for ns in ns_list or ():
        nsm.for_read(ctx, ns, must_exist=True)   # refuses a namespace nothing was ever stored in
    ns_sql, ns_params = nsm.clause(ns_list)
    heads = ctx.q(f"SELECT {SELECT_M_COLUMNS} FROM memories m WHERE m.superseded_by IS NULL AND {ns_sql} "
                  f"ORDER BY m.id", ns_params)
    target = Path(path)
    if target.is_dir():
        raise InvalidInputError(f"cannot write {target}: it is a folder; give a file name")
    folder = target.parent
    if not folder.is_dir():   # export creates no folder: a typo must not leave new folders behind (as root, too)
        problem = (f"Not a directory: {folder} is a file" if folder.exists() else
                   f"No such file or directory: the folder {folder} does not exist")
        raise InvalidInputError(f"cannot write {target}: {problem} (export creates no folders; create it first "
                                f"or name a file in an existing one)")
    # Written 0600 from the first byte (it holds every memory) and never left behind on failure.
    tmp = target.with_name(target.name + ".part")
    count, created = 0, False
    per_namespace: dict[str, int] = {}
    behind = _rows_behind_heads(ctx)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)   # a stale one from a crash, with whatever mode it had
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        created = True
        with open(fd, "w", encoding="utf-8") as handle:
            for row in heads:
                rec = record(row)
                line = _export_record(rec)
                older = json.dumps(behind.get(rec["id"], []))
                line["history"] = [_export_record(record(r)) for r in ctx.q(
                    f"SELECT {SELECT_COLUMNS} FROM memories WHERE id IN (SELECT value FROM json_each(?)) "
                    f"ORDER BY valid_from, id", (older,))]
                line["links"] = [_export_link(rec["id"], *link) for link in ctx.q(
                    "SELECT src, dst, relation, weight, created_at FROM links WHERE src = ? OR src IN "
                    "(SELECT value FROM json_each(?)) ORDER BY src != ?, src, dst, relation",
                    (rec["id"], older, rec["id"]))]
                unlinked = [_export_link(rec["id"], src, dst, relation, None, at) for src, dst, relation, at in ctx.q(
                    "SELECT src, dst, relation, removed_at FROM link_removals WHERE src = ? OR src IN "
                    "(SELECT value FROM json_each(?)) ORDER BY src != ?, src, dst, relation",
                    (rec["id"], older, rec["id"]))]
                if unlinked:
                    line["unlinked"] = unlinked
                handle.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
                count += 1
                per_namespace[rec["namespace"]] = per_namespace.get(rec["namespace"], 0) + 1
        os.replace(tmp, target)
        created = False
    except OSError as exc:
        raise InvalidInputError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        if created:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    with contextlib.suppress(OSError):
        os.chmod(target, 0o600)
    return {"path": str(target), "memories": count, "namespaces": dict(sorted(per_namespace.items()))}


def _rows_behind_heads(ctx: StoreContext) -> dict[int, list[int]]:
    """Every superseded row under the head its successors lead to, so that one export line holds every version
    `history` shows: the head's own older versions and the memories merged into it (another chain, closed into
    this one: its root is not the head's), with their older versions. A row whose successors end at a row that
    no longer exists, or go round in a circle, belongs to no head and is left out, as it was before."""
    successor = dict(ctx.q("SELECT id, superseded_by FROM memories"))
    head_of: dict[int, int | None] = {}
    behind: dict[int, list[int]] = {}
    for start in successor:
        path, on_path, node = [], set(), start
        while node not in head_of:
            if node not in successor or node in on_path:   # a dangling successor, or a circle
                top = None
                break
            if successor[node] is None:
                top = node
                break
            path.append(node)
            on_path.add(node)
            node = successor[node]
        else:
            top = head_of[node]
        for node in path:
            head_of[node] = top
            if top is not None:
                behind.setdefault(top, []).append(node)
        if top is not None:
            head_of[top] = top
    return behind


def _export_link(head: int, src: int, dst: int, relation: str, weight: float | None, at: float) -> dict:
    """One link of an export line (weight None: one the user removed, `at` its `removed_at`); `src` is written only
    when it is not the line's head (an older or merged version of it), so a line's own links read as they always
    have."""
    out = ({"dst": format_id(dst), "relation": relation, "weight": weight, "created_at": iso(at, exact=True)}
           if weight is not None else {"dst": format_id(dst), "relation": relation, "removed_at": iso(at, exact=True)})
    if src != head:
        out["src"] = format_id(src)
    return out


def _same_memory(row: dict | None, v: dict) -> bool:
    """Whether a stored row is this exported version: same namespace and content (a match on less, e.g. the
    creation second, could take another store's memory for this one and drop it)."""
    return row is not None and row["namespace"] == v["namespace"] and row["content_hash"] == _hash(v)


def _hash(v: dict) -> str:
    return rec_.content_hash(v["kind"], v["title"], v["body"])


def _present_elsewhere(ctx: StoreContext, v: dict, line_ids: Sequence[int]) -> bool:
    """Whether an earlier import stored this version under another id (same content, namespace, kind, second).

    The line's own older versions do not count: a merge or a status change keeps the text and the creation
    time, so the new head reads like the version before it, which an earlier import stored under its own id."""
    if v["created_at"] is None:
        return False
    return bool(ctx.q("SELECT 1 FROM memories WHERE namespace = ? AND kind = ? AND content_hash = ? "
                      "AND CAST(created_at AS INTEGER) = ? AND id NOT IN (SELECT value FROM json_each(?)) LIMIT 1",
                      (v["namespace"], v["kind"], _hash(v), int(v["created_at"]), json.dumps(list(line_ids)))))


def import_file(ctx: StoreContext, path: str | os.PathLike, *,
                progress: Callable[[int, int], None] | None = None) -> dict:
    """Import a JSONL export: ids and timestamps preserved, re-embedded. A memory already here (the same
    namespace and content under its id, or imported before under another id) is skipped; newer versions of
    one imported before continue its chain; a memory whose ids this store uses for other memories (a store
    used on its own first) comes in under new ids, with its history and links, listed in `renumbered`.

    Every version's body, title and tags are redacted as `remember` redacts them (`writes.prepare_content`,
    `writes.prepare_tags`) before anything is compared, hashed, embedded or stored, and so is every other text
    it stores (each string of `source`, keys too; `external_key`, `delete_reason`): a file written by hand or
    by an older store may hold secrets.

    :returns: {"imported", "skipped", "lines", "links_dropped": [{src, dst, relation, why}] (only when some are: links
        to a memory this store does not hold, or of another namespace: `link` joins one namespace's memories only),
        "renumbered": {old id: new id} (every version of a chain one of whose
        ids was taken), "taken": {old id: why} (the ids that made it: "other" another memory here holds it,
        "revised" this memory holds it here and was revised since, "file" an earlier line of the file uses it),
        "redacted": {type: count} (the secrets taken out of the versions stored)}.
    Raises:
        InvalidInputError: a line is not a valid export record, or its body is empty once `<private>` spans are
            removed (nothing is written then).
    """
    lines = read_jsonl(path)
    todo, skipped, present = [], 0, []
    claimed: set[int] = set()     # ids the lines before this one will write
    why_taken: dict[int, str] = {}  # the ids that sent a chain to new ones, and why (the import message names them)
    limit = int(ctx.config.get("store.max_content_chars"))
    for number, line in enumerate(lines, 1):
        if not isinstance(line, dict) or "id" not in line or "body" not in line:
            raise InvalidInputError(f"{path}:{number}: not a supermemory export record")
        try:
            history = line.get("history") or []
            if not isinstance(history, list):
                raise InvalidInputError("history must be a list of versions")
            versions = [_redacted_version(ctx, _checked_version(v, limit)) for v in [*history, line]]
            links = _checked_links(line.get("links"))
            unlinked = _checked_links(line.get("unlinked"), removed=True)
            ids = {v["id"] for v in versions}
            if versions[-1]["superseded_by"] is not None:
                raise InvalidInputError(
                    f"superseded_by: the line's memory is a current (or forgotten) one, superseded by nothing "
                    f"(got {format_id(versions[-1]['superseded_by'])}); the versions it replaced go in its history")
            dangling = [v for v in versions if v["superseded_by"] is not None and v["superseded_by"] not in ids]
            if dangling:
                raise InvalidInputError(
                    f"history: {format_id(dangling[0]['id'])} is superseded by "
                    f"{format_id(dangling[0]['superseded_by'])}, which is not a version of this line")
            stray = [src for src, *_ in links + unlinked if src is not None and src not in ids]
            if stray:
                raise InvalidInputError(f"links: src {format_id(stray[0])} is not a version of this line "
                                        f"(a link's src is the line's memory or one of its history)")
        except InvalidInputError as exc:
            raise InvalidInputError(f"{path}:{number}: {exc}") from None
        rows = {v["id"]: ctx.fetch(v["id"]) for v in versions}
        head = versions[-1]
        if _same_memory(rows[head["id"]], head):    # here already, under its own id: its links still come in
            skipped += 1                            # (fresh-user run fu31 N3: a link to a memory added since)
            present.append((versions, links, unlinked))
            continue
        if _present_elsewhere(ctx, head, list(rows)):
            skipped += 1
            continue
        taken = [v for v in versions if rows[v["id"]] is not None or v["id"] in claimed]
        if all(v["id"] not in claimed and _same_memory(rows[v["id"]], v)
               and rows[v["id"]]["superseded_by"] in (None, v["superseded_by"]) for v in taken):
            # new versions of a memory imported before (and not revised here since): the chain goes on
            versions = [{**v, "present": rows[v["id"]] is not None} for v in versions]
            claimed.update(v["id"] for v in versions)
        else:
            # Its ids hold other memories here: the chain moves to new ids, but for the older versions this store
            # holds already, live and alike, which the new ones continue (fu38 D4: a merge made elsewhere came back
            # as second live copies of the two memories it merged).
            kept = {v["id"] for v in versions[:-1] if v["id"] not in claimed and _same_memory(rows[v["id"]], v)
                    and rows[v["id"]]["superseded_by"] is None and rows[v["id"]]["deleted_at"] is None}
            versions = [{**v, "present": True, "continued": True} if v["id"] in kept else {**v, "new_id": True}
                        for v in versions]
            claimed.update(kept)
            for v in taken:   # the whole chain moves with them (root and successor ids stay one chain's)
                if v["id"] in kept:
                    continue
                if v["id"] in claimed:
                    why_taken[v["id"]] = "file"
                elif not _same_memory(rows[v["id"]], v):
                    why_taken[v["id"]] = "other"
                elif rows[v["id"]]["superseded_by"] not in (None, v["superseded_by"]):
                    why_taken[v["id"]] = "revised"
        todo.append((versions, links, unlinked))
    todo.sort(key=lambda item: bool(item[0][-1].get("new_id")))   # kept ids first, then the next free ones
    texts, slots = [], []
    redacted: dict[str, int] = {}
    for c, (versions, *_) in enumerate(todo):
        for n, version in enumerate(versions):
            if version.get("present"):
                continue
            for kind, count in version["redacted"].items():
                redacted[kind] = redacted.get(kind, 0) + count
            pieces = writes.chunk_body(ctx, version["body"])
            slots.append(((c, n), pieces))
            texts.extend(embed_text(version["title"], p) for p in pieces)
    try:
        matrix = embedding.embedder(ctx).embed_multi(texts, progress=progress) if texts else None
    except EmbeddingUnavailableError as exc:
        logger.warning("importing without vectors: %s", exc)
        matrix = None
    vec_of, offset = {}, 0
    for slot, pieces in slots:
        vec_of[slot] = (pieces, matrix[offset:offset + len(pieces)] if matrix is not None else None)
        offset += len(pieces)
    renumbered: dict[int, int] = {}
    with ctx.txn():
        _claimed_meanwhile(ctx, todo, why_taken)
        for c in sorted(range(len(todo)), key=lambda c: bool(todo[c][0][-1].get("new_id"))):   # kept ids first
            versions = todo[c][0]
            fresh = {}
            for n, version in enumerate(versions):
                if version.get("present"):   # stored already: only its successor and end are the export's
                    if not version.get("continued"):   # (one a moved chain continues: once its new ids are known)
                        _continue_version(ctx, version)
                    continue
                pieces, vectors = vec_of[c, n]
                fresh[version["id"]] = _insert_exported(ctx, version, pieces, vectors)
            if versions[-1].get("new_id"):   # root and successor ids point at the new rows
                renumbered.update(fresh)
                for version in versions:
                    if version.get("continued"):
                        _continue_version(ctx, {**version, "superseded_by": fresh.get(version["superseded_by"],
                                                                                      version["superseded_by"])})
                        continue
                    ctx.conn.execute("UPDATE memories SET root_id = ?, superseded_by = ? WHERE id = ?",
                                     (fresh.get(version["root_id"], version["root_id"]),
                                      fresh.get(version["superseded_by"], version["superseded_by"]),
                                      fresh[version["id"]]))
            head = fresh.get(versions[-1]["id"], versions[-1]["id"])
            if ctx.fetch(head)["deleted_at"] is None:
                search_index.index_live(ctx, head)
        dropped = []    # links the store cannot keep, said in the answer (fresh-user run fu30 D7)
        for versions, links, unlinked in todo + present:
            for table, rows in (("links(src, dst, relation, weight, created_at)", links),
                                ("link_removals(src, dst, relation, removed_at)", unlinked)):
                for src, dst, relation, *rest, at in rows:
                    src = versions[-1]["id"] if src is None else src
                    src, dst = renumbered.get(src, src), renumbered.get(dst, dst)
                    target = ctx.fetch(dst)
                    why = ("no such memory here" if target is None else "another namespace"
                           if target["namespace"] != ctx.fetch(src)["namespace"] else None)
                    if why is None:
                        ctx.conn.execute(f"INSERT OR IGNORE INTO {table} VALUES ({','.join('?' * (4 + len(rest)))})",
                                         (src, dst, relation, *rest, at or ctx.clock()))
                    elif table.startswith("links("):
                        dropped.append({"src": format_id(src), "dst": format_id(dst), "relation": relation,
                                        "why": why})
    return {"imported": len(todo), "skipped": skipped, "lines": len(lines),
            **({"links_dropped": dropped} if dropped else {}),
            "renumbered": {format_id(old): format_id(new) for old, new in renumbered.items()},
            "taken": {format_id(i): why for i, why in sorted(why_taken.items())}, "redacted": redacted}


def _claimed_meanwhile(ctx: StoreContext, todo: list, why_taken: dict[int, str]) -> None:
    """Inside the import's write transaction: a chain planned under its own ids whose ids another process took while
    the import embedded (a `remember` from the CLI or the MCP server) comes in under new ones, as it would have had the
    id been taken before the import began (fresh-user run fu34 D1: the import failed on the UNIQUE id and lost all its
    work). A chain that continues one imported before cannot move: the import stops, nothing written, and says why."""
    for versions, *_ in todo:
        if versions[-1].get("new_id"):
            continue
        taken = [v["id"] for v in versions if not v.get("present") and ctx.fetch(v["id"]) is not None]
        if not taken:
            continue
        if any(v.get("present") for v in versions):
            raise StorageError(f"another process stored {format_id(taken[0])} while the import ran, an id the "
                               f"file's newer version of {format_id(versions[0]['id'])} needs; nothing was imported: "
                               "run the import again")
        versions[:] = [{**v, "new_id": True} for v in versions]
        why_taken.update({memory_id: "other" for memory_id in taken})


def _redacted_version(ctx: StoreContext, v: dict) -> dict:
    """A checked version with secrets and `<private>` spans out of its body, title, tags and every other text it
    stores (`source`, `external_key`, `delete_reason`), as `remember` takes them out; what was taken out is
    under "redacted".

    Raises:
        InvalidInputError: nothing is left of the body.
    """
    body, title, counts, left_out = writes.prepare_content(ctx, v["body"], v["title"])
    if not body:
        raise InvalidInputError("body is empty after removing <private> spans" + (
            " (an unclosed <private> tag leaves out everything after it)" if left_out else ""))
    if counts and v["title"] == summarize(v["body"], max_chars=writes.TITLE_CHARS):
        title = summarize(body, max_chars=writes.TITLE_CHARS)   # cut from the body: may hold half a secret
    if not (title or "").strip():   # a line without a title gets one as `remember` gives it (fu32 D8: blank lines)
        title = summarize(body, max_chars=writes.TITLE_CHARS)
    tags = writes.prepare_tags(ctx, v["tags"], counts)
    source = writes.redacted_json(ctx, v["source"], counts)
    external_key, delete_reason = (None if v[field] is None else writes._redacted(ctx, v[field], counts)
                                   for field in ("external_key", "delete_reason"))
    return {**v, "body": body, "title": title, "tags": tags, "source": source, "external_key": external_key,
            "delete_reason": delete_reason, "redacted": counts}


def _time(value: Any, field: str) -> float | None:
    try:
        return from_iso(value)
    except (TypeError, ValueError, OverflowError, OSError):
        raise InvalidInputError(f"{field}: not an ISO 8601 time: {value!r}") from None


def _optional_text(value: Any, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}")
    return value


def _checked_version(v: Any, limit: int) -> dict:
    """One exported version with every field checked and read (times as epoch seconds, ids as numbers):
    a hand-written or damaged record is an InvalidInputError naming the field, never a traceback or a
    constraint failure half-way through the write."""
    if not isinstance(v, dict):
        raise InvalidInputError("a version must be an object")
    if "body" not in v:
        raise InvalidInputError("body: required")
    kind = rec_.kind(v.get("kind", "note"))
    status = v.get("status")
    if status is not None and status not in TASK_STATUSES:
        raise InvalidInputError(f"status must be one of {', '.join(TASK_STATUSES)}")
    source = v.get("source")
    if source is not None and not isinstance(source, dict):
        raise InvalidInputError("source must be an object")
    pinned = v.get("pinned", False)
    if not isinstance(pinned, bool):
        raise InvalidInputError("pinned must be true or false")
    recall_count = v.get("recall_count") or 0
    if isinstance(recall_count, bool) or not isinstance(recall_count, int) or recall_count < 0:
        raise InvalidInputError("recall_count must be an integer of 0 or more")
    ttl = v.get("ttl_days")
    if looks_like_path(v.get("namespace")):     # "../../etc" was stored as `etc` (fresh-user run fu30 D3)
        raise InvalidInputError(f"namespace: names, not paths: {v.get('namespace')!r}")
    out = {
        "id": parse_id(v.get("id")), "namespace": normalize_namespace(v.get("namespace")), "kind": kind,
        "title": rec_.clean_text(v.get("title"), "title", max_chars=limit, allow_empty=True),
        "body": rec_.clean_text(v["body"], "body", max_chars=limit),
        "tags": rec_.str_list(v.get("tags"), "tags"), "source": dict(source or {}),
        "importance": rec_.number(v.get("importance", 0.5), "importance", 0, 1),
        "confidence": rec_.number(v.get("confidence", 1.0), "confidence", 0, 1),
        "pinned": pinned, "status": status, "recall_count": recall_count,
        "ttl_days": rec_.number(ttl, "ttl_days", 0, 36500) if ttl is not None else None,
        "external_key": _optional_text(v.get("external_key"), "external_key"),
        "delete_reason": _optional_text(v.get("delete_reason"), "delete_reason"),
        "root_id": parse_id(v["root_id"]) if v.get("root_id") else None,
        "superseded_by": parse_id(v["superseded_by"]) if v.get("superseded_by") else None,
    }
    for field in TIME_FIELDS:
        out[field] = _time(v.get(field), field)
    return out


def _checked_links(links: Any, *, removed: bool = False) -> list[tuple]:
    """An exported line's links as (src, dst, relation, weight, created_at), each checked; src None: the line's
    head (a link from one of its older or merged versions names its `src`). `removed`: its `unlinked` list, the
    links the user removed, as (src, dst, relation, removed_at)."""
    field = "unlinked" if removed else "links"
    if links is None:
        return []
    if not isinstance(links, list):
        raise InvalidInputError(f"{field} must be a list")
    out = []
    for link in links:
        if not isinstance(link, dict):
            raise InvalidInputError("a link must be an object")
        if link.get("relation") not in RELATIONS:
            raise InvalidInputError(f"{field}: relation must be one of {', '.join(RELATIONS)}")
        src = parse_id(link["src"]) if link.get("src") is not None else None
        if removed:
            out.append((src, parse_id(link.get("dst")), link["relation"],
                        _time(link.get("removed_at"), "unlinked: removed_at")))
            continue
        weight = rec_.number(link.get("weight", 1.0), "links: weight", -1e9, 1e9)
        created_at = _time(link.get("created_at"), "links: created_at")
        out.append((src, parse_id(link.get("dst")), link["relation"], weight, created_at))
    return out


def _continue_version(ctx: StoreContext, v: dict) -> None:
    """A version stored by an earlier import, superseded (or forgotten) since in the store exported: it takes
    the export's successor and end, and leaves the search index when it is no longer live."""
    was_live = ctx.fetch(v["id"])
    ctx.conn.execute("UPDATE memories SET superseded_by = ?, valid_to = ?, deleted_at = coalesce(?, deleted_at), "
                     "delete_reason = coalesce(?, delete_reason) WHERE id = ?",
                     (v["superseded_by"], v["valid_to"], v["deleted_at"], v["delete_reason"], v["id"]))
    if was_live["superseded_by"] is None and was_live["deleted_at"] is None and (
            v["superseded_by"] is not None or v["deleted_at"] is not None):
        search_index.unindex(ctx, v["id"])


def _insert_exported(ctx: StoreContext, v: dict, pieces: list[str], vectors) -> int:
    """One checked version (`_checked_version`) as a row (under its id, or the next free one when `new_id`);
    missing times are those of the import. Returns the row's id."""
    now = v["updated_at"] or ctx.clock()
    extra = {"id": None if v.get("new_id") else v["id"], "expires_at": v["expires_at"],
             "last_recalled_at": v["last_recalled_at"],
             "recall_count": v["recall_count"], "updated_at": now}
    if v["valid_from"] is not None:
        extra["valid_from"] = v["valid_from"]
    memory_id = writes.insert(
        ctx, namespace=v["namespace"], kind=v["kind"], title=v["title"], body=v["body"], tags=v["tags"],
        source=v["source"], importance=v["importance"], confidence=v["confidence"], pinned=v["pinned"],
        status=v["status"], ttl_days=v["ttl_days"], now=now, root_id=v["root_id"], external_key=v["external_key"],
        created_at=v["created_at"], content_hash=rec_.content_hash(v["kind"], v["title"], v["body"]),
        pieces=pieces, vectors=vectors, extra=extra)
    ctx.conn.execute("UPDATE memories SET superseded_by = ?, valid_to = ?, deleted_at = ?, delete_reason = ? "
                     "WHERE id = ?", (v["superseded_by"], v["valid_to"], v["deleted_at"], v["delete_reason"],
                                      memory_id))
    return memory_id


def reembed(ctx: StoreContext, *, progress: Callable[[int, int], None] | None = None) -> dict:
    """Re-embed every chunk with the configured embedder and re-pin the DB, in one transaction.

    Raises:
        EmbeddingUnavailableError: the configured embedder cannot run.
        StorageError: the database cannot be written, or its vector index rebuilt by this driver (both found
            before any chunk is embedded).
    """
    from supermemory.embed import get_provider

    provider = ctx.embedder or get_provider(ctx.config)
    if dbm.vec_table_exists(ctx.conn) and not ctx.driver.vec:   # said before minutes of embedding, not after
        raise StorageError("this SQLite driver cannot load sqlite-vec, so it cannot rebuild the "
                           "vector index; run reindex where sqlean.py is installed")
    try:   # a write that changes nothing: a read-only database fails here, before the embedding
        with ctx.txn():
            ctx.conn.execute("DELETE FROM meta WHERE key = ?", ("reembed-probe",))
    except StorageError as exc:
        raise StorageError(f"reindex needs a writable database ({exc}); nothing was changed") from exc
    rows = ctx.q("SELECT c.id, m.title, c.text FROM chunks c JOIN memories m ON m.id = c.memory_id ORDER BY c.id")
    vectors = provider.embed_multi([embed_text(title, text) for _, title, text in rows], progress=progress)
    fingerprint = provider.fingerprint()
    with ctx.txn():
        ctx.conn.execute("DELETE FROM vectors")
        windows.drop(ctx)   # another model's: filled in again with this one (`embedding.embed_missing_vectors`)
        for (chunk_id, _, _), vector in zip(rows, vectors):
            ctx.conn.execute("INSERT INTO vectors(chunk_id, embedding) VALUES (?, ?)", (chunk_id, to_blob(vector)))
        if dbm.vec_table_exists(ctx.conn):
            ctx.conn.execute("DROP TABLE vec_mem")
        if ctx.driver.vec:
            dbm.create_vec_table(ctx.conn, fingerprint["dimensions"])
            search_index.fill_vec_index(ctx)
        dbm.set_meta(ctx.conn, "embedder", json.dumps(fingerprint, sort_keys=True))
    ctx.embedder = provider
    ctx.embedder_checked = True
    ctx.matrix_cache.clear()
    embedding.embed_missing_vectors(ctx)   # the windows, with the model loaded now
    return {"chunks": len(rows), "embedder": fingerprint}
