"""`supermemory ui` against misbehaving connections: oversized bodies, stalled clients, clients that go away."""
from __future__ import annotations

import http.client
import json
import logging
import socket
import struct
import threading
import time

import pytest

from supermemory.ui.server import MAX_BODY, UIServer


class Server:
    """A UI server on a thread, spoken to over raw sockets."""

    def __init__(self, store, request_timeout: float):
        self.server = UIServer(store, 0)
        self.server.request_timeout = request_timeout
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.port = self.server.port
        self.host = f"127.0.0.1:{self.port}"

    def connect(self, timeout: float = 10.0) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def headers(self, method: str, path: str, **extra: str) -> bytes:
        """A request head with the run's token, Host and Origin, ending with the blank line."""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}", f"X-Supermemory-Token: {self.server.token}",
                 f"Origin: http://{self.host}"] + [f"{name.replace('_', '-')}: {value}" for name, value in extra.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def get(self, path: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", path, headers={"Host": self.host, "X-Supermemory-Token": self.server.token})
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def server(store):
    running = Server(store, request_timeout=0.5)
    yield running
    running.close()


def _until_closed(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data


def test_an_oversized_content_length_is_refused_at_once_without_waiting_for_the_body(store):
    running = Server(store, request_timeout=30.0)      # far longer than the answer may take
    try:
        with running.connect() as sock:
            started = time.monotonic()
            sock.sendall(running.headers("POST", "/api/forget", Content_Type="application/json",
                                         Content_Length="999999999"))
            answer = _until_closed(sock)
            assert answer.startswith(b"HTTP/1.0 413 ") and b"at most" in answer, answer
            assert time.monotonic() - started < 5
        assert running.get("/api/meta")[0] == 200
    finally:
        running.close()


def test_a_refused_body_that_is_sent_anyway_still_gets_its_answer(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("POST", "/api/forget", body=b"x" * (MAX_BODY * 2),
                     headers={"Host": server.host, "X-Supermemory-Token": server.server.token,
                              "Origin": f"http://{server.host}", "Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 413 and b"at most" in response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("stall", [
    "get-without-blank-line", "post-without-its-body", "nothing-at-all"])
def test_a_stalled_client_is_dropped_after_the_timeout_and_holds_up_nobody(server, stall):
    head = {"get-without-blank-line": server.headers("GET", "/api/meta")[:-2],
            "post-without-its-body": server.headers("POST", "/api/forget", Content_Type="application/json",
                                                    Content_Length="100") + b'{"ids":',
            "nothing-at-all": b""}[stall]
    with server.connect() as stalled:
        if head:
            stalled.sendall(head)
        started = time.monotonic()
        assert server.get("/api/meta")[0] == 200          # served while the stalled one waits
        assert stalled.recv(4096) == b""                  # then the server closes the stalled connection
        assert time.monotonic() - started < 5             # after its 0.5 s timeout, not the client's 10 s


def test_a_client_that_goes_away_mid_answer_is_one_debug_line_not_a_traceback(server, store, capfd, caplog):
    memory_id = store.remember("Long notes: " + "grüße über straße " * 20_000, title="Long notes")["id"]
    handled = threading.Event()
    original = server.server.handle_error

    def noting(request, client_address):
        try:
            original(request, client_address)
        finally:
            handled.set()

    accept = server.server.get_request

    def small_buffers():
        """Accept with a small, fixed send buffer (no autotuning): the answer cannot all be in flight."""
        connection, address = accept()
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
        return connection, address

    server.server.handle_error = noting
    server.server.get_request = small_buffers
    caplog.set_level(logging.DEBUG, logger="supermemory.ui.server")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)     # with the server's 8 KB: far below the ~0.6 MB answer
    sock.settimeout(10)
    sock.connect(("127.0.0.1", server.port))
    sock.sendall(server.headers("GET", f"/api/memory?id={memory_id}"))
    assert sock.recv(64).startswith(b"HTTP/1.0 200")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))   # close with a reset
    sock.close()
    assert handled.wait(10), "the server never met the closed connection"
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err, err
    gone = [r for r in caplog.records if "went away" in r.getMessage()]
    assert len(gone) == 1 and gone[0].levelno == logging.DEBUG and not gone[0].exc_info
    assert "\n" not in gone[0].getMessage()
    assert json.loads(server.get("/api/meta")[1])                   # and it keeps serving
