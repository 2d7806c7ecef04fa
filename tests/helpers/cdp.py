"""A headless Debian chromium driven over the Chrome DevTools Protocol with a small stdlib websocket client.

Nothing here downloads a browser: it runs the system `chromium` (Debian's package; `.ci/run` installs it).
"""
from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import socket
import struct
import subprocess
import time
import urllib.parse
from pathlib import Path

from helpers.common import LineReader, close_pipes

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--no-default-browser-check", "--mute-audio",
         "--hide-scrollbars", "--force-device-scale-factor=1")


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class WebSocket:
    """Just enough RFC 6455 for CDP: masked text frames out, (fragmented) text frames in, ping/pong."""

    def __init__(self, url: str, timeout: float = 60.0):
        parts = urllib.parse.urlsplit(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {parts.path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
                           f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           f"Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status + b" ":
            raise ConnectionError(f"websocket handshake refused: {status!r}")
        self.buffer = head.split(b"\r\n\r\n", 1)[1]

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send(self, text: str) -> None:
        self._send_frame(0x1, text.encode("utf-8"))

    def recv(self) -> str:
        message = b""
        while True:
            first, second = self._read(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if second & 0x80 else None
            payload = self._read(length)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if opcode in (0x0, 0x1, 0x2):
                message += payload
                if first & 0x80:
                    return message.decode("utf-8")

    def close(self) -> None:
        try:
            self._send_frame(0x8, b"")
        except OSError:
            pass
        self.sock.close()


class Browser:
    """One headless chromium with one page attached (flat session); events are kept for `events()`."""

    def __init__(self, binary: str, profile: Path, *, width: int = 1280, height: int = 900):
        profile.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0",
                                      f"--window-size={width},{height}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.stderr = LineReader(self.proc.stderr)
        self.ws = None
        try:
            self.ws = WebSocket(self._browser_url(profile))
            self.next_id = 0
            self.pending_events: list[dict] = []
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.call(f"{domain}.enable", session=True)
            self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                             "deviceScaleFactor": 1, "mobile": False}, session=True)
        except BaseException:
            self.close()
            raise

    def _browser_url(self, profile: Path) -> str:
        """The browser's websocket: the address chromium prints on its "DevTools listening" line (the
        DevToolsActivePort file can still be empty at that moment)."""
        seen = []
        while True:
            try:
                line = self.stderr.next(timeout=60)
            except queue.Empty:
                raise TimeoutError("chromium did not start its DevTools server: " + b"".join(seen).decode()) from None
            if line is None:
                raise RuntimeError("chromium exited: " + b"".join(seen).decode(errors="replace")[-3000:])
            seen.append(line)
            if b"DevTools listening on" in line:
                break
        url = line.decode(errors="replace").split("DevTools listening on", 1)[1].strip()
        if url.startswith("ws://"):
            return url
        # No address on the line: the profile's DevToolsActivePort, once chromium has written both lines of it.
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            fields = port_file.read_text().split() if port_file.is_file() else []
            if len(fields) >= 2:
                return f"ws://127.0.0.1:{fields[0]}{fields[1]}"
            time.sleep(0.05)
        raise TimeoutError("chromium wrote no DevTools address")

    def call(self, method: str, params: dict | None = None, *, session: bool = False, timeout: float = 60.0) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while True:
            self.ws.sock.settimeout(max(0.1, deadline - time.monotonic()))
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.pending_events.append(reply)

    def events(self, *names: str) -> list[dict]:
        return [e for e in self.pending_events if e["method"] in names]

    def navigate(self, url: str) -> None:
        self.pending_events = [e for e in self.pending_events if e["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url}, session=True)
        deadline = time.monotonic() + 60
        while not self.events("Page.loadEventFired"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            self.ws.sock.settimeout(max(0.1, deadline - time.monotonic()))
            self.pending_events.append(json.loads(self.ws.recv()))

    def js(self, expression: str, *, timeout: float = 60.0):
        """The value of a JS expression in the page (promises awaited); page exceptions raise."""
        result = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True,
                                                "timeout": int(timeout * 1000)}, session=True, timeout=timeout + 5)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise AssertionError(f"page script failed: {details.get('exception', {}).get('description') or details}")
        return result["result"].get("value")

    def wait_for(self, condition: str, *, timeout: float = 30.0):
        """Poll a JS condition inside the page (every 50 ms, in the page's own timers) until it is truthy."""
        return self.js(
            "new Promise((resolve, reject) => { const start = Date.now(); (function poll() {"
            f" let value; try {{ value = ({condition}); }} catch (e) {{ value = undefined; }}"
            " if (value) return resolve(value);"
            f" if (Date.now() - start > {int(timeout * 1000)}) return reject(new Error('timed out waiting for: ' + "
            f"{json.dumps(condition)}));"
            " setTimeout(poll, 50); })(); })", timeout=timeout + 5)

    def screenshot(self, path: Path, *, full: bool = False) -> None:
        """A PNG of the viewport, or of the whole page (`full`)."""
        params: dict = {"format": "png"}
        if full:
            size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": size["width"],
                                                            "height": size["height"], "scale": 1})
        data = self.call("Page.captureScreenshot", params, session=True)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        if self.ws is not None:
            try:
                self.call("Browser.close", timeout=10)
            except (OSError, RuntimeError, ConnectionError, ValueError):
                pass
            self.ws.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        close_pipes(self.proc)
