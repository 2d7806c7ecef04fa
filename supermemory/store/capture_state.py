"""Where each transcript's capture stands: byte offset, digest so far, the session memory's id."""
from __future__ import annotations

from supermemory.store.context import StoreContext
from supermemory.store.records import LIVE, json_text


# The agents a capture's key can name (`capture.plan` writes `<platform>:<session id>`), "unknown" when the
# transcript says none of them.
PLATFORMS = ("claude-code", "codex")
UNKNOWN = "unknown"


def load(ctx: StoreContext, key: str) -> tuple | None:
    """(offset, digest JSON, memory_id, path) saved for a session key, or None."""
    rows = ctx.q("SELECT offset, digest, memory_id, path FROM capture_state WHERE session_key = ?", (key,))
    return rows[0] if rows else None


def save(ctx: StoreContext, key: str, path: str, offset: int, digest: dict, memory_id: int | None, *,
         drop_key: str | None = None) -> None:
    """Record the new position and digest (replacing `drop_key`, a legacy key for the same file)."""
    with ctx.txn():
        if drop_key and drop_key != key:
            ctx.conn.execute("DELETE FROM capture_state WHERE session_key = ?", (drop_key,))
        ctx.conn.execute(
            "INSERT INTO capture_state(session_key, path, offset, digest, memory_id, updated_at) "
            "VALUES (?,?,?,?,?,?) ON CONFLICT(session_key) DO UPDATE SET path = excluded.path, "
            "offset = excluded.offset, digest = excluded.digest, memory_id = excluded.memory_id, "
            "updated_at = excluded.updated_at",
            (key, str(path), offset, json_text(digest), memory_id, ctx.clock()))


def session_memory(ctx: StoreContext, key: str) -> int | None:
    """The live session memory written for this key (when the saved state was lost)."""
    rows = ctx.q(f"SELECT m.id FROM memories m WHERE m.external_key = ? AND m.kind = 'session' AND {LIVE} "
                 f"ORDER BY m.id DESC LIMIT 1", (key,))
    return rows[0][0] if rows else None


def session_memory_of(ctx: StoreContext, session_id: str) -> int | None:
    """The live session memory captured for an agent's session id, whichever platform its key names (the one capture
    read from the transcript may differ from the hook's)."""
    keys = [f"{platform}:{session_id}" for platform in (*PLATFORMS, UNKNOWN)]
    rows = ctx.q(f"SELECT m.id FROM memories m WHERE m.external_key IN (?, ?, ?) AND m.kind = 'session' AND {LIVE} "
                 f"ORDER BY m.id DESC LIMIT 1", keys)
    return rows[0][0] if rows else None


def wait_for_writes(ctx: StoreContext, wait_ms: int) -> None:
    """Take the write lock, waiting at most `wait_ms`, and let it go at once: a retried capture (work nobody
    waits for) finds out cheaply that another writer holds the database instead of waiting half a minute.

    Raises:
        StorageError: the database is locked past `wait_ms`, or cannot be written at all.
    """
    with ctx.txn(wait_ms=wait_ms):
        pass
