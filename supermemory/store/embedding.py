"""The store's embedder: resolved lazily, checked against the model pinned in the database."""
from __future__ import annotations

import itertools
import json
import logging
from typing import Callable

from supermemory.errors import EmbeddingUnavailableError, ModelMismatchError, StorageError, SupermemoryError
from supermemory.store import db as dbm
from supermemory.store import namespaces as nsm
from supermemory.store import search_index, windows
from supermemory.store.context import StoreContext
from supermemory.store.records import LIVE, embed_text, to_blob

logger = logging.getLogger(__name__)


def pinned_model(ctx: StoreContext) -> dict | None:
    """The embedding model fingerprint pinned in this database, if any."""
    raw = dbm.get_meta(ctx.conn, "embedder")
    return json.loads(raw) if raw else None


def _model_name(fingerprint: dict) -> str:
    """A pinned or configured model as a user can tell two apart: provider/model, size, checksum."""
    return (f"{fingerprint.get('provider')}/{fingerprint.get('model')} ({fingerprint.get('dimensions')}-d, "
            f"checksum {str(fingerprint.get('checksum'))[:12]})")


def mismatch_message(pinned: dict, configured: dict) -> str:
    """One message, wherever a pin mismatch shows (a write's error, doctor, `config --set`): both models and
    both ways out, since every write fails until one is taken."""
    back = (f"`supermemory config --set embedder.provider={pinned.get('provider')}`"
            if pinned.get("provider") != configured.get("provider") else "the embedder settings that gave it")
    return (f"this database is pinned to embedder {_model_name(pinned)} but the configured one is "
            f"{_model_name(configured)}; writes fail until you set it back ({back}) or run "
            f"`supermemory reindex` to re-embed every memory with the configured one")


def pin_check(ctx: StoreContext) -> dict:
    """The pinned model against the configured one without resolving the store's embedder, so health,
    doctor and `config --set` can say before a write does that writes will fail.

    Returns `{"pinned", "configured", "status", "message"}`; status is "not pinned yet", "ok",
    "mismatch" (message: `mismatch_message`) or "unavailable" (the configured provider cannot run here).
    """
    pinned = pinned_model(ctx)
    out = {"pinned": pinned, "configured": None, "status": "not pinned yet", "message": ""}
    if pinned is None:
        return out
    try:
        from supermemory.embed import get_provider

        out["configured"] = (ctx.embedder or get_provider(ctx.config)).fingerprint()
    except SupermemoryError as exc:
        return {**out, "status": "unavailable", "message": f"configured embedder unavailable: {exc}"}
    if out["configured"] == pinned:
        return {**out, "status": "ok"}
    return {**out, "status": "mismatch", "message": mismatch_message(pinned, out["configured"])}


def embedder(ctx: StoreContext):
    """The embedding provider, resolved and checked against the DB pin on first use.

    Raises:
        ModelMismatchError: the DB is pinned to a different model.
        EmbeddingUnavailableError: no provider can run (a missing model is looked for again next time).
    """
    if ctx.embedder is None:
        ctx.embedder = _resolve(ctx)
    if not ctx.embedder_checked:
        fresh = pinned_model(ctx) is None
        _check_pin(ctx, ctx.embedder)
        ctx.embedder_checked = True
        if fresh:   # chunks written while no model could run get theirs while the server idles or at
            ctx.vectors_pending = True   # maintenance, as the rest of a long text does (a backlog can take minutes)
    return ctx.embedder


def provider_id(ctx: StoreContext) -> str:
    """The resolved provider's id, without resolving it ("onnx" until one is chosen)."""
    return getattr(ctx.embedder, "provider_id", "onnx")


def semantic(ctx: StoreContext) -> bool:
    """Whether the resolved provider's cosines carry meaning (not feature hashing), without resolving it."""
    return bool(getattr(ctx.embedder, "semantic", True))


