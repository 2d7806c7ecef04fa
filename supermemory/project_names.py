"""The data dir and the names of namespaces.

A name given by the user normalised, a project folder's own name (its git root, the main worktree of a linked one),
the record that claims a name for the first root written under it, and a path argument read as the project whose
root it names. No settings: `config.Config` asks here.
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
import unicodedata
import urllib.parse
from pathlib import Path
from typing import Mapping

from supermemory.errors import InvalidInputError

logger = logging.getLogger(__name__)

DB_FILE = "memory.db"
GLOBAL_NAMESPACE = "global"
ALL_NAMESPACES = "*"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The data directory: `SUPERMEMORY_HOME`, else `~/.supermemory`."""
    env = os.environ if env is None else env
    home = env.get("SUPERMEMORY_HOME")
    return Path(home).expanduser() if home else Path.home() / ".supermemory"


_NS_KEPT = "._-"
_NS_MAX_CHARS = 64
# Letters that show as blank (Hangul fillers): a name of them alone would look empty.
_NS_BLANK = frozenset("\u115f\u1160\u3164\uffa0")


def _slug(name: str) -> str:
    """Letters, digits and combining marks of any script plus `._-`, every other run as one `-`.

    NFKC-normalised and case-folded first, so full-width, decomposed (macOS) and upper-case spellings
    of a name are one namespace. A combining mark is kept only after a letter, digit or mark.
    """
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    out: list[str] = []
    in_bad_run = False
    for ch in text:
        group = unicodedata.category(ch)[0]
        keep = (ch in _NS_KEPT or (group in "LN" and ch not in _NS_BLANK)
                or (group == "M" and bool(out) and not in_bad_run and out[-1] not in _NS_KEPT))
        if keep:
            out.append(ch)
        elif not in_bad_run:
            out.append("-")
        in_bad_run = not keep
    return "".join(out).strip("-.")[:_NS_MAX_CHARS].rstrip("-.")


