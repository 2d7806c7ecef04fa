"""New memories: validation, redaction, chunking, embedding, exact-repeat detection, insertion."""
from __future__ import annotations

import logging
from typing import Callable, Iterable, Sequence

from supermemory.errors import EmbeddingUnavailableError, InvalidInputError
from supermemory.store import embedding, search_index, supersession, windows
from supermemory.store import namespaces as nsm
from supermemory.store import records as rec_
from supermemory.store.context import StoreContext
from supermemory.store.records import LIVE, format_id, parse_id, to_blob
from supermemory.text import chunk, summarize

logger = logging.getLogger(__name__)

TITLE_CHARS = 80   # an untitled memory's title: the first sentence of its body, this long


def chunk_body(ctx: StoreContext, body: str) -> list[str]:
    return chunk(body, max_tokens=int(ctx.config.get("store.chunk_max_tokens")),
                 overlap_tokens=int(ctx.config.get("store.chunk_overlap_tokens")))


def prepare_content(ctx: StoreContext, content: str, title: str) -> tuple[str, str, dict, int]:
    """Body and title with secrets and `<private>` spans removed, plus what was redacted and how many
    characters an unclosed `<private>` tag left out (everything after it: fail closed)."""
    from supermemory.redact import unclosed_private

    counts: dict[str, int] = {}
    body = _redacted(ctx, content, counts)
    title = _redacted(ctx, title, counts)
    left_out = unclosed_private(content) + unclosed_private(title) if counts.get("private") else 0
    return body.strip(), title.strip(), counts, left_out


def prepare_tags(ctx: StoreContext, tags: list[str], counts: dict[str, int]) -> list[str]:
    """Tags with secrets and `<private>` spans removed (a tag is stored, shown and indexed like the title);
    what was redacted is added to `counts`."""
    out: list[str] = []
    for tag in tags:
        clean = _redacted(ctx, tag, counts).strip()
        if clean and clean not in out:
            out.append(clean)
    return out


def _redacted(ctx: StoreContext, text: str, counts: dict[str, int]) -> str:
    """`text` with secrets and `<private>` spans removed (`store.redact_secrets`); what was found is added to
    `counts`."""
    from supermemory.redact import redact

    clean, found = redact(text, enabled=bool(ctx.config.get("store.redact_secrets")))
    for key, value in found.items():
        counts[key] = counts.get(key, 0) + value
    return clean


def redacted_json(ctx: StoreContext, value, counts: dict[str, int]):
    """`value` (a record's `source`: any JSON) with secrets and `<private>` spans out of every string in it, keys
    included; what was taken out is added to `counts` (remember and import alike)."""
    if isinstance(value, str):
        return _redacted(ctx, value, counts)
    if isinstance(value, dict):
        return {redacted_json(ctx, k, counts) if isinstance(k, str) else k: redacted_json(ctx, v, counts)
                for k, v in value.items()}
    if isinstance(value, list):
        return [redacted_json(ctx, v, counts) for v in value]
    return value


def insert(ctx: StoreContext, *, namespace: str, kind: str, title: str, body: str, tags: list[str], source: dict,
           importance: float, confidence: float, pinned: bool, status: str | None,
           ttl_days: float | None, now: float, root_id: int | None, external_key: str | None,
           created_at: float | None, content_hash: str, pieces: list[str], vectors,
           extra: dict | None = None) -> int:
    """One memory row with its chunks and vector BLOBs (inside a write transaction; not indexed yet)."""
    expires = now + ttl_days * 86400 if ttl_days else None
    extra = extra or {}
    cur = ctx.conn.execute(
        "INSERT INTO memories(namespace, kind, title, body, summary, tags, source, platform, importance, "
        "confidence, pinned, status, ttl_days, expires_at, created_at, updated_at, last_recalled_at, "
        "recall_count, content_hash, root_id, valid_from, external_key, id) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (namespace, kind, title, body, summarize(body) if body else summarize(title),
         rec_.json_text(tags), rec_.json_text(source, sort_keys=True),
         rec_.without_surrogates(str(source.get("platform", ""))), importance, confidence, int(pinned), status, ttl_days,
         extra.get("expires_at", expires), created_at if created_at is not None else now,
         extra.get("updated_at", now), extra.get("last_recalled_at"), extra.get("recall_count", 0),
         content_hash, root_id, extra.get("valid_from", now), external_key, extra.get("id")))
    memory_id = cur.lastrowid
    for seq, piece in enumerate(pieces):
        chunk_id = ctx.conn.execute(
            "INSERT INTO chunks(memory_id, seq, namespace, text) VALUES (?, ?, ?, ?)",
            (memory_id, seq, namespace, piece)).lastrowid
        if vectors is not None and seq < len(vectors):   # the rest: `embedding.embed_missing_vectors`
            ctx.conn.execute("INSERT INTO vectors(chunk_id, embedding) VALUES (?, ?)",
                             (chunk_id, to_blob(vectors[seq])))
    return memory_id


