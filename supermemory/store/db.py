"""Connection (driver choice, WAL, busy timeout, sqlite-vec) and applying the appended migrations (`schema.py`).

Driver probe, once per process, in order: stdlib `sqlite3`, `sqlean`, `pysqlite3`. The first
that can load sqlite-vec and create an FTS5 table wins; if none can load sqlite-vec, the first
with FTS5 is used and vectors are searched by numpy brute force over the BLOB table.
Forks have their own exception classes: always catch `driver.Error`, never `sqlite3.Error`.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator

from supermemory.errors import MigrationError, StorageError
from supermemory.store.schema import MIGRATIONS

logger = logging.getLogger(__name__)

DRIVER_ORDER = ("sqlite3", "sqlean", "pysqlite3.dbapi2")
BUSY_TIMEOUT_MS = 30_000
EMPTY_FILE_GRACE_S = 60     # an empty DB file younger than this is a first start in progress, not a loss


@dataclass(frozen=True)
class Driver:
    """The SQLite module chosen for this process and what it can do."""

    name: str
    module: ModuleType
    vec: bool
    fts5: bool
    sqlite_version: str

    @property
    def Error(self) -> type[BaseException]:  # noqa: N802 - mirrors the DB-API name
        return self.module.Error


def vec_extension_path() -> str | None:
    """Path of the sqlite-vec loadable (without importing sqlite_vec, which imports numpy)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "vec0")


def load_vec(conn) -> None:
    """Load sqlite-vec into a connection; raises the driver's error when it cannot."""
    path = vec_extension_path()
    if path is None:
        raise RuntimeError("sqlite-vec is not installed")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(path)
    finally:
        conn.enable_load_extension(False)


def _probe(name: str, want_vec: bool) -> Driver | None:
    try:
        module = importlib.import_module(name)
        conn = module.connect(":memory:")
    except Exception:  # noqa: BLE001 - a probe: any failure means "not this driver"
        return None
    try:
        fts5 = vec = False
        try:
            conn.execute("CREATE VIRTUAL TABLE temp.probe_fts USING fts5(t)")
            fts5 = True
        except Exception:  # noqa: BLE001
            fts5 = False
        if want_vec:
            try:
                load_vec(conn)
                conn.execute("SELECT vec_version()").fetchone()
                vec = True
            except Exception:  # noqa: BLE001
                vec = False
        version = conn.execute("SELECT sqlite_version()").fetchone()[0]
        return Driver(name=name.split(".")[0], module=module, vec=vec, fts5=fts5, sqlite_version=version)
    finally:
        conn.close()


_DRIVER_CACHE: dict[tuple, Driver] = {}


def choose_driver(prefer: str | None = None, *, vectors: str = "auto") -> Driver:
    """Pick the SQLite driver: `prefer` forces one ('sqlite3', 'sqlean', 'pysqlite3').

    :param vectors: 'auto' (sqlite-vec when loadable) or 'numpy' (force brute force).
    Raises:
        StorageError: no driver with FTS5 is available (or the forced one is missing).
    """
    key = (prefer, vectors)
    if key in _DRIVER_CACHE:
        return _DRIVER_CACHE[key]
    want_vec = vectors != "numpy"
    names = DRIVER_ORDER
    if prefer:
        names = tuple(n for n in DRIVER_ORDER if n.split(".")[0] == prefer)
        if not names:
            raise StorageError(f"unknown SQLite driver {prefer!r}; use sqlite3, sqlean or pysqlite3")
    probes = [d for d in (_probe(n, want_vec) for n in names) if d is not None]
    chosen = next((d for d in probes if d.vec and d.fts5), None) or next((d for d in probes if d.fts5), None)
    if chosen is None:
        raise StorageError(
            "no usable SQLite driver with FTS5 found"
            + (f" (forced {prefer!r} is not installed)" if prefer else "")
            + "; install `sqlean.py` (pip install sqlean.py)")
    if not want_vec:
        chosen = Driver(chosen.name, chosen.module, False, chosen.fts5, chosen.sqlite_version)
    _DRIVER_CACHE[key] = chosen
    return chosen