def _resolve(ctx: StoreContext):
    """The configured provider; the `hash` fallback only for a database already pinned to it.

    A missing model is a state that passes (`supermemory model install`), so it is never
    cached: until then writes are lexical-only and the next call looks for the model again,
    instead of pinning a fresh database to the fallback for good.
    """
    from supermemory.embed import resolve_provider

    provider, warning = resolve_provider(ctx.config, pinned_model(ctx))
    if warning:
        logger.warning(warning)
        ctx.embedder_warning = warning
    return provider


def _check_pin(ctx: StoreContext, provider) -> None:
    fingerprint = provider.fingerprint()
    pinned = pinned_model(ctx)
    if pinned is None:
        if ctx.readonly:   # pinned by the first write, which a read-only store cannot make
            return
        with ctx.txn():
            if pinned_model(ctx) is None:
                dbm.set_meta(ctx.conn, "embedder", json.dumps(fingerprint, sort_keys=True))
                if ctx.driver.vec:
                    dbm.create_vec_table(ctx.conn, fingerprint["dimensions"])
        return
    if pinned != fingerprint:
        raise ModelMismatchError(mismatch_message(pinned, fingerprint))
    if ctx.readonly:   # the vector index cannot be built or refreshed: search reads the vectors table
        return
    if ctx.driver.vec and not dbm.vec_table_exists(ctx.conn):
        with ctx.txn():
            dbm.create_vec_table(ctx.conn, fingerprint["dimensions"])
            search_index.fill_vec_index(ctx)
    elif ctx.driver.vec and dbm.get_meta(ctx.conn, "vec_dirty") == "1":
        with ctx.txn():
            search_index.fill_vec_index(ctx)


FILL_SLICE = 4   # chunks embedded per transaction when filling in (~0.5 s): a request waits at most this long


def note_nothing_pending(ctx: StoreContext) -> None:
    """No chunk waits for a vector (or none can get one now): not looked for again until a write of ours
    leaves some waiting, or another process commits (`others_wrote_since_look`)."""
    ctx.vectors_pending = False
    ctx.vectors_looked_at = ctx.data_version()


def others_wrote_since_look(ctx: StoreContext) -> bool:
    """Whether another process committed since this store last found nothing to fill in: a CLI
    `remember` of a long text, another MCP server, a hook's capture may have left chunks without a vector."""
    return ctx.vectors_looked_at != ctx.data_version()