def _existing(ctx: StoreContext, ns: str, kind: str, digest: str) -> int | None:
    """The live memory with this namespace, kind and content hash (an exact repeat), if any."""
    rows = ctx.q(f"SELECT m.id FROM memories m WHERE m.namespace = ? AND m.kind = ? AND m.content_hash = ? "
                 f"AND {LIVE}", (ns, kind, digest))
    return rows[0][0] if rows else None


def _same_text(ctx: StoreContext, ids: list[int], kind: str, body: str) -> list[int]:
    """Those of `ids` (near duplicates) that are live memories of this kind with exactly this text: storing
    it again is no change to them (the same decision remembered twice announced a change to itself)."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return [row[0] for row in ctx.q(f"SELECT m.id FROM memories m WHERE m.id IN ({marks}) AND m.kind = ? "
                                    f"AND m.body = ? AND {LIVE}", (*ids, kind, body))]


def remember(ctx: StoreContext, content: str, *, title: str | None = None, kind: str = "note",
             tags: Sequence[str] | None = None, importance: float | None = None,
             confidence: float = 1.0, pinned: bool = False, ttl_days: float | None = None,
             namespace: str | None = None, source: dict | None = None, status: str | None = None,
             create_namespace: bool = False, external_key: str | None = None,
             progress: Callable[[int, int], None] | None = None, at: float | None = None,
             created_at: float | None = None) -> dict:
    """Store a memory (chunked, redacted, embedded); exact repeats, and the same text again without a title of
    its own, return the existing id.

    :param content: the memory text.
    :param kind: fact, decision, preference, task, gotcha, note or session.
    :param status: a task's status (open, done, dropped); default: the one its text is headed with ("Done: …",
        `records.headed_status`), else open.
    :param namespace: target namespace; one that does not exist yet needs `create_namespace`.
    :param progress: `progress(chunks embedded, chunks)` for long texts (the CLI shows it).
    :param at: when it happened (epoch seconds; default now): its `updated_at` and `valid_from`, so a
        backfilled session sorts by its own time; `created_at` defaults to it.
    :returns: {"id", "status": "created"|"duplicate", "near_duplicates", "possible_contradictions" (close
        memories one of the two negates, as `health` lists them, less those this one supersedes), "supersedes" (ids of the older
        memories this one announces a change to: `store.supersession`), "chunks", "redacted",
        "unclosed_private" (characters an unclosed `<private>` tag left out: all after it; 0 if none),
        "vectors_pending" (chunks of a long text embedded later: `embedding.embed_missing_vectors`), ...}
    Raises:
        InvalidInputError: bad arguments. NamespaceError: unknown namespace without consent.
    """
    limit = int(ctx.config.get("store.max_content_chars"))
    content = rec_.clean_text(content, "content", max_chars=limit)
    title = rec_.clean_text(title, "title", max_chars=500, allow_empty=True)
    kind = rec_.kind(kind)
    tags = rec_.str_list(tags, "tags")
    importance = rec_.number(ctx.config.get("store.default_importance") if importance is None else importance,
                             "importance", 0, 1)
    confidence = rec_.number(confidence, "confidence", 0, 1)
    if not isinstance(pinned, bool):
        raise InvalidInputError("pinned must be true or false")
    if ttl_days is not None:
        ttl_days = rec_.number(ttl_days, "ttl_days", 0, 36500) or None
    status = rec_.task_status(status, kind, "this memory is", text=content)
    if source is not None and not isinstance(source, dict):
        raise InvalidInputError("source must be an object")
    ns = nsm.for_write(ctx, namespace, create_namespace)
    body, title, redacted, left_out = prepare_content(ctx, content, title)
    tags = prepare_tags(ctx, tags, redacted)
    source = redacted_json(ctx, dict(source or {}), redacted)   # a caller's source may quote a secret too
    if not body:
        raise InvalidInputError("content is empty after removing <private> spans" + (
            " (an unclosed <private> tag leaves out everything after it; close it with </private>)"
            if left_out else ""))
    titled = bool(title)
    if not title:
        title = summarize(body, max_chars=TITLE_CHARS)
    digest = rec_.content_hash(kind, title, body)

    def duplicate(row_id: int) -> dict:
        return {"id": format_id(row_id), "status": "duplicate", "namespace": ns, "duplicate_of": format_id(row_id),
                "near_duplicates": [], "possible_contradictions": [], "supersedes": [], "chunks": 0,
                "redacted": redacted,
                "unclosed_private": left_out}

    existing = _existing(ctx, ns, kind, digest)
    if existing:
        return duplicate(existing)
    pieces = chunk_body(ctx, body)
    vectors = embedding.embed_chunks(ctx, title, pieces, progress)
    near, opposed = close_memories(ctx, vectors[0], [ns], body) if vectors is not None else ([], [])
    same = _same_text(ctx, [parse_id(n["id"]) for n in near], kind, body)
    if same and not titled:   # the same text again, under a title of its own making: a repeat
        return duplicate(same[0])
    stale = [] if kind == "session" else [
        s for s in supersession.superseded(ctx, ns, _own_text(title, body), vectors) if s["id"] not in same]
    now = rec_.number(at, "at", 0, 1e11) if at is not None else ctx.clock()
    if created_at is not None:
        created_at = min(rec_.number(created_at, "created_at", 0, 1e11), now)
    with ctx.txn():
        again = _existing(ctx, ns, kind, digest)
        if again:
            return duplicate(again)
        memory_id = insert(
            ctx, namespace=ns, kind=kind, title=title, body=body, tags=tags, source=dict(source or {}),
            importance=importance, confidence=confidence, pinned=pinned, status=status,
            ttl_days=ttl_days, now=now, root_id=None, external_key=external_key, created_at=created_at,
            content_hash=digest, pieces=pieces, vectors=vectors)
        search_index.index_live(ctx, memory_id)
        supersedes = supersession.record_links(ctx, memory_id, stale, now)
    if vectors is not None:
        windows.after_write(ctx, [memory_id], interactive=True)
    return {"id": format_id(memory_id), "status": "created", "namespace": ns, "kind": kind,
            "title": title, "near_duplicates": near, "supersedes": supersedes, "chunks": len(pieces),
            "possible_contradictions": [o for o in opposed if o["id"] not in supersedes],
            "redacted": redacted, "unclosed_private": left_out, "embedded": vectors is not None,
            "vectors_pending": len(pieces) - len(vectors) if vectors is not None else 0}


def _own_text(title: str, body: str) -> str:
    """The text a change marker is looked for in: the body, with a title of its own in front."""
    return body if body.startswith(title) else f"{title}\n{body}"


def remember_many(ctx: StoreContext, items: Iterable[dict], *, progress: Callable[[int, int], None] | None = None,
                  create_namespace: bool = False) -> list[str]:
    """Bulk remember: validate all, embed in batches, insert in one transaction; returns ids.

    Exact repeats (also within the batch) map to the existing id. No near-duplicate hints; `supersedes`
    links are written as `remember` writes them (each memory against the ones stored before it).
    Raises:
        InvalidInputError: any item is invalid (nothing is written then).
    """
    limit = int(ctx.config.get("store.max_content_chars"))
    prepared = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise InvalidInputError(f"item {index} must be an object")
        content = rec_.clean_text(item.get("content"), f"item {index} content", max_chars=limit)
        kind = rec_.kind(item.get("kind") or "note")
        body, title, _, _ = prepare_content(ctx, content, rec_.clean_text(item.get("title"), "title", max_chars=500,
                                                                       allow_empty=True))
        if not body:
            raise InvalidInputError(f"item {index} is empty after redaction")
        title = title or summarize(body, max_chars=TITLE_CHARS)
        ns = nsm.for_write(ctx, item.get("namespace"), create_namespace)
        importance = item.get("importance")
        importance = rec_.number(ctx.config.get("store.default_importance") if importance is None
                                 else importance, "importance", 0, 1)
        pieces = chunk_body(ctx, body)
        status = rec_.task_status(item.get("status"), kind, f"item {index} is", field=f"item {index} status",
                                  text=body)
        prepared.append({"ns": ns, "kind": kind, "title": title, "body": body, "status": status,
                         "tags": prepare_tags(ctx, rec_.str_list(item.get("tags"), "tags"), {}),
                         "importance": importance,
                         "pinned": bool(item.get("pinned", False)), "pieces": pieces,
                         "hash": rec_.content_hash(kind, title, body),
                         "source": redacted_json(ctx, dict(item.get("source") or {}), {})})
    texts = [rec_.embed_text(p["title"], piece) for p in prepared for piece in p["pieces"]]
    try:
        matrix = embedding.embedder(ctx).embed_multi(texts, progress=progress)
    except EmbeddingUnavailableError as exc:
        logger.warning("storing without vectors: %s", exc)
        matrix = None
    now = ctx.clock()
    ids: list[str] = []
    offset = 0
    seen: dict[tuple, int] = {}
    written: list[tuple] = []
    with ctx.txn():
        for p in prepared:
            n = len(p["pieces"])
            vectors = matrix[offset:offset + n] if matrix is not None else None
            offset += n
            key = (p["ns"], p["kind"], p["hash"])
            existing = seen.get(key) or _existing(ctx, *key)
            if existing:
                ids.append(format_id(existing))
                continue
            memory_id = insert(
                ctx, namespace=p["ns"], kind=p["kind"], title=p["title"], body=p["body"], tags=p["tags"],
                source=p["source"], importance=p["importance"], confidence=1.0, pinned=p["pinned"],
                status=p["status"], ttl_days=None, now=now, root_id=None,
                external_key=None, created_at=None, content_hash=p["hash"], pieces=p["pieces"],
                vectors=vectors)
            search_index.index_live(ctx, memory_id)
            seen[key] = memory_id
            ids.append(format_id(memory_id))
            if p["kind"] != "session":
                written.append((memory_id, p, vectors))
        # Links as `remember` writes them, each memory against those stored before it (the batch too).
        for memory_id, p, vectors in written:
            text = _own_text(p["title"], p["body"])
            stale = supersession.superseded(ctx, p["ns"], text, vectors, newer_than=(now, memory_id))
            supersession.record_links(ctx, memory_id, stale, now)
    if matrix is not None:
        windows.after_write(ctx, list(seen.values()))
    return ids


def close_memories(ctx: StoreContext, vector, namespaces: list[str], body: str) -> tuple[list[dict], list[dict]]:
    """Live memories whose nearest chunk is at least `store.near_duplicate_similarity` close (hints only), read as
    `health` reads its close pairs (`read_close_pairs`): (near-duplicates, possible contradictions). "Do not use X"
    is no revision of "use X" but may contradict it; "widget 15" is neither a copy of "widget 14" nor against it,
    nor is a sentence of other Chinese words its English twin's, nor "prod: KEY=[REDACTED:…]" one of
    "staging: KEY=[REDACTED:…]", however close their vectors. Below that bound, down to
    `store.negated_pair_similarity`, a memory that says the same words as this one, one of the two negated
    (`text.traits.negated_twin`: "The API uses REST." / "The API does not use REST.", 0.82 apart), may contradict
    it too: in a short text the "not" moves the vector as far as a paraphrase would."""
    import numpy as np

    threshold = float(ctx.config.get("store.near_duplicate_similarity"))
    floor = min(threshold, float(ctx.config.get("store.negated_pair_similarity")))
    close: dict[int, float] = {}
    under: dict[int, float] = {}
    for memory_id, cosine in search_index.vector_search(ctx, vector, namespaces, k=10):
        if memory_id not in close and memory_id not in under and cosine >= floor:
            (close if cosine >= threshold else under)[memory_id] = cosine
    close.update(_saying_the_same(ctx, body, under))
    partly = _restating_a_statement(ctx, body, {m: c for m, c in under.items() if m not in close})
    if not close:
        return [], partly
    records = [ctx.fetch(memory_id) for memory_id in close]
    texts = {0: body, **{i: rec["body"] for i, rec in enumerate(records, 1)}}
    others = np.arange(1, len(records) + 1)
    below = np.fromiter((close[rec["id"]] < threshold for rec in records), dtype=bool, count=len(records))
    copies, opposite = read_close_pairs(texts, np.zeros(len(records), dtype=int), others, below=below)
    near, opposed = [], []
    for rec, copy, against in zip(records, copies, opposite):
        hit = {"id": format_id(rec["id"]), "title": rec["title"], "similarity": round(close[rec["id"]], 4)}
        if copy:
            near.append({**hit, "hint": "similar memory exists: update it instead if this revises it"})
        elif against:
            opposed.append({**hit, "hint": "close, but one of the two says not or gives another value: update it "
                                           "instead if this reverses or revises it"})
    return near, opposed + partly


def _restating_a_statement(ctx: StoreContext, body: str, candidates: dict[int, float]) -> list[dict]:
    """The `candidates` (memory id → cosine, under the near-duplicate bound) one statement of which this one-statement
    text restates with another value (`text.traits.swapped_in_a_statement`: "…; the max duration for /api/export is
    60 seconds." beside "The max duration for /api/export is 300 seconds.", fresh-user run fu25 D4), as possible
    contradictions: the other statements keep the pair under the bound. Read only for a short text that states a
    number or a code-like value, as `_saying_the_same` reads only short twins."""
    from supermemory.text.revisions import swapped_in_a_statement
    from supermemory.text.traits import NEGATED_TWIN_CHARS, numbered_words, statements

    if not candidates or len(body) > NEGATED_TWIN_CHARS or len(statements(body)) != 1 or not numbered_words(body):
        return []
    ids = list(candidates)
    rows = ctx.q(f"SELECT id, title, body FROM memories WHERE id IN ({','.join('?' * len(ids))})", ids)
    return [{"id": format_id(memory_id), "title": title, "similarity": round(candidates[memory_id], 4),
             "hint": "close, and one of its statements gives another value for what this one says: update it "
                     "instead if this revises it"}
            for memory_id, title, text in rows if swapped_in_a_statement(body, text)]


def _saying_the_same(ctx: StoreContext, body: str, candidates: dict[int, float]) -> dict[int, float]:
    """The `candidates` (memory id → cosine, under the near-duplicate bound) that say this text's content words
    (`text.traits.said_words`), both short (`NEGATED_TWIN_CHARS`): only they can be its negated twin, so only they are
    fetched and read with the close memories (a write must not read ten neighbours' texts for a rare case)."""
    from supermemory.text.traits import NEGATED_TWIN_CHARS, said_words

    words = said_words(body) if len(body) <= NEGATED_TWIN_CHARS else frozenset()
    if not candidates or not words:
        return {}
    ids = list(candidates)
    rows = ctx.q(f"SELECT id, body FROM memories WHERE id IN ({','.join('?' * len(ids))}) AND length(body) <= ?",
                 ids + [NEGATED_TWIN_CHARS])
    return {memory_id: candidates[memory_id] for memory_id, text in rows if said_words(text) == words}


def read_close_pairs(texts: dict[int, str], first, second, *, below=None):
    """Which close pairs are near-duplicates to merge and which may contradict each other, as two boolean
    arrays (`first`, `second`: index arrays into `texts`, whose keys are those indexes; `below`: a boolean array,
    the pairs under the near-duplicate bound, which only a negated twin makes anything). Vectors barely see a
    "not", a number or a Chinese word, nor what a redaction marker hid (`text.traits.blind_spots`): a pair whose
    negation words differ ("Use X" / "Do not use X") may be a contradiction, and a pair whose numbers
    ("widget 14" / "widget 15") or CJK words differ names two things, as does a pair close only through its
    redacted secrets ("staging: KEY=[REDACTED:…]" / "prod: KEY=[REDACTED:…]": other words around the markers, or
    a secret in one only); neither is a copy. Nor is a pair that says one thing with one value swapped for another
    ("Deploys happen on Tuesdays" / "… Thursdays", "version 3.11" / "3.12": `text.traits.swapped_value`): that
    may be a contradiction, as is a pair that says the same words, one of the two negated more often
    (`text.traits.negated_twin`: "Use X." / "Do not use X."; "Don't use X. Don't use Y." / "Don't use X. Use Y.").
    Each text's negations, its said words, and the rest of its blind spots, become one id each, compared as
    arrays (`health` reads millions of pairs; `remember` its few close memories)."""
    import numpy as np

    from supermemory.text.traits import blind_spots, negation_count, said_words, swapped_value

    size = max(texts) + 1 if texts else 0
    negation_ids, thing_ids, rest_ids, word_ids = {}, {}, {}, {frozenset(): 0}
    negation, things, rest, words, count = (np.zeros(size, dtype=int) for _ in range(5))
    for i, text in texts.items():
        negated, digits, *named = blind_spots(text)
        negation[i] = negation_ids.setdefault(negated, len(negation_ids))
        things[i] = thing_ids.setdefault((digits, *named), len(thing_ids))
        rest[i] = rest_ids.setdefault(tuple(named), len(rest_ids))
        words[i] = word_ids.setdefault(said_words(text), len(word_ids))   # 0: no words besides its negations
        count[i] = negation_count(text)
    twins = (words[first] == words[second]) & (words[first] != 0) & (count[first] != count[second])
    if below is None:
        below = np.zeros(len(first), dtype=bool)
    opposite = np.where(below, twins, (negation[first] != negation[second]) | twins)
    copies = ~below & ~opposite & (things[first] == things[second])
    # One value in place of another ("on Tuesdays" / "on Thursdays", "3.11" / "3.12"): two claims about one
    # setting, never a merge; said as a possible contradiction instead.
    for k in np.flatnonzero(~below & ~opposite & (rest[first] == rest[second])):
        if swapped_value(texts[int(first[k])], texts[int(second[k])]):
            copies[k], opposite[k] = False, True
    return copies, opposite


def insert_embedded(ctx: StoreContext, rows: Iterable[dict], *, batch: int = 2000) -> int:
    """Bulk-insert one-chunk memories whose vectors are already computed (benchmark stores), in
    write transactions of `batch` rows; each row: namespace, kind, title, body, vector, updated_at,
    and optionally pinned, status. No validation, redaction or dedupe: generated data only."""
    count = 0
    pending: list[dict] = []

    def flush() -> None:
        with ctx.txn():
            for row in pending:
                memory_id = insert(
                    ctx, namespace=row["namespace"], kind=row["kind"], title=row["title"], body=row["body"], tags=[],
                    source={}, importance=0.5, confidence=1.0, pinned=bool(row.get("pinned")),
                    status=row.get("status"), ttl_days=None, now=row["updated_at"], root_id=None, external_key=None,
                    created_at=None, content_hash=rec_.content_hash(row["kind"], row["title"], row["body"]),
                    pieces=[row["body"]], vectors=[row["vector"]])
                search_index.index_live(ctx, memory_id)
        pending.clear()

    for row in rows:
        pending.append(row)
        count += 1
        if len(pending) >= batch:
            flush()
    if pending:
        flush()
    return count