def _emptied(path: Path) -> bool:
    """Whether an existing DB file is empty long after it was made: something emptied it (a bad copy, a
    full disk), worth a warning. A fresh empty file is another process's first start in progress (its
    schema is seconds away), the normal race of several servers started at once on a new data dir."""
    try:
        info = path.stat()
    except OSError:
        return False
    return (info.st_size == 0 and not Path(str(path) + "-wal").exists()
            and time.time() - info.st_mtime > EMPTY_FILE_GRACE_S)


def _secure_file(path: Path) -> None:
    """Create the data dir 0700 and the DB file 0600 before SQLite touches them; existing modes are only ever
    narrowed (group/other bits dropped), never widened: a folder the user made read-only stays read-only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(path.parent, stat.S_IMODE(os.stat(path.parent).st_mode) & 0o700)
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    elif _emptied(path):
        logger.warning("%s exists but is empty (0 bytes): starting a new database in it", path)
    with contextlib.suppress(OSError):
        os.chmod(path, stat.S_IMODE(os.stat(path).st_mode) & 0o600)


def unwritable(db_path) -> list[str]:
    """The database file and WAL sidecars (and, while they do not exist, the folder that gets them) this
    process cannot write."""
    found = [f"{db_path}{suffix}" for suffix in ("", "-wal", "-shm")
             if os.path.exists(f"{db_path}{suffix}") and not os.access(f"{db_path}{suffix}", os.W_OK)]
    folder = os.path.dirname(str(db_path)) or "."
    if not all(os.path.exists(f"{db_path}{s}") for s in ("-wal", "-shm")) and not os.access(folder, os.W_OK):
        found.append(folder)
    return found


def read_only_problem(db_path) -> str | None:
    """What to tell a user whose database this process cannot write (None when it can)."""
    blockers = unwritable(db_path)
    if not blockers:
        return None
    return (f"the database {db_path} is read-only: memories can be read, but nothing can be stored (remember, "
            f"updates, session capture); make it writable (chmod u+w {' '.join(blockers)})")


def opens_read_only(path: str | os.PathLike) -> bool:
    """Whether `connect` should open this database read-only: it holds data and this process cannot write
    the file, its WAL sidecars or the folder that must hold them (chmod a-w, a read-only mount)."""
    if str(path) == ":memory:":
        return False
    try:
        return os.path.getsize(path) > 0 and bool(unwritable(path))
    except OSError:
        return False


def _read_only_uri(path: Path) -> str:
    """`mode=ro` while both WAL sidecars exist (SQLite reads the WAL under its locks; a writer may be at
    work). Without them and with no committed frames waiting in a WAL, `immutable=1`: the file is the
    whole database and nothing can change it, so SQLite needs no -shm (which it could not create in a
    read-only folder, and would leave behind read-only in a writable one)."""
    uri = path.as_uri() + "?mode=ro"
    if os.path.exists(f"{path}-shm") and os.path.exists(f"{path}-wal"):
        return uri
    return uri if _wal_waiting(path) else uri + "&immutable=1"   # waiting writes: SQLite must build a -shm


def _wal_waiting(path) -> bool:
    """Whether a WAL file with frames sits beside the database (committed writes not yet checkpointed)."""
    try:
        return os.path.getsize(f"{path}-wal") > 0
    except OSError:
        return False


def _file_in_the_way(path: Path) -> Path | None:
    """The nearest existing folder-to-be above `path` when it is a file (no folder can be made through it)."""
    for parent in path.parents:
        if os.path.lexists(parent):
            return None if parent.is_dir() else parent
    return None


def connect(path: str | os.PathLike, driver: Driver, *, readonly: bool = False):
    """Open a connection in autocommit mode with WAL, a 30 s busy timeout and sqlite-vec.

    :param readonly: open for reading only (`opens_read_only`): every write then fails, and `write_txn`
        says which file or folder to make writable.
    Raises:
        StorageError: the file cannot be opened or is not a database.
    """
    memory = str(path) == ":memory:"
    if not memory and os.path.isdir(path):   # before _secure_file, which would narrow its mode as a file's
        raise StorageError(f"{path} is a folder, not a database file; move it aside and run again")
    try:
        if not memory and not readonly:
            _secure_file(Path(path))
        if readonly and not memory:
            conn = driver.module.connect(_read_only_uri(Path(path).resolve()), uri=True, isolation_level=None,
                                         check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
        else:
            conn = driver.module.connect(str(path), isolation_level=None,
                                         check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
    except OSError as exc:
        blocker = _file_in_the_way(Path(path))
        if blocker is not None:   # SUPERMEMORY_HOME=/tmp/f with /tmp/f a file: no folder can be made there
            raise StorageError(f"cannot create the database at {path}: {blocker} is a file, not a folder; point "
                               "SUPERMEMORY_HOME at a folder, or move that file aside") from exc
        raise StorageError(f"cannot create the database at {path}: {exc}; make that folder writable or point "
                           "SUPERMEMORY_HOME at one that is") from exc
    except driver.Error as exc:
        raise StorageError(f"cannot open the database at {path}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not memory and not readonly:
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        # Freed pages are zeroed: a hard-forgotten memory (a secret redaction missed) must not stay readable in
        # the file's free space (`versions.forget` also folds the index and empties the WAL).
        conn.execute("PRAGMA secure_delete = ON")
        # Sorts and temporary tables stay in memory: SQLite would write them to /var/tmp, outside the data dir, with
        # memory text in them (fresh-user run fu35 D6: `health` made one there).
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except driver.Error as exc:
        conn.close()
        folder = os.path.dirname(os.path.abspath(path))
        if readonly and _wal_waiting(path):
            raise StorageError(
                f"{path}-wal holds writes not yet folded into {path}, and SQLite can read them only by creating "
                f"{path}-shm, which the read-only folder {folder} refuses ({exc}); make the folder writable "
                "(chmod u+w) and run any supermemory command once") from exc
        if not readonly and not os.access(folder, os.W_OK | os.X_OK):
            raise StorageError(f"the data folder {folder} is not writable ({exc}); make it writable "
                               f"(chmod u+w) or point SUPERMEMORY_HOME at one that is") from exc
        raise StorageError(
            f"{path} is not a usable supermemory database ({exc}). It was left untouched: move it "
            "aside (or restore a backup / `supermemory import` an export) and run again") from exc
    if driver.vec:
        try:
            load_vec(conn)
        except Exception as exc:  # noqa: BLE001 - probed fine, so this is an environment fault
            conn.close()
            raise StorageError(f"sqlite-vec failed to load: {exc}") from exc
    return conn


@contextlib.contextmanager
def write_txn(conn, driver: Driver, *, wait_ms: int | None = None) -> Iterator[None]:
    """`BEGIN IMMEDIATE` … `COMMIT`, rolled back on any error (no partial vec0 rows).

    :param wait_ms: wait at most this long for another writer's lock (default `BUSY_TIMEOUT_MS`): a write
        that may be dropped (a recall's statistics) must not hold up the answer for half a minute.
    """
    if wait_ms is None:
        yield from _write_txn(conn, driver)
        return
    conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
    try:
        yield from _write_txn(conn, driver)
    finally:
        with contextlib.suppress(Exception):
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def _write_txn(conn, driver: Driver) -> Iterator[None]:
    try:
        conn.execute("BEGIN IMMEDIATE")
    except driver.Error as exc:
        raise StorageError(_write_failed(exc, conn)) from exc
    try:
        yield
    except driver.Error as exc:  # e.g. SQLITE_FULL mid-write: a StorageError, never a raw driver error
        with contextlib.suppress(Exception):
            conn.execute("ROLLBACK")
        raise StorageError(_write_failed(exc, conn)) from exc
    except BaseException:
        with contextlib.suppress(Exception):
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except driver.Error as exc:
        with contextlib.suppress(Exception):
            conn.execute("ROLLBACK")
        raise StorageError(f"commit failed: {_write_failed(exc, conn)}") from exc


def _db_file(conn) -> str:
    try:
        return next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "") or ":memory:"
    except Exception:  # noqa: BLE001 - only a message is at stake
        return ""


def _write_failed(exc: BaseException, conn) -> str:
    """What a failed write says: the database is read-only (which file or folder to make writable), locked
    by another writer past the busy timeout, the disk is full, or SQLite's own words."""
    text = str(exc).lower()
    if "readonly" in text.replace("-", "").replace(" ", ""):
        path = _db_file(conn)
        return "nothing was written: " + ((read_only_problem(path) if path != ":memory:" else None)
                                          or f"the database {path} is read-only ({exc})")
    if "locked" in text or "busy" in text:
        try:
            waited = f" (waited {conn.execute('PRAGMA busy_timeout').fetchone()[0] / 1000:g} s)"
        except Exception:  # noqa: BLE001 - only a message is at stake
            waited = ""
        return (f"nothing was written: the database {_db_file(conn)} is locked by another process that is "
                f"writing{waited}: {exc}; try again (`fuser` names the process holding it)")
    if "full" in text:
        return (f"the disk is full (or the database reached its size limit): {exc}; nothing was written. "
                "Free some disk space and try again")
    return f"database write failed and was rolled back: {exc}"


# --- migrations (their definitions: `schema.py`) ---------------------------------------------


def _applied(conn) -> list[str]:
    conn.execute("CREATE TABLE IF NOT EXISTS _supermemory_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    return [r[0] for r in conn.execute("SELECT name FROM _supermemory_migrations ORDER BY rowid")]


def schema_version(conn) -> int:
    return len(_applied(conn))


def migrate(conn, driver: Driver) -> list[str]:
    """Apply pending migrations in order; refuse a DB written by a newer supermemory.

    Raises:
        MigrationError: the DB has migrations this version does not know, or one failed.
    """
    try:
        applied = _applied(conn)
    except driver.Error as exc:
        raise MigrationError(f"cannot read the schema: {exc}") from exc
    known = [m.name for m in MIGRATIONS]
    unknown = [name for name in applied if name not in known]
    if unknown:
        raise MigrationError(
            f"this database was written by a newer supermemory (schema {len(applied)}, unknown "
            f"migrations {', '.join(unknown)}); upgrade supermemory to open it")
    done: list[str] = []
    for mig in MIGRATIONS:
        if mig.name in applied:
            continue
        try:
            if mig.transactional:
                with write_txn(conn, driver):
                    if mig.name in _applied(conn):  # another process won the race
                        continue
                    mig.fn(conn)
                    conn.execute("INSERT INTO _supermemory_migrations VALUES (?, ?)", (mig.name, time.time()))
            else:
                mig.fn(conn)
                conn.execute("INSERT OR IGNORE INTO _supermemory_migrations VALUES (?, ?)", (mig.name, time.time()))
        except (driver.Error, StorageError) as exc:
            raise MigrationError(f"migration {mig.name} failed: {exc}") from exc
        done.append(mig.name)
    return done


def get_meta(conn, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn, key: str, value: str) -> None:
    conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                 (key, value))


def vec_table_exists(conn) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vec_mem'").fetchone() is not None


def create_vec_table(conn, dimensions: int) -> None:
    """The live vector index: one row per live chunk, partitioned by namespace."""
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_mem USING vec0(chunk_id integer primary key, "
        f"namespace text partition key, embedding float[{int(dimensions)}] distance_metric=cosine)")


def vec_version(driver: Driver) -> str | None:
    """The sqlite-vec version this driver loads (None when it cannot)."""
    if not driver.vec:
        return None
    conn = driver.module.connect(":memory:")
    try:
        load_vec(conn)
        return conn.execute("SELECT vec_version()").fetchone()[0]
    finally:
        conn.close()


def integrity(conn) -> str:
    """`PRAGMA quick_check`: "ok", or the first problem SQLite found."""
    return conn.execute("PRAGMA quick_check").fetchone()[0]
