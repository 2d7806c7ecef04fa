"""One client connection: its state (version, client, roots, namespace, store, warm-up) and frame dispatch."""
from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from supermemory.config import Config, path_from_file_uri
from supermemory.errors import SupermemoryError
from supermemory.mcp.methods import HANDLERS
from supermemory.mcp.tools import TOOLS_BY_NAME
from supermemory.mcp.protocol import (INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
                                      JsonRpcError, error_response, loads, valid_id)

logger = logging.getLogger(__name__)

# A tool call that arrives before the client has answered our roots/list (the first one, or the one a
# `notifications/roots/list_changed` makes us send) waits for that answer this long, then runs in the namespace
# it had (the launch directory's, or the previous root's): the workspace root decides where a memory is written.
ROOTS_WAIT_SECONDS = 2.0
WAITS_FOR_ROOTS = ("tools/call",)
WARMUP_POLL_SECONDS = 0.2   # how often the idle loop looks whether the warm-up is done (work waits for it)
CAPTURE_LOOK_SECONDS = 30.0   # how often an idle server looks for captures a hook could not finish (one listing)
CAPTURE_BACKOFF_SECONDS = 300.0   # after a failed one (the database still locked, say)
CAPTURE_SLICE_SECONDS = 0.5   # transcript reading per idle turn (the capture goes on at the next turn)
CANCELLED = "notifications/cancelled"
CANCELLABLE = ("tools/call",)   # what a cancellation can stop before it runs (the rest answer at once, cheaply)
_CANCEL_FRAME_MAX = 4096   # a cancellation is a few hundred bytes; longer frames are not looked into early


