"""The schema as appended migrations: named, applied in registration order (`db.migrate`), never edited once shipped."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from supermemory.text import FTS_TOKENIZE


@dataclass(frozen=True)
class Migration:
    name: str
    fn: Callable
    transactional: bool = True


MIGRATIONS: list[Migration] = []


def migration(transactional: bool = True):
    """Register a schema migration; never edit one that has shipped, append a new one."""
    def register(fn: Callable) -> Callable:
        MIGRATIONS.append(Migration(fn.__name__, fn, transactional))
        return fn
    return register


def _script(conn, sql: str) -> None:
    """Run statements one by one: `executescript` would COMMIT our open transaction first."""
    for statement in sql.split(";\n"):
        if statement.strip():
            conn.execute(statement)


@migration()
def m001_initial(conn) -> None:
    _script(conn, 
        f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL,
            kind TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            body TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '',
            tags TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL DEFAULT '{{}}',
            platform TEXT NOT NULL DEFAULT '',
            importance REAL NOT NULL DEFAULT 0.5,
            confidence REAL NOT NULL DEFAULT 1.0,
            pinned INTEGER NOT NULL DEFAULT 0,
            status TEXT,
            ttl_days REAL,
            expires_at REAL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_recalled_at REAL,
            recall_count INTEGER NOT NULL DEFAULT 0,
            content_hash TEXT NOT NULL,
            root_id INTEGER,
            superseded_by INTEGER,
            valid_from REAL NOT NULL,
            valid_to REAL,
            deleted_at REAL,
            delete_reason TEXT,
            external_key TEXT
        );
        CREATE INDEX memories_live ON memories(namespace, kind) WHERE superseded_by IS NULL AND deleted_at IS NULL;
        CREATE INDEX memories_hash ON memories(namespace, kind, content_hash);
        CREATE INDEX memories_root ON memories(root_id);
        CREATE INDEX memories_external ON memories(namespace, external_key) WHERE external_key IS NOT NULL;
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            namespace TEXT NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX chunks_memory ON chunks(memory_id);
        CREATE TABLE vectors (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            embedding BLOB NOT NULL
        );
        CREATE TABLE links (
            src INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            dst INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            relation TEXT NOT NULL,
            weight REAL NOT NULL DEFAULT 1.0,
            created_at REAL NOT NULL,
            PRIMARY KEY (src, dst, relation)
        );
        CREATE INDEX links_dst ON links(dst);
        CREATE VIRTUAL TABLE fts USING fts5(tokens, ns, tokenize="{FTS_TOKENIZE}");
        CREATE VIRTUAL TABLE fts_vocab USING fts5vocab(fts, 'col');
        """
    )


@migration()
def m002_search_log(conn) -> None:
    _script(conn, 
        """
        CREATE TABLE search_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at REAL NOT NULL,
            namespace TEXT NOT NULL,
            query TEXT NOT NULL,
            origin TEXT NOT NULL DEFAULT '',
            candidates INTEGER NOT NULL,
            hits INTEGER NOT NULL,
            top_score REAL,
            latency_ms REAL NOT NULL
        );
        CREATE TABLE capture_state (
            session_key TEXT PRIMARY KEY,
            path TEXT,
            offset INTEGER NOT NULL DEFAULT 0,
            digest TEXT NOT NULL,
            memory_id INTEGER,
            updated_at REAL NOT NULL
        );
        """
    )


@migration()
def m003_briefing_indexes(conn) -> None:
    """Briefing and list read the newest / most important live rows per namespace and kind."""
    _script(conn, """
        CREATE INDEX memories_live_rank ON memories(namespace, kind, importance DESC, updated_at DESC)
            WHERE superseded_by IS NULL AND deleted_at IS NULL;
        CREATE INDEX memories_live_recent ON memories(namespace, updated_at DESC)
            WHERE superseded_by IS NULL AND deleted_at IS NULL;
        CREATE INDEX memories_live_pinned ON memories(namespace, importance DESC)
            WHERE pinned = 1 AND superseded_by IS NULL AND deleted_at IS NULL
        """)


@migration()
def m004_redactions(conn) -> None:
    """In-place re-redactions (`MemoryStore.redact_stored`): the one overwrite of stored text,
    recorded per memory row so `history` shows it."""
    _script(conn, """
        CREATE TABLE redactions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            at REAL NOT NULL,
            types TEXT NOT NULL DEFAULT '{}',
            fields TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX redactions_memory ON redactions(memory_id)
        """)


@migration()
def m005_list_indexes(conn) -> None:
    """The memories page of `supermemory ui` over every namespace: newest live rows first without a sort of
    the whole table, and their count read from an index (100k rows: ~0.2 ms and ~15 ms instead of ~230 ms each)."""
    _script(conn, """
        CREATE INDEX memories_live_updated ON memories(updated_at)
            WHERE superseded_by IS NULL AND deleted_at IS NULL;
        CREATE INDEX memories_live_expiry ON memories(expires_at)
            WHERE superseded_by IS NULL AND deleted_at IS NULL
        """)

@migration()
def m006_case_sensitive_hashes(conn) -> None:
    """Exact repeats are told apart by case: every row's content hash again, without case folding (the old
    hash made "run ls -A (not ls -a)" a duplicate of "run ls -a (not ls -A)" and dropped the write)."""
    from supermemory.store.records import content_hash

    rows = conn.execute("SELECT id, kind, title, body FROM memories").fetchall()
    conn.executemany("UPDATE memories SET content_hash = ? WHERE id = ?",
                     [(content_hash(kind, title or "", body or ""), row_id) for row_id, kind, title, body in rows])


@migration()
def m007_link_removals(conn) -> None:
    """The links the user removed (`unlink`): no automatic writer of `supersedes` links writes one of them again."""
    conn.execute("CREATE TABLE link_removals (src INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE, dst "
                 "INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE, relation TEXT NOT NULL, removed_at REAL "
                 "NOT NULL, PRIMARY KEY (src, dst, relation))")


@migration()
def m008_windows(conn) -> None:
    """Vectors of each live memory's two-sentence windows (`store/windows.py`); a row of seq -1 and no vector
    says a memory was looked at and has none (one sentence, or code). A rowid table: rows of 1.5 KB in a WITHOUT
    ROWID b-tree took a page each (a LongMemEval store grew 137 MB for 50 MB of vectors)."""
    _script(conn, """
        CREATE TABLE windows (
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            embedding BLOB
        );
        CREATE UNIQUE INDEX windows_memory ON windows(memory_id, seq)
        """)