def embed_missing_vectors(ctx: StoreContext, *, deadline: float | None = None, limit: int | None = None,
                          progress: Callable[[int, int], None] | None = None, wait_ms: int | None = None) -> int:
    """Embed live chunks that have no vector yet: those written while no model could run, and the
    rest of a long text a write embedded only the start of (`store.write_embed_chunks`); then the windows of
    memories that have none yet (`windows.py`: written without the model, or before windows were kept).

    Works in slices of `FILL_SLICE`, each committed on its own, so it can stop at `deadline`
    (`time.monotonic()`) or after about `limit` chunks and go on next time; returns the chunks embedded.
    A chunk forgotten or already filled in by another process meanwhile is left alone, and counts
    towards `limit` all the same (a slice lost to another process still ends an idle turn).
    `progress(chunks looked at, chunks waiting when it began)` after each slice (the CLI shows it).
    `wait_ms`: how long a slice waits for another writer's lock (default: the busy timeout), then StorageError.
    """
    import time

    if ctx.readonly:
        ctx.vectors_pending = False
        return 0
    done = tried = 0
    total = waiting_chunks(ctx) if progress is not None else 0
    waiting = _waiting_from(ctx, ctx.fill_after if ctx.fill_after is not None else _first_start(ctx))
    while (deadline is None or time.monotonic() < deadline) and (limit is None or tried < limit):
        rows = list(itertools.islice(waiting, FILL_SLICE))
        if not rows:   # every chunk has its vector: the memories' windows next (`windows.py`)
            unwindowed = windows.missing(ctx, FILL_SLICE)
            if not unwindowed:
                note_nothing_pending(ctx)
                break
            ctx.vectors_pending = True
            tried += len(unwindowed)
            windows.embed(ctx, unwindowed, embedder(ctx), wait_ms=wait_ms)
            continue
        ctx.vectors_pending = True   # found some (written by another process, perhaps): go on next time
        ctx.fill_after, tried = rows[-1][0], tried + len(rows)
        matrix = embedder(ctx).embed_multi([embed_text(title, text) for _, text, title in rows])
        with ctx.txn(wait_ms=wait_ms):
            usable = search_index.vec_index_usable(ctx)
            for (chunk_id, _, _), vector in zip(rows, matrix):
                if ctx.conn.execute(f"INSERT OR IGNORE INTO vectors(chunk_id, embedding) SELECT c.id, ? FROM chunks c "
                                    f"JOIN memories m ON m.id = c.memory_id WHERE c.id = ? AND {LIVE}",
                                    (to_blob(vector), chunk_id)).rowcount != 1:
                    continue
                done += 1
                if usable:
                    ctx.conn.execute("INSERT INTO vec_mem(chunk_id, namespace, embedding) SELECT c.id, c.namespace, "
                                     "v.embedding FROM chunks c JOIN vectors v ON v.chunk_id = c.id WHERE c.id = ?",
                                     (chunk_id,))
            if not usable:
                search_index.mark_vec_dirty(ctx)
            ctx.changed()
        if progress is not None:
            progress(min(tried, total), total)
    if done:
        logger.info("embedded %d chunks that had no vector yet", done)
    return done


def _first_start(ctx: StoreContext) -> int:
    """Where this process starts looking for chunks without a vector: a point of the chunk ids fixed by
    its pid. Two servers on one store (two agent sessions in one project) then fill different stretches of
    a long text's rest instead of both embedding the same slice and one throwing its work away."""
    import os
    import random

    top = ctx.q("SELECT max(id) FROM chunks")[0][0] or 0
    return int(random.Random(os.getpid()).random() * top)


def _waiting_from(ctx: StoreContext, start: int):
    """(id, text, title) of the live chunks without a vector, in id order from just past `start` round to
    it; read `FILL_SLICE` rows at a time, each read after the slice before was stored."""
    for after, high in ((start, 2 ** 62), (0, start)):
        while True:
            rows = ctx.q(f"SELECT c.id, c.text, m.title FROM chunks c JOIN memories m ON m.id = c.memory_id "
                         f"WHERE {LIVE} AND c.id > ? AND c.id <= ? AND NOT EXISTS "
                         f"(SELECT 1 FROM vectors v WHERE v.chunk_id = c.id) ORDER BY c.id LIMIT ?",
                         (after, high, FILL_SLICE))
            yield from rows
            if len(rows) < FILL_SLICE:
                break
            after = rows[-1][0]


def waiting_chunks(ctx: StoreContext, namespaces: list[str] | None = None) -> int:
    """How many live chunks have no vector yet, of the memories in `namespaces` (None: all; `health` reports it
    as `vectors_pending`, over the namespaces it reads)."""
    ns_sql, ns_params = nsm.clause(namespaces)
    return ctx.q(f"SELECT count(*) FROM chunks c JOIN memories m ON m.id = c.memory_id WHERE {LIVE} AND {ns_sql} "
                 f"AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id)", ns_params)[0][0]


