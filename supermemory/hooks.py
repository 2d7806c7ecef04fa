"""Claude Code / Codex hook entry points that fail open: errors go to stderr, exit code 0.

`supermemory hook <event>` reads the hook's JSON payload on stdin:

* `session-start` prints exactly one JSON object,
  `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": <briefing>}}`,
  for every `source` (startup, resume, clear, compact) and for Claude Code and Codex alike. The
  briefing never loads the embedding model (nor numpy).
* `pre-compact`, `stop` and `session-end` fold the new transcript lines into the session's one
  `session` memory (a new version of it when something changed); `session-end` also runs
  `MemoryStore.maintenance()`.

A watchdog enforces the hard time budget (`hooks.budget_seconds`, 2 s by default): when it
fires the process exits 0 with nothing more on stdout (the SessionStart answer is written under
a lock, so stdout holds either the whole JSON object or nothing). SQLite rolls back any
transaction the exit interrupts, and a capture whose memory row committed before its
bookkeeping did is found again by its external key. The embedding model is used for the
session memory when it can be loaded and run inside the budget; otherwise the digest is stored
for lexical recall only, and the database is never pinned to the `hash` fallback by a hook.

A capture hook notes its session in the data dir before it touches the database
(`capture.note_pending`) and drops the note once the transcript is read to its end. A note left
behind (the database write-locked past the budget, say) is captured later, once: by the next
SessionStart hook after its answer is out (lexical-only, inside the budget), or by the MCP
server while it idles.

A database file that is visibly damaged (not SQLite, or shorter than its header says) is left
untouched: the hook reports it on stderr and does nothing else. When SessionStart cannot make its briefing
(that, or any other error), its additionalContext is one line saying memory is unavailable this session and
to run `supermemory doctor` (stderr reaches the user only in verbose mode, never the agent).
"""
from __future__ import annotations

import json
import logging
import math
import os
import sys
import threading
import time
from pathlib import Path

from supermemory.runtime import hard_exit

logger = logging.getLogger(__name__)

EVENTS = ("session-start", "pre-compact", "session-end", "stop")
PLATFORMS = ("claude-code", "codex")
DEFAULT_BUDGET = 2.0
MAINTENANCE_MARGIN = 0.3   # seconds of the budget SessionEnd keeps after the links pass (checkpoint, exit)
# Payloads are small, but some carry text: Codex's Stop sends the last assistant message, Claude Code's
# UserPromptSubmit the prompt (a pasted log). Past this the payload cannot be parsed and defaults are used.
MAX_PAYLOAD = 64 * 1024 * 1024   # characters read from stdin (bytes when it is binary)

_SQLITE_MAGIC = b"SQLite format 3\x00"
_OUTPUT_LOCK = threading.Lock()
# Set when a bounded worker thread (model load / embedding) was left running past its time:
# the process then ends with os._exit so interpreter teardown never races native code.
_ABANDONED = threading.Event()
_WARNED: set = set()   # config problems already reported by this process


class DamagedDatabase(Exception):
    """The database file is visibly damaged; the hook leaves it untouched."""


# --- payload -----------------------------------------------------------------------------------

def _read_payload(stream) -> dict:
    if stream is None:
        return {}
    try:
        if stream.isatty():  # run by hand in a terminal: no payload is coming
            return {}
    except (AttributeError, ValueError, OSError):
        pass
    try:
        raw = stream.read(MAX_PAYLOAD + 1)
    except Exception as exc:  # noqa: BLE001 - closed, binary garbage, decode errors: all "no payload"
        sys.stderr.write(f"supermemory hook: cannot read stdin ({type(exc).__name__}); continuing with defaults\n")
        return {}
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str) or not raw.strip():
        return {}
    if len(raw) > MAX_PAYLOAD:
        sys.stderr.write(f"supermemory hook: stdin payload larger than {MAX_PAYLOAD // (1024 * 1024)} MB; "
                         "continuing with defaults\n")
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        sys.stderr.write("supermemory hook: stdin was not JSON; continuing with defaults\n")
        return {}
    if not isinstance(data, dict):
        sys.stderr.write("supermemory hook: stdin JSON was not an object; continuing with defaults\n")
        return {}
    return data