class Session:
    """One client connection: negotiated version, client identity, namespace, the store, and the dispatch
    of its frames through `HANDLERS`.

    :param config: resolved settings.
    :param store_factory: `factory(namespace) -> MemoryStore`; the default opens `config.db_path`.
    :param write: callable that sends one frame (a JSON-ready dict).
    """

    def __init__(self, config: Config, *, store_factory: Callable[[str], Any] | None = None,
                 write: Callable[[dict], None] | None = None):
        self.config = config
        self._custom_factory = store_factory is not None
        self._factory = store_factory or self._open_default
        self._write = write or (lambda message: None)
        self._store = None
        self._idle_ok = True   # False after idle work failed: it is not retried in this session
        self._look_again = False   # a tool call ran: another process may have left chunks without a vector
        self._captures_at = time.monotonic()   # when to look next for captures hooks left owed (None: never)
        self.protocol_version: str | None = None
        self.client_info: dict = {}
        self.client_capabilities: dict = {}
        self.platform = "mcp"
        self.initialized = False
        self.roots_dir: str | None = None
        self._pending: dict[Any, str] = {}
        self._request_seq = 0
        self._roots_deadline: float | None = None   # monotonic time until which tool calls wait for roots
        self._roots_request: str | None = None      # our latest roots/list: older answers are out of date
        self._held: list[dict] = []                 # tool calls waiting for the roots answer, in arrival order
        self._told_roots = False                    # said on stderr that only the first of several roots is used
        self.warmup_thread: threading.Thread | None = None
        # ids named by cancellations the reader has read but the loop has not reached: requests before them still
        # waiting (queued behind a slow call, or held for the roots) are dropped unanswered
        self._cancels: set = set()
        self._cancels_lock = threading.Lock()

    # namespace and store

    def default_namespace(self) -> str:
        """SUPERMEMORY_NAMESPACE, then the project's: the client's first root (`apply_root` makes it the config's
        project dir), then the project dir / cwd. Only looked up: a read never claims a name, the first write
        does (`settle_namespace`)."""
        return self.config.default_namespace(record=False)

    def settle_namespace(self, tool_name: Any) -> None:
        """Before a tool call, the store's default namespace looked up again: another root with the same folder name
        may have claimed the name since this session started, and a read must then not show that project's
        memories as this one's. A write claims the name itself (`store.namespaces.claim_default`). A store the
        caller opened (`store_factory`) keeps its namespace until a workspace root names one.
        """
        tool = TOOLS_BY_NAME.get(tool_name) if isinstance(tool_name, str) else None
        if (tool is None or not tool.needs_store or self._store is None or self.config.explicit_namespace
                or (self._custom_factory and self.roots_dir is None)):
            return
        self._store.namespace = self.default_namespace()

    @property
    def cwd(self) -> str:
        if self.roots_dir:
            return self.roots_dir
        if self.config.project_dir:
            return str(self.config.project_dir)
        return os.getcwd()

    def _open_default(self, namespace: str):
        from supermemory.core import MemoryStore

        # `initialize` must answer fast: a search-index rebuild after an upgrade waits for the first tool call.
        return MemoryStore(self.config.db_path, config=self.config, namespace=namespace, cache_vectors=True,
                           rebuild_index=False)

    @property
    def store(self):
        """The MemoryStore, opened on first use (main thread only).

        Raises:
            SupermemoryError: the database cannot be opened.
        """
        if self._store is None:
            self._store = self._factory(self.default_namespace())
        return self._store

    def store_is_cheap(self) -> bool:
        """True when the store is open or its database already exists (so opening it creates nothing)."""
        return self._store is not None or self._custom_factory or Path(self.config.db_path).exists()

    def close(self) -> None:
        store, self._store = self._store, None
        if store is not None and not self._custom_factory:
            store.close()

    # outgoing traffic

    def send(self, message: dict) -> None:
        self._write(message)

    def request_client(self, method: str, params: dict | None = None) -> str:
        """Send a request to the client; its response is matched by our own id."""
        self._request_seq += 1
        request_id = f"sm-{method.split('/')[0]}-{self._request_seq}"
        self._pending[request_id] = method
        if method == "roots/list":
            self._roots_request = request_id
            if not self.config.explicit_namespace:   # at start-up and after the client changed its roots
                self._roots_deadline = time.monotonic() + ROOTS_WAIT_SECONDS
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def on_client_response(self, message: dict) -> None:
        """Responses to our requests (roots/list); anything else is dropped silently."""
        method = self._pending.pop(message.get("id"), None) if valid_id(message.get("id")) else None
        if method != "roots/list":
            logger.debug("ignoring a response from the client: id %r", message.get("id"))
            return
        if message.get("id") != self._roots_request:   # the roots changed again since we asked
            logger.info("ignoring the answer to an earlier roots/list (%r)", message.get("id"))
            return
        self._roots_deadline = None     # answered, whatever the answer: held tool calls can run
        if "error" in message:
            logger.warning("client could not list its workspace roots (%s); keeping namespace %s",
                           message.get("error"), self.default_namespace())
            return
        result = message.get("result")
        roots = result.get("roots") if isinstance(result, dict) else None
        paths = []
        for root in roots if isinstance(roots, list) else []:
            uri = root.get("uri") if isinstance(root, dict) else None
            path = path_from_file_uri(uri) if isinstance(uri, str) else None
            if path and path not in paths:
                paths.append(path)
        if not paths:
            logger.info("client listed no file:// roots; keeping namespace %s", self.default_namespace())
            return
        self.apply_root(paths[0])
        if len(paths) > 1 and not self._told_roots and not self.config.explicit_namespace:
            used = self.default_namespace()
            # Two folders of one repository (…/services/api, …/services/billing) are one project: one namespace.
            others: dict[str, list[str]] = {}
            for path in paths[1:]:
                name = dataclasses.replace(self.config, project_dir=Path(path)).default_namespace(record=False)
                if name != used:
                    others.setdefault(name, []).append(path)
            if others:
                self._told_roots = True   # once a connection: a multi-root workspace answers every roots/list alike
                logger.warning("the client lists %d workspace roots; memories use the first one's namespace (%s) only: "
                               "the memories of %s are not read or written unless a tool call names it",
                               len(paths), used, "; ".join(f"namespace {name} ({', '.join(where)})"
                                                           for name, where in others.items()))

    def apply_root(self, path: str) -> None:
        """Use a workspace root as the project (unless SUPERMEMORY_NAMESPACE pins one)."""
        self.roots_dir = path
        # The root is the project: the store's own claim at a write (`store.namespaces.claim_default`) reads it here.
        self.config = dataclasses.replace(self.config, project_dir=Path(path))
        if self._store is not None and not self._custom_factory:
            self._store.context.config = self.config
        if self._store is not None and not self.config.explicit_namespace:
            self._store.namespace = self.default_namespace()
        logger.info("workspace root %s → namespace %s", path, self.default_namespace())

    def start_warmup(self) -> None:
        """Resolve the embedder on this thread, then load its model in a daemon thread."""
        try:
            embedder = self.store.embedder
        except SupermemoryError as exc:
            logger.warning("embedding model warm-up skipped: %s", exc)
            return
        load = getattr(embedder, "load", None)
        if not callable(load):
            return
        self.warmup_thread = threading.Thread(target=_warm, args=(load,), name="supermemory-warmup", daemon=True)
        self.warmup_thread.start()

    # work done between requests

    def has_idle_work(self) -> bool:
        """True while the open store may hold chunks still without a vector (the rest of a long text), once the
        client is initialized and the model's warm-up is over (a slice before would load the model on this
        thread and hold the client's first requests, `tools/list` among them, for the load)."""
        return self._may_have_idle_work() and not self._warming()

    def _may_have_idle_work(self) -> bool:
        context = getattr(self._store, "context", None)
        return self._idle_ok and context is not None and (context.vectors_pending is not False or self._look_again)

    def _warming(self) -> bool:
        """Before `notifications/initialized` (which starts the warm-up) or while the warm-up loads the model."""
        return not self.initialized or (self.warmup_thread is not None and self.warmup_thread.is_alive())

    def idle_wait(self) -> float | None:
        """How long the loop may wait for the next frame: 0 with idle work to do, a short poll while the warm-up
        holds it back, else as long as held tool calls and the next look for owed captures allow (None: until a
        frame comes)."""
        if self.has_idle_work():
            return 0
        waits = [self.roots_wait()]
        if self._may_have_idle_work():   # the warm-up is still loading the model
            waits.append(WARMUP_POLL_SECONDS)
        elif self._captures_at is not None and self.initialized:
            waits.append(WARMUP_POLL_SECONDS if self._warming() else max(0.0, self._captures_at - time.monotonic()))
        waits = [wait for wait in waits if wait is not None]
        return min(waits) if waits else None

    def idle_work(self) -> None:
        """Embed one slice of the chunks still without a vector: a request that arrives meanwhile waits
        about a second at most, and a long text gets its vectors while the agent works. After a tool call
        it also looks again when another process wrote meanwhile (a CLI `remember`, another server).
        With no vectors to fill in, it captures (a slice of) a session a hook left owed."""
        if not self.has_idle_work():
            if self._captures_at is not None and not self._warming() and time.monotonic() >= self._captures_at:
                self.capture_owed()
            return
        self._look_again = False
        try:
            self._store.fill_vectors(limit=1, if_changed=True)
        except Exception:  # noqa: BLE001 - work between requests must never take the server down
            logger.exception("filling in vectors between requests failed; `supermemory maintenance` does it")
            self._idle_ok = False

    def capture_owed(self) -> None:
        """Capture one session a hook could not (`capture.retry_pending`: the database was write-locked past
        the hook's budget, say), a slice of its transcript at a time, then look again later."""
        from supermemory.capture import pending_min_age, pending_notes, retry_pending

        now, min_age = time.time(), pending_min_age(self.config)
        notes = pending_notes(self.config.home)
        due = [written for _, written in notes if now - written >= min_age]
        self._captures_at = time.monotonic() + CAPTURE_LOOK_SECONDS
        if not due:
            if notes:   # a hook may still be running: look again once its note is old enough
                self._captures_at = time.monotonic() + min(CAPTURE_LOOK_SECONDS, min_age - (now - notes[0][1]))
            return
        try:
            context = getattr(self.store, "context", None)
            if context is None:   # a store without a database behind it (tests' stand-ins)
                self._captures_at = None
                return
            results = retry_pending(context, self.config.home, min_age=min_age, limit=1, wait_ms=100,
                                    deadline=time.monotonic() + CAPTURE_SLICE_SECONDS, step_bytes=1024 * 1024)
        except SupermemoryError as exc:
            logger.warning("capturing a session a hook left owed failed: %s", exc)
            results = [{"status": "failed"}]
        except Exception:  # noqa: BLE001 - work between requests must never take the server down
            logger.exception("capturing a session a hook left owed failed; `supermemory backfill` captures it")
            self._captures_at = None
            return
        if any(result.get("status") == "failed" for result in results):
            self._captures_at = time.monotonic() + CAPTURE_BACKOFF_SECONDS
        elif results:
            self._captures_at = time.monotonic()   # more may be owed (or this one only partly read): go on
        logger.info("owed captures: %s", results)

    # tool calls held until the workspace roots are known

    def roots_wait(self) -> float | None:
        """Seconds held tool calls may still wait for the roots answer (None: nothing is held)."""
        if not self._held or self._roots_deadline is None:
            return None
        return max(0.0, self._roots_deadline - time.monotonic())

    def release_held(self, *, give_up: bool = False) -> list[dict]:
        """Run the held tool calls once the roots are answered, or when the wait is over (`give_up`, or the
        deadline passed); returns their responses in arrival order."""
        if not self._held:
            return []
        if self._roots_deadline is not None:
            if not give_up and time.monotonic() < self._roots_deadline:
                return []
            logger.warning("the client did not list its workspace roots within %g s; tool calls use namespace %s",
                           ROOTS_WAIT_SECONDS, self.default_namespace())
            self._roots_deadline = None
        held, self._held = self._held, []
        return [r for r in (self.handle_message(m) for m in held) if r is not None]

    # cancellation

    def note_cancellation(self, frame: bytes) -> None:
        """Called by the frame reader for every frame as it is read, so a cancellation is known before the loop
        reaches the request it cancels (MCP: the receiver should stop processing it and not answer it)."""
        if len(frame) > _CANCEL_FRAME_MAX or CANCELLED.encode() not in frame:
            return
        try:
            request_id = cancel_target(loads(frame.decode("utf-8")))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return
        if request_id is not None:
            with self._cancels_lock:
                self._cancels.add(request_id)

    def cancelled(self, request_id: Any) -> None:
        """The loop reached the cancellation of `request_id`: a tool call held with that id is dropped, and the
        note is done with (every request before the cancellation has been dispatched or dropped by now)."""
        with self._cancels_lock:
            self._cancels.discard(request_id)
        kept = [message for message in self._held if message.get("id") != request_id]
        if len(kept) < len(self._held):
            logger.info("request %r: cancelled by the client while it waited for the roots; not run", request_id)
        self._held = kept

    def _cancelled_ahead(self, request_id: Any) -> bool:
        with self._cancels_lock:
            return request_id in self._cancels

    # incoming traffic

    def handle_frame(self, frame: bytes) -> dict | None:
        """One raw line in, at most one response out (None for notifications and client responses)."""
        try:
            text = frame.decode("utf-8")
        except UnicodeDecodeError as exc:
            return error_response(None, PARSE_ERROR, f"Parse error: invalid UTF-8 ({exc.reason} at byte {exc.start})")
        if not text.strip():
            return None
        try:
            message = loads(text)
        except (ValueError, RecursionError) as exc:
            return error_response(None, PARSE_ERROR, f"Parse error: {str(exc)[:200]}")
        return self.handle_message(message)

    def handle_message(self, message: Any) -> dict | None:
        """Dispatch one decoded JSON-RPC message through HANDLERS."""
        if isinstance(message, list):
            return error_response(None, INVALID_REQUEST, "batch requests are not supported; send one JSON-RPC object per line")
        if not isinstance(message, dict):
            return error_response(None, INVALID_REQUEST, "a request must be a JSON object")
        if "method" not in message and ("result" in message or "error" in message):
            try:
                self.on_client_response(message)
            except Exception:  # noqa: BLE001 - the dispatch loop's top-level handler: the session goes on
                logger.exception("could not use the client's response %r", message.get("id"))
            return None
        notification = "id" not in message
        request_id = message.get("id")
        reply_id = request_id if valid_id(request_id) else None
        method = message.get("method")
        if not isinstance(method, str) or not method:
            # Without a method a message is no notification: JSON-RPC 2.0 answers it with Invalid Request and a
            # null id, as its own example `{"jsonrpc": "2.0", "method": 1}` shows (`{"jsonrpc": "2.0"}` got nothing).
            return error_response(reply_id, INVALID_REQUEST, "method must be a non-empty string")
        if message.get("jsonrpc") != "2.0":
            return None if notification else error_response(reply_id, INVALID_REQUEST, 'jsonrpc must be "2.0"')
        if not notification and reply_id is None:
            return error_response(None, INVALID_REQUEST, "id must be a string or an integer")
        params = message.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return None if notification else error_response(request_id, INVALID_PARAMS, "params must be an object")
        if not notification and method in CANCELLABLE and self._cancelled_ahead(request_id):
            logger.info("request %r: cancelled by the client before it ran; not run, not answered", request_id)
            return None
        if method in WAITS_FOR_ROOTS and not notification and self._roots_deadline is not None:
            self._held.append(message)   # answered by release_held, once the roots say which namespace
            return None
        handler = HANDLERS.get(method)
        if handler is None:
            if notification:
                logger.debug("ignoring unknown notification %s", method)
                return None
            return error_response(request_id, METHOD_NOT_FOUND, "Method not found", method)
        self._look_again = self._look_again or method == "tools/call"
        try:
            if method == "tools/call":
                self.settle_namespace(params.get("name"))
            result = handler(self, params)
        except JsonRpcError as exc:
            return None if notification else error_response(request_id, exc.code, exc.message, exc.data)
        except Exception:  # noqa: BLE001 - the dispatch loop's top-level handler: log, generic error
            logger.exception("internal error while handling %s", method)
            return None if notification else error_response(request_id, INTERNAL_ERROR, "Internal error")
        if notification:
            return None
        return {"jsonrpc": "2.0", "id": request_id, "result": result}


def cancel_target(message: Any) -> Any:
    """The request id a message cancels, when it is a cancellation `handle_message` hands to its handler."""
    if not isinstance(message, dict) or "id" in message or message.get("jsonrpc") != "2.0":
        return None
    params = message.get("params")
    if message.get("method") != CANCELLED or not isinstance(params, dict):
        return None
    request_id = params.get("requestId")
    return request_id if valid_id(request_id) else None


def _warm(load: Callable[[], None]) -> None:
    try:
        load()
        logger.debug("embedding model loaded")
    except SupermemoryError as exc:
        logger.warning("embedding model warm-up failed: %s", exc)
    except Exception:  # noqa: BLE001 - the warm-up thread's top-level handler: never fatal
        logger.exception("embedding model warm-up failed")

