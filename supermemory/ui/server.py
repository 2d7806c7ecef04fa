"""The local HTTP server of `supermemory ui`: 127.0.0.1 only, a per-run token, same-origin writes.

Rules every request passes before anything else runs:
- `Host` is `127.0.0.1:PORT` or `localhost:PORT` (a DNS-rebinding page names its own host);
- the run's random token comes with it (header `X-Supermemory-Token`, or `?token=` on a GET: the
  page, its assets and links opened from the printed URL); 403 otherwise;
- a write is a `POST` with a JSON body, the token in the header (never in the URL) and an `Origin`
  equal to this server's; a GET on a write endpoint is refused (405);
- every answer carries a strict Content-Security-Policy (scripts and styles from this origin only,
  no inline script), `nosniff`, no caching and no referrer.
Connections: a body longer than `MAX_BODY` is refused (413) from its `Content-Length` before a byte of it
is read; every request socket has a timeout (`REQUEST_TIMEOUT_S`), so a client that stalls (headers
without their blank line, a body that never comes) is dropped instead of holding a thread; a client
that goes away (a closed tab, a reset, a timeout) is one debug line, never a traceback on the terminal.
The store is used by one request at a time (one lock) and holds no transaction between requests:
every read is a statement of its own on an autocommit connection, so WAL checkpoints, the MCP
server and the hooks are never held up by an open page.

Stopping (`serve`): SIGINT and SIGTERM get handlers of their own for the run, installed even when the
process started with SIGINT ignored (a shell starting `cmd &` without job control passes SIG_IGN on
to it and its children, and Python then never raises KeyboardInterrupt: Ctrl-C and `kill -INT` did
nothing). The handlers only note the signal, never raise in the middle of a request's bookkeeping;
`signal.set_wakeup_fd` wakes the serving loop at once, whichever thread the kernel gave the signal
to. The loop then stops accepting, lets the request using the store finish (a bounded wait) and
returns, so the caller closes the store.
"""
from __future__ import annotations

import hmac
import json
import logging
import secrets
import selectors
import signal
import socket
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from supermemory.errors import InvalidInputError, NotFoundError, SupermemoryError
from supermemory.ui import api

logger = logging.getLogger(__name__)