def _text(payload: dict, key: str) -> str | None:
    value = payload.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _project_dir(payload: dict, env=os.environ) -> str:
    """The project the hook runs for: payload `cwd`, SUPERMEMORY_PROJECT_CWD, CLAUDE_PROJECT_DIR, cwd."""
    for candidate in (payload.get("cwd"), env.get("SUPERMEMORY_PROJECT_CWD"), env.get("CLAUDE_PROJECT_DIR")):
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip()
    return os.getcwd()


def _transcript_path(payload: dict) -> str | None:
    path = _text(payload, "transcript_path")
    if path is None:
        return None
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        path = os.path.join(_project_dir(payload), path)
    return os.path.normpath(path)


def _sniff(path: str) -> str | None:
    """The platform that wrote a transcript, from its first lines (None when unknown/unreadable)."""
    from supermemory import transcripts

    lines, _ = transcripts.read_new_lines(path, 0, max_bytes=256 * 1024)
    found = transcripts.detect_platform(lines)
    return found if found in PLATFORMS else None


def _under(path: str, folder: str | None) -> bool:
    if not folder:
        return False
    folder = os.path.normpath(os.path.expanduser(folder)).replace("\\", "/").rstrip("/")
    return bool(folder) and path.replace("\\", "/").startswith(folder + "/")


def detect_platform(payload: dict, env=os.environ) -> str:
    """`codex` or `claude-code`.

    Order: an explicit SUPERMEMORY_PLATFORM; what the transcript's own lines say; where the
    transcript lives (`$CODEX_HOME`, `~/.codex/`, `rollout-*.jsonl` vs `~/.claude/`,
    `$CLAUDE_CONFIG_DIR`); the payload's shape (Codex may send `transcript_path: null`,
    Claude Code always sends a path); CLAUDE_PROJECT_DIR; else `claude-code`.
    """
    explicit = str(env.get("SUPERMEMORY_PLATFORM") or "").strip().lower()
    if explicit in ("codex", "openai-codex"):
        return "codex"
    if explicit in ("claude-code", "claude", "claude_code"):
        return "claude-code"
    path = _transcript_path(payload)
    if path:
        sniffed = _sniff(path)
        if sniffed:
            return sniffed
        norm = path.replace("\\", "/")
        if ("/.codex/" in norm or os.path.basename(norm).startswith("rollout-")
                or _under(norm, env.get("CODEX_HOME"))):
            return "codex"
        if "/.claude/" in norm or _under(norm, env.get("CLAUDE_CONFIG_DIR")):
            return "claude-code"
        return "claude-code"
    if "transcript_path" in payload:  # present but null/empty: only Codex does that
        return "codex"
    if "model" in payload and "permission_mode" in payload and not env.get("CLAUDE_PROJECT_DIR"):
        return "codex"
    return "claude-code"


# --- config and store ------------------------------------------------------------------------------

def _load_config(payload: dict | None = None):
    """The process config for the payload's project. A bad config file never fails the hook: each
    problem is reported once on stderr and the settings it concerns keep their defaults."""
    from supermemory.config import load_config

    config = load_config(cwd=_project_dir(payload or {}), strict=False)
    for problem in config.problems:
        if problem not in _WARNED:
            _WARNED.add(problem)
            sys.stderr.write(f"supermemory hook: {problem} (built-in defaults used instead; session continues)\n")
    return config


def _flag(value, default: bool = True) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("0", "false", "no", "off", "")
    return default if value is None else bool(value)