def may_be_waiting(ctx: StoreContext) -> bool:
    """Whether a live chunk may still wait for a vector, told cheaply where the search index can: every live
    chunk has one FTS row and, once it has a vector, one vec0 row, so equal counts mean none waits. Both counts
    are cheap on the CLI's recall path: the live chunks are the cached count `search_index.live_chunk_count`
    reads from the FTS vocabulary, the vec0 rows a b-tree count of sqlite-vec's rowid table (15k chunks: under
    0.5 ms, against 4 ms for `count(*)` over both virtual tables). True when the vec0 index cannot tell
    (missing, stale after a driver without sqlite-vec wrote, or laid out otherwise): the filling-in looks itself."""
    if not search_index.vec_index_usable(ctx) or dbm.get_meta(ctx.conn, "vec_dirty") == "1":
        return True
    try:
        vectors = ctx.q("SELECT count(*) FROM vec_mem_rowids")[0][0]
    except ctx.driver.Error:   # another sqlite-vec layout: no cheap count
        return True
    return search_index.live_chunk_count(ctx) != vectors


CATCH_UP_SECONDS = 1.0   # plus at most one slice (`FILL_SLICE`) past it, the model's load included
CATCH_UP_CHUNKS = 128
CATCH_UP_WAIT_MS = 250   # another process's write lock: the command goes on without waiting out the busy timeout


def catch_up(ctx: StoreContext, *, namespace: str | None = None, seconds: float = CATCH_UP_SECONDS,
             limit: int = CATCH_UP_CHUNKS) -> int:
    """Before a CLI command that loads the model anyway (`recall`, `remember`): embed the chunks still waiting
    for a vector for about `seconds` (about `limit` at most), so a memory stored while the model was missing
    ranks by meaning at the next recall instead of only once the MCP server idles or at maintenance.

    Nothing waiting costs one look (`may_be_waiting`); no embedder, another model pinned, a read-only or
    damaged database, or another process's write lock held past `CATCH_UP_WAIT_MS` leave them for later,
    silently (the command itself says what it must). Chunks of the namespaces the command reads (`namespace`
    as `namespaces.for_read` takes it) left when the time is up are said on stderr (a warning, as a write without
    the model says); those of other projects only in the log's info (they are filled in all the same).

    :returns: how many chunks of the namespaces read still wait (0 when none, or when none could be embedded now).
    """
    import time

    if ctx.readonly:
        return 0
    try:
        if not may_be_waiting(ctx):
            return 0
        embed_missing_vectors(ctx, deadline=time.monotonic() + seconds, limit=limit, wait_ms=CATCH_UP_WAIT_MS)
        namespaces = nsm.for_read(ctx, namespace)
        left = waiting_chunks(ctx) if ctx.vectors_pending else 0
        here = waiting_chunks(ctx, namespaces) if left and namespaces is not None else left
    except (EmbeddingUnavailableError, ModelMismatchError, StorageError) as exc:
        logger.info("chunks without a vector stay so for now (keyword search still finds them): %s", exc)
        return 0
    where = "in all namespaces" if namespaces is None else "in namespaces " + ", ".join(namespaces)
    if here:
        logger.warning("%d chunks still wait for a vector %s (keyword search finds them); the next recall or "
                       "remember embeds more, `supermemory maintenance` all of them", here, where)
    if left > here:
        logger.info("%d chunks of other namespaces still wait for a vector", left - here)
    return here


def embed_chunks(ctx: StoreContext, title: str, pieces: list[str],
                 progress: Callable[[int, int], None] | None = None):
    """Vectors for the first `store.write_embed_chunks` of a memory's chunks (the rest wait for
    `embed_missing_vectors`, so a megabyte of text does not hold the agent up for minutes), or None
    when no embedder can run (lexical-only, loudly)."""
    texts = [embed_text(title, p) for p in pieces[:int(ctx.config.get("store.write_embed_chunks"))]]
    try:
        provider = embedder(ctx)
        if len(texts) < len(pieces):
            ctx.vectors_pending = True
        return provider.embed_multi(texts, progress=progress)
    except EmbeddingUnavailableError as exc:
        logger.warning("storing without vectors for now (lexical search finds it; its vectors follow once the model "
                       "runs, while the MCP server idles, at the next CLI recall or at `supermemory maintenance`): %s",
                       exc)
        return None