def normalize_namespace(name: str, *, allow_all: bool = False) -> str:
    """A namespace name as stored: NFKC, case-folded, letters and digits of any script plus `._-`.

    Everything else (spaces, slashes, quotes, control and format characters, emoji) becomes `-`;
    leading and trailing `-` and `.` go (so never `.`, `..` or a path separator), and the name is
    cut to 64 characters. `*` only where reading everything is allowed.

    :param name: the name a caller gave or a folder's name.
    :param allow_all: accept `*` (all namespaces, reads only).
    Raises:
        InvalidInputError: empty, not a string, `*` for a write, or no letter or digit of any script.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError("namespace must be a non-empty string")
    name = name.strip()
    if name == ALL_NAMESPACES:
        if allow_all:
            return name
        raise InvalidInputError("namespace '*' can be read from but not written to")
    slug = _slug(name)
    if not slug:
        raise InvalidInputError(f"namespace {name!r} has no usable characters (it needs a letter or digit, any script)")
    return slug


def path_from_file_uri(uri: str) -> str | None:
    """Local path of a `file://` URI (None for other schemes): how MCP clients name workspace roots."""
    try:
        parsed = urllib.parse.urlparse(uri)
    except ValueError:   # e.g. "file://[::1/x", an unclosed IPv6 host
        return None
    if parsed.scheme != "file":
        return None
    path = urllib.parse.unquote(parsed.path)
    if "\x00" in path:   # %00: no local path holds it
        return None
    if os.name == "nt" and re.match(r"^/[A-Za-z]:", path):
        path = path[1:]
    return path or None


def looks_like_path(name: object) -> bool:
    """Whether a namespace argument is written as a path (holds `/` or `\\`, or starts with `~` or `.`): such an
    argument is read as a project root (`project_namespace`), never turned into a name of its own."""
    if not isinstance(name, str):
        return False
    text = name.strip()
    return "/" in text or "\\" in text or text.startswith(("~", "."))


def project_namespace(path: str, *, home: Path, project_dir: Path | None, current: str) -> tuple[str | None, bool]:
    """The namespace of the known project a path argument lies in, and whether the path is that project's root.

    `~` is expanded and a relative path read from the current project's folder (`project_dir`, else the cwd).
    Known projects: the current one (its namespace is `current`, the store's default) and every root
    `<home>/namespaces` records as holding a name (the first write under a root records it); a root whose folder
    name has no letter or digit has its `project-<hash>` name. (None, False) for a path in no known project.

    :param path: the argument as given. :param home: the data dir holding the records.
    :param current: the store's default namespace (the current project's).
    """
    base = Path(project_dir) if project_dir else Path.cwd()
    if "://" in path or path.strip().lower().startswith("file:"):   # a URI: file:// names a workspace root (MCP)
        path = path_from_file_uri(path.strip()) or ""
        if not path:
            return None, False
    try:
        folder = (base / Path(path.strip()).expanduser()).resolve()   # an absolute path replaces `base`
        root, live = _project(folder)
        here = _project(base)[0]
    except (OSError, ValueError, RuntimeError):   # a NUL, a lone surrogate, a symlink loop: no folder of ours
        return None, False
    if not live:
        return None, False
    exact = os.path.normcase(str(folder)) == os.path.normcase(str(root))
    if root == here and current != ALL_NAMESPACES:   # '*' is no project's name: look the root up instead
        return current, exact
    name, alone = _folder_name(root)
    if alone:
        return name, exact
    for held in (name, _with_hash(name, root)):
        owner = _owner(Path(home) / "namespaces" / held)
        if owner is not None and (owner == os.fsencode(str(root)) or _same_folder(owner, root)):
            return held, exact
    return None, False


def project_root(start: Path) -> Path:
    """Nearest ancestor holding `.git` (the project), else the directory itself; a folder this user
    may not look into (stat refused) counts as holding none."""
    start = Path(start).expanduser()
    try:
        start = start.resolve()
    except (OSError, ValueError):   # ValueError: a NUL or a lone surrogate, which no real path holds
        pass
    for candidate in (start, *start.parents):
        try:
            if (candidate / ".git").exists():
                return candidate
        except (OSError, ValueError):   # e.g. PermissionError: a parent this user cannot search
            continue
    return start


def _small_text(path: Path) -> str | None:
    """The first 4 KB of a small file, stripped (None when it is not a readable regular file)."""
    try:
        if not path.is_file():
            return None
        with open(path, "rb") as handle:
            return handle.read(4096).decode("utf-8", "surrogateescape").strip()
    except (OSError, ValueError):
        return None


def main_worktree(root: Path) -> Path:
    """The project a git worktree belongs to: the folder of its main repository; any other root as it is.

    A linked worktree's `.git` is a file, `gitdir: <repo>/.git/worktrees/<name>`, and that folder holds a
    `commondir` file naming the repository's own git folder: the project is the folder holding it (`.git`,
    or a hidden one such as `.bare`), or the repository itself when it is bare (`shop.git`). A submodule's
    `.git` file names `.git/modules/<name>` (no `commondir`): a project of its own, as is a malformed or
    unreadable `.git` file.
    """
    text = _small_text(root / ".git")
    if not text or not text.startswith("gitdir:"):
        return root
    try:
        gitdir = root / text[len("gitdir:"):].splitlines()[0].strip()   # an absolute path replaces `root`
        common = _small_text(gitdir / "commondir")
        if not common:
            return root
        common_dir = (gitdir / common.splitlines()[0]).resolve()
        main = common_dir.parent if common_dir.name.startswith(".") else common_dir
        return main if main.is_dir() and main != root else root
    except (OSError, ValueError, IndexError):
        return root


def _path_hash(path: Path | str) -> str:
    where = unicodedata.normalize("NFC", str(path)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(where).hexdigest()[:10]


def hashed_namespace(where: Path | str) -> str:
    """`project-` plus a short hash of a path (or of what stands for one): the name of a project whose
    folder name has no letter or digit of any script."""
    return "project-" + _path_hash(where)


def _folder_name(root: Path) -> tuple[str, bool]:
    """The name a project root's folder suggests and whether it is that root's alone already: its slug;
    `project-<hash>` for a name with no letter or digit; `root` for the filesystem root."""
    if not root.name:
        return "root", False
    try:
        return normalize_namespace(root.name), False
    except InvalidInputError:
        return hashed_namespace(root), True


def _with_hash(name: str, root: Path) -> str:
    return name[:_NS_MAX_CHARS - 11].rstrip("-.") + "-" + _path_hash(root)


def _owner(record: Path) -> bytes | None:
    """The path recorded as holding a name (None: no record, or one that cannot be read)."""
    try:
        return record.read_bytes()
    except (OSError, ValueError):
        return None


def _write_record(record: Path, mine: bytes, *, replace: bool = False) -> bool:
    """Write `record` whole (a reader never sees it half-written). False when another root's claim was
    there first (unless `replace`) or the data dir cannot be written."""
    temp = record.with_name(f".{record.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(temp, "wb") as handle:
            handle.write(mine)
        if replace:
            os.replace(temp, record)
            return True
        try:
            os.link(temp, record)    # atomic and never overwrites: of two claims of one name, one wins
        except FileExistsError:
            return False
        except OSError:              # a filesystem without hard links
            with open(record, "xb") as handle:
                handle.write(mine)
        return True
    except OSError:
        return False
    finally:
        try:
            os.unlink(temp)
        except OSError:
            pass


def _same_folder(owner: bytes, root: Path) -> bool:
    try:
        return os.path.samefile(os.fsdecode(owner), root)
    except (OSError, ValueError):
        return False


def _moved_hashed_name(records: Path, name: str) -> str | None:
    """The one hashed name `name-<hash>` whose recorded folder is gone, if exactly one is: the name a project
    that got a hashed name had before it moved (its hash was its old path's). Two or more gone: no guess."""
    stem = name[:_NS_MAX_CHARS - 11].rstrip("-.") + "-"
    gone = []
    for record in records.glob(stem + "?" * 10):
        if not all(c in "0123456789abcdef" for c in record.name[len(stem):]):
            continue
        owner = _owner(record)
        if owner is not None and not os.path.lexists(os.fsdecode(owner)):
            gone.append(record.name)
    return gone[0] if len(gone) == 1 else None


def _claimed(name: str, root: Path, home: Path | None, live: bool, record: bool = True) -> str:
    """`name` when no other project root holds it, else `name-<hash of root>`, as recorded in
    `<data dir>/namespaces/<name>` (the root that first used a name keeps it; `global` is everyone's).

    A root whose owner folder is gone takes the name over (a moved project keeps its memories), unless it
    holds a hashed name of its own already: that root is another project, and taking the name would show it
    the moved project's memories and hide its own. With `record` False nothing is written (every read, doctor,
    dry runs): the answer is the name a claim would give now."""
    home = data_dir() if home is None else Path(home)
    shared = name in (GLOBAL_NAMESPACE, ALL_NAMESPACES)
    if record and not (home / DB_FILE).exists():   # no store to write to: no write claims a name
        return _with_hash(name, root) if shared else name
    records = home / "namespaces"
    try:
        mine = os.fsencode(str(root))
    except UnicodeError:   # a lone surrogate (a roots URI no folder has): nothing to look up or record
        return _with_hash(name, root) if shared else name
    distinct = _with_hash(name, root)
    owner = None
    try:
        if record:
            records.mkdir(exist_ok=True)
        if not shared:
            owner = _owner(records / name)
            if owner is None and (not record or _write_record(records / name, mine)):
                return name
            owner = _owner(records / name) if owner is None else owner
            if owner in (None, mine):    # nobody holds it and it cannot be recorded: the name as derived
                return name
            if live and _same_folder(owner, root):   # one folder, spelled another way
                return name
            if live and not os.path.lexists(os.fsdecode(owner)) and _owner(records / distinct) != mine:
                if record:               # its first root is gone, and this root has no name of its own: moved here
                    _write_record(records / name, mine, replace=True)
                return name
    except (OSError, ValueError):   # a data dir that cannot be read: the name as derived
        if not shared:
            return name
    if live and _owner(records / distinct) is None:
        moved = _moved_hashed_name(records, name) if records.is_dir() else None
        if moved is not None:   # a project with a hashed name, moved here: its name (and memories) come along
            if record:
                _write_record(records / moved, mine, replace=True)
            return moved
    if record and _write_record(records / distinct, mine) and live:   # told once, when first recorded
        why = ("'global' is shared by every project" if shared else f"{name!r} belongs to {os.fsdecode(owner)}")
        logger.warning("the project %s uses namespace %r (%s); to choose one, pass --namespace NAME "
                       "(MCP: the `namespace` argument) or set SUPERMEMORY_NAMESPACE=NAME for its sessions",
                       root, distinct, why)
    return distinct


def namespace_for_dir(directory: str | os.PathLike, *, home: Path | None = None, record: bool = True) -> str:
    """Namespace of a project directory: the slug of its project root's folder name, that root's alone.

    The root is the nearest folder holding `.git`, or for a git worktree its main repository's
    (`main_worktree`). Two roots whose folders share a name (`~/a/backend`, `~/b/backend`) never share a
    namespace: the first root to write under the name keeps it and the other gets `backend-` plus a short hash
    of its resolved path (`<data dir>/namespaces/<name>` records which root holds a name; a warning says so
    once). A read only looks (`record` False): it claims nothing and still answers this root's name. A folder
    named `global` (the namespace every project reads) gets `global-<hash>`, one with no letter or digit of any
    script `project-<hash>`; the filesystem root is `root`.

    :param directory: a folder of the project (need not exist: a past session's folder may be gone, and
        then it never takes over a name, nor is told).
    :param home: the data dir holding the record (default `data_dir()`); nothing is claimed while it
        holds no database (no write has happened).
    :param record: claim the name (a write: remember, capture, backfill, import-rules); False: claim nothing,
        only say which name this root has or would get (every read, doctor, dry runs).
    """
    root, live = _project(directory)
    name, alone = _folder_name(root)
    return name if alone else _claimed(name, root, home, live, record)


def _project(directory: str | os.PathLike) -> tuple[Path, bool]:
    """A directory's project root (a worktree's main repository) and whether that folder exists."""
    root = project_root(Path(directory))
    live = root.is_dir()
    return (main_worktree(root) if live else root), live


def _derives(name: str, namespace: str) -> bool:
    """Whether `namespace` is a name a root whose folder suggests `name` can be given: the name itself (never
    the shared `global`) or one of its hashed forms."""
    stem = name[:_NS_MAX_CHARS - 11].rstrip("-.") + "-"
    hashed = (len(namespace) == len(stem) + 10 and namespace.startswith(stem)
              and all(c in "0123456789abcdef" for c in namespace[len(stem):]))
    return hashed or (namespace == name and name not in (GLOBAL_NAMESPACE, ALL_NAMESPACES))


def claim_for_write(directory: str | os.PathLike, current: str, *, home: Path | None = None) -> str:
    """The namespace a write to the default namespace `current` of a project directory goes to, claimed.

    Reads only look (`namespace_for_dir(record=False)`), so the name is claimed here, by the first write: of two
    roots with one folder name, the one whose write comes first keeps the name (the claim is an atomic link;
    the other gets its hashed name). `current` is what a look gave when the store opened: when another root
    claimed that name since, the answer is this root's own name, so the write never lands in the other
    project's namespace. A `current` this root would never be given (a namespace the caller chose) is kept.

    :param directory: a folder of the project. :param home: the data dir holding the records.
    """
    root, live = _project(directory)
    name, alone = _folder_name(root)
    if alone or not _derives(name, current):
        return current
    return _claimed(name, root, home, live, record=True)