def _number(value, default: float, lo: float, hi: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if math.isnan(number) or number <= 0:
        return default
    return min(max(number, lo), hi)


def check_db_file(path) -> None:
    """Refuse a database file that is visibly damaged, before SQLite (or we) write to it.

    Checks the 100-byte header: the SQLite magic, a sane page size, a whole number of pages,
    and (when no WAL holds newer pages) a file at least as long as the header's page count.
    A missing or empty file is fine (it becomes a new database).
    Raises:
        DamagedDatabase: with a message naming what is wrong.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    except OSError:
        return  # let the real open report it
    if not path.is_file():
        raise DamagedDatabase(f"{path} is not a regular file")
    if size == 0:
        return
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError:
        return
    if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
        raise DamagedDatabase(f"{path} is not an SQLite database (bad header)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        raise DamagedDatabase(f"{path} has an invalid page size ({page_size})")
    for suffix in ("-wal", "-journal"):
        try:
            pending = os.path.getsize(str(path) + suffix)
        except OSError:
            pending = 0
        if pending:
            return  # a checkpoint or rollback in progress may legitimately leave the main file short
    if size % page_size:
        raise DamagedDatabase(f"{path} is truncated ({size} bytes is not a whole number of "
                              f"{page_size}-byte pages)")
    pages = int.from_bytes(header[28:32], "big")
    if pages and header[24:28] == header[92:96] and pages * page_size > size:
        raise DamagedDatabase(f"{path} is truncated (its header counts {pages} pages, the file holds "
                              f"{size // page_size})")


def _could_create(path) -> bool:
    """Whether a write could create `path`: its nearest existing folder is a folder this process may write in."""
    for parent in path.parents:
        if parent.exists():
            return parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)
    return False


def _open_store(config, *, embedder=None, reading: bool = False):
    """The hook's store. `reading` (SessionStart, which only reads): no database yet, in a data dir a write could
    create it in, briefs from an empty one in memory, so a hook never creates the file before anything is stored
    (`doctor` says "created on first write"); a data dir no write could make fails as before, and is said."""
    from supermemory.core import MemoryStore

    if reading and not config.db_path.exists() and _could_create(config.db_path):
        return MemoryStore(":memory:", config=config, rebuild_index=False)
    try:
        check_db_file(config.db_path)
    except DamagedDatabase as exc:
        raise DamagedDatabase(
            f"{exc}. It was left untouched; move it aside (or restore a backup / `supermemory import` an "
            "export), and see `supermemory doctor`") from None
    return MemoryStore(config.db_path, config=config, embedder=embedder, rebuild_index=False)


class _HookEmbedder:
    """The configured embedder, resolved lazily and bounded by the hook's deadline.

    Anything that keeps it from producing vectors in time (model missing, provider unknown,
    a DB pinned to another model, the budget running out) surfaces as
    `EmbeddingUnavailableError`, which `MemoryStore` turns into a lexical-only write. The
    `hash` fallback is used only when the database is already pinned to it, so a hook never
    pins a fresh database to the fallback behind the user's back.
    """

    def __init__(self, config, deadline: float | None = None, *, refuse: str | None = None):
        """:param refuse: never load the model, for this reason (the SessionStart hook's owed captures)."""
        self.config = config
        self.deadline = deadline
        self.refuse = refuse
        self.pinned = lambda: None
        self._provider = None
        self._error: Exception | None = None

    def _bounded(self, what: str, fn):
        from supermemory.errors import EmbeddingUnavailableError

        if self.refuse:
            raise EmbeddingUnavailableError(self.refuse)
        if self.deadline is None:
            return fn()
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise EmbeddingUnavailableError(f"no time left in the hook budget to {what}")
        box: dict = {}

        def work() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                box["error"] = exc

        worker = threading.Thread(target=work, name="supermemory-hook-embed", daemon=True)
        worker.start()
        worker.join(remaining)
        if worker.is_alive():
            _ABANDONED.set()
            raise EmbeddingUnavailableError(f"could not {what} within the hook's time budget")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _resolve(self):
        from supermemory.embed import HashProvider, get_provider
        from supermemory.errors import EmbeddingUnavailableError, SupermemoryError

        if self._provider is not None:
            return self._provider
        if self._error is not None:
            raise self._error
        try:
            try:
                provider = self._bounded("load the embedder", lambda: get_provider(self.config))
            except SupermemoryError as exc:
                pinned = self.pinned()
                if (pinned and pinned.get("provider") == HashProvider.provider_id
                        and _flag(self.config.get("embedder.allow_hash_fallback"))):
                    provider = HashProvider()
                else:
                    raise EmbeddingUnavailableError(
                        f"{exc} (this session is stored for lexical recall only; the hook does not pin the "
                        "database to the fallback embedder)") from exc
            pinned = self.pinned()
            if pinned is not None and pinned != provider.fingerprint():
                raise EmbeddingUnavailableError(
                    f"the database is pinned to {pinned.get('provider')}/{pinned.get('model')} but the configured "
                    f"embedder is {provider.provider_id}/{provider.model_id}; this session is stored for lexical "
                    "recall only (run `supermemory reindex`)")
        except EmbeddingUnavailableError as exc:
            self._error = exc
            raise
        self._provider = provider
        return provider

    def fingerprint(self) -> dict:
        return self._resolve().fingerprint()

    def embed_multi(self, texts, progress=None):
        return self._bounded("embed the session digest", lambda: self._resolve().embed_multi(texts, progress=progress))

    def embed_batch(self, texts):
        return self._bounded("embed", lambda: self._resolve().embed_batch(texts))

    def embed_query(self, text, *, instructed=False):
        return self._bounded("embed the query", lambda: self._resolve().embed_query(text, instructed=instructed))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._resolve(), name)


# --- the events ------------------------------------------------------------------------------------

def session_start(payload: dict) -> dict:
    """The SessionStart answer: the briefing as additionalContext (no model load, no numpy)."""
    config = _load_config(payload)
    store = _open_store(config, reading=True)
    try:
        tokens = int(_number(config.get("hooks.briefing_tokens"), 900, 50, 100_000))
        briefing = store.briefing(max_tokens=tokens, platform=detect_platform(payload), source=_text(payload, "source"),
                                  session_id=_text(payload, "session_id"))
    finally:
        store.close()
    from supermemory.render_briefing import briefing_view

    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": briefing_view(briefing)["text"]}}


def memory_unavailable(exc: Exception) -> dict:
    """The SessionStart answer when no briefing could be made (a damaged database, a data dir that is a file, …):
    one line telling the agent memory is out this session and what shows why, since stderr reaches only the
    user's verbose mode and the memory tools would otherwise fail with no word of the cause."""
    reason = " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": (
        f"supermemory: long-term memory is unavailable this session ({reason}); its memory tools will fail. "
        "Tell the user to run `supermemory doctor`.")}}