DEFAULT_PORT = 7377
HOST = "127.0.0.1"
ASSETS = Path(__file__).resolve().parent / "assets"
TOKEN_HEADER = "X-Supermemory-Token"
TOKEN_PLACEHOLDER = "__SUPERMEMORY_TOKEN__"
MAX_BODY = 1 << 20
STOP_SIGNALS = ("SIGINT", "SIGTERM")
STOP_GRACE_S = 2.0      # how long a stopping server waits for the request using the store
REQUEST_TIMEOUT_S = 5.0     # a request socket's timeout: a client silent this long is dropped
LINGER_S = 0.5          # after refusing a body: how long to wait for more of it before closing
GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)   # the client went away
STATIC = {"/app.js": ("app.js", "text/javascript; charset=utf-8"),
          "/graph.js": ("graph.js", "text/javascript; charset=utf-8"),
          "/app.css": ("app.css", "text/css; charset=utf-8")}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class UIServer(ThreadingHTTPServer):
    """The page's server over one open `MemoryStore`, bound to 127.0.0.1.

    :param store: the open store every endpoint uses (one request at a time).
    :param port: the port; 0 picks a free one.
    :param token: the run's secret (default: a fresh random one).
    """

    daemon_threads = True
    request_timeout = REQUEST_TIMEOUT_S

    def __init__(self, store, port: int = 0, *, token: str | None = None):
        super().__init__((HOST, port), Handler)
        self.store = store
        self.token = token or secrets.token_urlsafe(24)
        self.lock = threading.Lock()
        self.stopping = False
        self.port = self.server_address[1]
        self.origins = {f"http://{HOST}:{self.port}", f"http://localhost:{self.port}"}
        self.hosts = {origin.split("//", 1)[1] for origin in self.origins}

    @property
    def url(self) -> str:
        """The page's address with the token (what the user opens)."""
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def handle_error(self, request, client_address) -> None:
        """A client that went away mid-request is one debug line; anything else keeps the traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, GONE):
            logger.debug("ui client %s:%s went away: %s", *client_address[:2], exc.__class__.__name__)
            return
        super().handle_error(request, client_address)

    def finish_store_calls(self, timeout: float = STOP_GRACE_S) -> bool:
        """Refuse every later store call (503) and wait up to `timeout` s for the running one.

        Returns True when no request uses the store any more (it can be closed).
        """
        self.stopping = True
        if not self.lock.acquire(timeout=timeout):
            return False
        self.lock.release()
        return True


class Handler(BaseHTTPRequestHandler):
    """One request: the security checks, then a static file or one `api` handler."""

    server: UIServer
    server_version = "supermemory-ui"
    sys_version = ""

    def setup(self) -> None:
        """Give the request socket the server's timeout (StreamRequestHandler applies `self.timeout`)."""
        self.timeout = self.server.request_timeout
        super().setup()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        logger.debug("%s %s", self.address_string(), format % args)

    # --- answers ----------------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str, allow: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if allow:
            self.send_header("Allow", allow)
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data, allow: str | None = None) -> None:
        # `<` escaped: even a browser that ignored the content type could not read markup from memory text.
        text = json.dumps(data, ensure_ascii=False, default=str).replace("<", "\\u003c")
        self._send(status, text.encode("utf-8"), "application/json; charset=utf-8", allow)

    def _refuse_body(self, status: int, message: str, length: int) -> None:
        """Answer a request whose body is refused, then close; the body is never read before the answer.

        What the client still sends right after (up to 8 MiB, while it keeps coming within `LINGER_S`) is
        read and dropped, so the close does not reset a connection the answer is still travelling on.
        """
        self._error(status, message)
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.settimeout(LINGER_S)
            left = min(max(length, 0), 8 * MAX_BODY)
            while left > 0:
                chunk = self.connection.recv(min(left, 1 << 16))
                if not chunk:
                    break
                left -= len(chunk)
        except OSError:     # silent or gone: the answer was sent
            pass

    def _error(self, status: int, message: str, allow: str | None = None) -> None:
        self._json(status, {"error": message}, allow)

    # --- the checks -------------------------------------------------------------------------------

    def _split(self) -> tuple[str, dict]:
        parsed = urllib.parse.urlsplit(self.path)
        return parsed.path, urllib.parse.parse_qs(parsed.query, keep_blank_values=True)

    def _token_ok(self, query: dict | None) -> bool:
        given = self.headers.get(TOKEN_HEADER)
        if given is None and query is not None:
            given = (query.get("token") or [None])[-1]
        return isinstance(given, str) and hmac.compare_digest(given.encode(), self.server.token.encode())

    def _refused(self, query: dict | None) -> str | None:
        """Why the request is refused (403), or None."""
        if self.headers.get("Host") not in self.server.hosts:
            return "unknown Host: open the address `supermemory ui` printed"
        if not self._token_ok(query):
            return "missing or wrong token: open the address `supermemory ui` printed"
        return None

    # --- methods ----------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path, query = self._split()
        refused = self._refused(query)
        if refused:
            return self._error(403, refused)
        if path in ("/", "/index.html"):
            html = (ASSETS / "index.html").read_text(encoding="utf-8").replace(TOKEN_PLACEHOLDER, self.server.token)
            return self._send(200, html.encode("utf-8"), "text/html; charset=utf-8")
        if path in STATIC:
            name, content_type = STATIC[path]
            return self._send(200, (ASSETS / name).read_bytes(), content_type)
        if path in api.POST and path not in api.GET:
            return self._error(405, "this endpoint changes the store: POST only", allow="POST")
        handler = api.GET.get(path)
        if handler is None:
            return self._error(404, f"no such page: {path}")
        params = {k: (v if k == "tag" else v[-1]) for k, v in query.items() if k != "token"}
        self._call(handler, params)

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802
        path, _ = self._split()
        refused = self._refused(None)     # a write's token comes in the header only
        if refused:
            return self._error(403, refused)
        if self.headers.get("Origin") not in self.server.origins or \
                self.headers.get("Origin", "").split("//", 1)[-1] != self.headers.get("Host"):
            return self._error(403, "cross-origin write refused")
        handler = api.POST.get(path)
        if handler is None:
            return self._error(405 if path in api.GET else 404, f"no write endpoint {path}",
                               allow="GET" if path in api.GET else None)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            return self._refuse_body(413, f"body must be at most {MAX_BODY} bytes", length)
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            return self._refuse_body(415, "send JSON (Content-Type: application/json)", length)
        try:
            params = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, UnicodeDecodeError, RecursionError):
            return self._error(400, "the body is not JSON")
        if not isinstance(params, dict):
            return self._error(400, "the body must be a JSON object")
        self._call(handler, params)

    def _refuse_method(self) -> None:
        self._error(405, "GET or POST only", allow="GET, POST")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse_method

    def _call(self, handler, params: dict) -> None:
        try:
            with self.server.lock:
                stopping = self.server.stopping     # checked under the lock: the store may be closing
                result = None if stopping else handler(self.server.store, params)
        except NotFoundError as exc:
            return self._error(404, str(exc))
        except SupermemoryError as exc:
            return self._error(400, str(exc))
        except Exception:  # noqa: BLE001 - the server's top-level handler: logged, never a traceback to the page
            logger.exception("ui request %s failed", self.path.split("?")[0])
            return self._error(500, "internal error (logged on the terminal running `supermemory ui`)")
        if stopping:
            return self._error(503, "the page is stopping (`supermemory ui` was interrupted)")
        self._json(200, result)