def capture(payload: dict, *, housekeeping: bool = False, deadline: float | None = None) -> dict:
    """PreCompact / SessionEnd / Stop: store the session digest; SessionEnd also tidies up.

    :param deadline: `time.monotonic()` value by which the work should be done (the hook's
        budget); reading and embedding stop early so the writes fit, None for no limit.
    """
    config = _load_config(payload)
    enabled = _flag(config.get("capture.enabled"))
    if not enabled and not housekeeping:
        return {"status": "disabled"}
    platform = detect_platform(payload)
    session_id = _text(payload, "session_id")
    path = _transcript_path(payload)
    if enabled and not path and platform == "codex" and session_id:
        from supermemory.transcripts import find_codex_rollout

        path = find_codex_rollout(session_id)
    read_deadline = embed_deadline = None
    if deadline is not None:
        left = deadline - time.monotonic()
        read_deadline = time.monotonic() + left * 0.4
        embed_deadline = deadline - min(0.5, left * 0.25)
    note = _note_owed(config, path, session_id=session_id, platform=platform, payload=payload) if enabled else None
    began = time.time()
    embedder = _HookEmbedder(config, embed_deadline)
    store = _open_store(config, embedder=embedder)
    embedder.pinned = store.pinned_model
    try:
        if enabled:
            result = store.capture_session(path, session_id=session_id, platform=platform,
                                           model=_text(payload, "model"), cwd=_project_dir(payload),
                                           deadline=read_deadline)
            if note is not None and result.get("complete", True):
                from supermemory.capture import settle_pending

                settle_pending(note, began)
        else:
            result = {"status": "disabled"}
        if housekeeping:
            result["maintenance"] = store.maintenance(
                sweep=_flag(config.get("lifecycle.sweep_on_session_end"), False),
                deadline=None if deadline is None else deadline - MAINTENANCE_MARGIN)
    finally:
        store.close()
    return result


def _note_owed(config, path, *, session_id, platform, payload) -> Path | None:
    """Note the session as owed before the database is touched (`capture.note_pending`): should this hook run
    out of time (the database write-locked past the budget), a later SessionStart or the MCP server captures it."""
    from supermemory.capture import note_pending

    if not path:
        return None
    try:
        return note_pending(config.home, path, session_id=session_id, platform=platform, model=_text(payload, "model"),
                            cwd=_project_dir(payload), namespace=config.default_namespace())   # a look: the retry claims
    except OSError as exc:
        logger.debug("cannot note the capture as owed: %s", exc)
        return None


RETRY_MIN_SECONDS = 0.5   # budget a SessionStart must have left to capture a session an earlier hook could not


def retry_owed(payload: dict, *, deadline: float) -> list[dict]:
    """After the SessionStart answer is out: capture the sessions earlier hooks left owed (`capture.retry_pending`),
    inside what is left of the budget, lexical-only (no model load here; the vectors are filled in later)."""
    from supermemory.capture import pending_min_age, pending_notes, retry_pending
    from supermemory.config import data_dir

    if not pending_notes(data_dir()):   # the common case: one listing of a missing folder
        return []
    left = deadline - time.monotonic()
    if left < RETRY_MIN_SECONDS:
        return []
    config = _load_config(payload)
    if not _flag(config.get("capture.enabled")):
        return []
    embedder = _HookEmbedder(config, refuse="the SessionStart hook does not load the model")
    store = _open_store(config, embedder=embedder)
    try:
        return retry_pending(store.context, config.home, min_age=pending_min_age(config),
                             deadline=time.monotonic() + (left - RETRY_MIN_SECONDS / 2) * 0.5,
                             wait_ms=int(min(200, left * 100)), step_bytes=1024 * 1024)
    finally:
        store.close()


def _budget() -> float:
    try:
        return _number(_load_config().get("hooks.budget_seconds"), DEFAULT_BUDGET, 0.05, 600)
    except Exception as exc:  # noqa: BLE001 - fail open: a broken config must not block the agent
        sys.stderr.write(f"supermemory hook: config problem ignored: {exc}\n")
        return DEFAULT_BUDGET


def _emit(stdout, text: str) -> None:
    """Write the whole answer or nothing: the watchdog cannot exit halfway through it."""
    with _OUTPUT_LOCK:
        stdout.write(text)
        stdout.flush()


def run_hook(event: str, *, stdin=None, stdout=None, budget: float | None = None, platform: str | None = None) -> int:
    """Entry point of `supermemory hook <event>`: always returns 0.

    :param budget: seconds before the watchdog ends the process (default `hooks.budget_seconds`).
    :param platform: `--platform` (claude-code / codex); anything else is warned about and detected instead.
    """
    if platform in PLATFORMS:
        os.environ["SUPERMEMORY_PLATFORM"] = platform
    elif platform:
        sys.stderr.write(f"supermemory hook: unknown platform {platform!r} (expected {' or '.join(PLATFORMS)}); "
                         "detecting it from the payload\n")
    started = time.monotonic()
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    budget = _budget() if budget is None else _number(budget, DEFAULT_BUDGET, 0.05, 3600)
    timer = threading.Timer(budget, _timeout, args=(event, budget))
    timer.daemon = True
    timer.start()
    try:
        if event not in EVENTS:
            sys.stderr.write(f"supermemory hook: unknown event {event!r} (expected one of {', '.join(EVENTS)})\n")
            return 0
        payload = _read_payload(stdin)
        if event == "session-start":
            try:
                answer = session_start(payload)
            except Exception as exc:  # noqa: BLE001 - the agent is told, then the error is reported as below
                _emit(stdout, json.dumps(memory_unavailable(exc), ensure_ascii=False) + "\n")
                raise
            _emit(stdout, json.dumps(answer, ensure_ascii=False) + "\n")
            retried = retry_owed(payload, deadline=started + budget)
            if retried:
                logger.info("owed captures: %s", retried)
        else:
            result = capture(payload, housekeeping=event == "session-end", deadline=started + budget)
            logger.info("captured: %s", result)
    except DamagedDatabase as exc:
        sys.stderr.write(f"supermemory hook {event}: {exc} (session continues)\n")
    except Exception as exc:  # noqa: BLE001 - hooks fail open by contract
        logger.debug("hook failed", exc_info=True)
        sys.stderr.write(f"supermemory hook {event}: {type(exc).__name__}: {exc} (session continues)\n")
    finally:
        timer.cancel()
        if _ABANDONED.is_set():
            hard_exit(0)
    return 0


def _timeout(event: str, budget: float) -> None:
    # Taking the output lock (never released: the process ends here) means a SessionStart
    # answer is either fully written or not at all; a stdout nobody reads cannot hold us past 1 s.
    _OUTPUT_LOCK.acquire(timeout=1.0)
    try:
        sys.stderr.write(f"supermemory hook {event}: time budget {budget:g}s exceeded; skipped (session continues)\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    finally:
        os._exit(0)


def default_transcript_dir() -> Path:
    """Where Claude Code keeps transcripts (for docs and diagnostics)."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"