def make_server(store, port: int | None = None, *, token: str | None = None) -> UIServer:
    """A server on `port`; None means `DEFAULT_PORT`, or a free port when that one is taken.

    Raises:
        InvalidInputError: an explicitly asked port is taken or not allowed.
    """
    if port is None:
        try:
            return UIServer(store, DEFAULT_PORT, token=token)
        except OSError:
            return UIServer(store, 0, token=token)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InvalidInputError(f"port must be between 0 and 65535, got {port!r}")
    try:
        return UIServer(store, port, token=token)
    except OSError as exc:
        raise InvalidInputError(f"cannot listen on {HOST}:{port} ({exc.strerror}); pick another --port "
                                "or leave it out for a free one") from None


class _StopSignals:
    """SIGINT and SIGTERM, for one `with` block in the main thread: each sets `received` and writes
    its number to a socket the serving loop waits on (`signal.set_wakeup_fd`, written by the C-level
    handler in whichever thread the kernel picked). The previous handlers and wakeup fd come back on
    exit."""

    def __init__(self):
        self.received: int | None = None
        self.reader, self.writer = socket.socketpair()
        self.signals = [getattr(signal, name) for name in STOP_SIGNALS if hasattr(signal, name)]
        self.previous: dict = {}
        self.previous_fd = -1
        self.wakeup_set = False

    def _handle(self, signum, frame) -> None:
        if self.received is None:
            self.received = signum

    def __enter__(self) -> "_StopSignals":
        try:
            for sock in (self.reader, self.writer):
                sock.setblocking(False)
            self.previous_fd = signal.set_wakeup_fd(self.writer.fileno(), warn_on_full_buffer=False)
            self.wakeup_set = True
            for sig in self.signals:
                self.previous[sig] = signal.signal(sig, self._handle)   # over an inherited SIG_IGN too
        except BaseException:   # e.g. not the main thread: put back what was changed
            self.__exit__()
            raise
        return self

    def drain(self) -> None:
        """Read the signal numbers written so far; note the first stop signal."""
        try:
            data = self.reader.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        for signum in data:
            if signum in self.signals and self.received is None:
                self.received = signum

    def __exit__(self, *exc) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        self.previous.clear()
        if self.wakeup_set:
            signal.set_wakeup_fd(self.previous_fd)
            self.wakeup_set = False
        self.reader.close()
        self.writer.close()


def _serve_until_stopped(server: UIServer, stop: _StopSignals) -> None:
    """Accept requests (each on its own thread) until a stop signal arrives."""
    server.timeout = 0      # handle_request() below only runs once the socket is ready: never wait
    with selectors.DefaultSelector() as selector:
        selector.register(server, selectors.EVENT_READ, "request")
        selector.register(stop.reader, selectors.EVENT_READ, "signal")
        while stop.received is None:
            for key, _ in selector.select(timeout=0.5):   # the timeout: a handler run without a wakeup byte
                if key.data == "signal":
                    stop.drain()
                elif stop.received is None:
                    server.handle_request()


def serve(store, *, port: int | None = None, open_browser: bool = True, out=None) -> int:
    """Run the page until Ctrl-C (SIGINT) or SIGTERM: print its address (with the token), open the
    browser unless asked not to, and serve. Call it from the main thread (signal handlers). On a
    stop signal the server stops accepting, waits briefly for the request using the store, and
    returns the exit code (0); the caller then closes the store.

    Raises:
        InvalidInputError: the asked port is taken.
    """
    out = out or sys.stdout
    server = make_server(store, port)
    try:
        with _StopSignals() as stop:     # before the address is printed: whoever read it can stop us
            out.write(f"supermemory ui: {server.url}\n(the address holds this run's token; Ctrl-C stops the page)\n")
            out.flush()
            if open_browser:
                import webbrowser

                webbrowser.open(server.url)
            _serve_until_stopped(server, stop)
    finally:
        server.server_close()
        if not server.finish_store_calls():
            logger.warning("a request still used the store %.0f s after the stop signal; closing it anyway",
                           STOP_GRACE_S)
    out.write("\nsupermemory ui: stopped\n")
    out.flush()
    return 0
