"""`supermemory mcp`: the stdio loop, stdout kept for frames, signals and the parent watch.

Frames are read on a thread of their own, so a tool call held for the workspace roots can time out.
"""
from __future__ import annotations

import logging
import os
import queue
import signal
import sys
import threading
from typing import Any, Callable

from supermemory.config import Config, load_config
from supermemory.errors import SupermemoryError
from supermemory.mcp.protocol import INVALID_REQUEST, FrameWriter, Oversize, error_response, read_frames
from supermemory.mcp.session import Session

logger = logging.getLogger(__name__)

PARENT_POLL_SECONDS = 1.5


def _claim_stdout():
    """Keep the real stdout for frames and point fd 1 and `sys.stdout` at stderr.

    Returns (binary frame stream, restore callable).
    """
    saved = sys.stdout
    try:
        saved.flush()
    except (OSError, ValueError, AttributeError):
        pass
    try:
        fd = os.dup(1)
        os.dup2(2, 1)
    except (OSError, AttributeError, ValueError):
        out = getattr(saved, "buffer", saved)
        sys.stdout = sys.stderr

        def restore_plain() -> None:
            sys.stdout = saved
        return out, restore_plain
    out = open(fd, "wb", buffering=64 * 1024)  # noqa: SIM115 - closed by restore()
    sys.stdout = sys.stderr

    def restore() -> None:
        try:
            out.flush()
        except (OSError, ValueError):
            pass
        try:
            os.dup2(fd, 1)
        except OSError:
            pass
        try:
            out.close()
        except OSError:
            pass
        sys.stdout = saved
    return out, restore


def _watch_parent(stop: threading.Event) -> None:
    parent = os.getppid()

    def run() -> None:
        while not stop.wait(PARENT_POLL_SECONDS):
            if os.getppid() != parent:
                logger.info("parent process %d is gone; exiting", parent)
                os._exit(0)
    threading.Thread(target=run, name="supermemory-parent-watch", daemon=True).start()


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


_EOF = object()      # the client closed stdin
_QUIET = object()    # no frame came within the wait


class _FrameReader:
    """The client's frames, read on a thread of their own so the loop can stop waiting when nothing comes: a tool
    call held for the workspace roots must run once its wait is over, even if the client sends nothing more."""

    def __init__(self, stream, limit: int, watch: Callable[[bytes], None] = lambda frame: None):
        self._frames: queue.Queue = queue.Queue(maxsize=16)   # backpressure: a fast client waits, memory stays flat
        self._watch = watch   # sees each frame as it is read (cancellations must not wait their turn)
        threading.Thread(target=self._read, args=(stream, limit), name="supermemory-stdin", daemon=True).start()

    def _read(self, stream, limit: int) -> None:
        try:
            for frame in read_frames(stream, limit):
                if isinstance(frame, bytes):
                    self._watch(frame)
                self._frames.put(frame)
        except Exception as exc:  # noqa: BLE001 - handed to the loop, which ends the session as it did before
            self._frames.put(exc)
            return
        self._frames.put(_EOF)

    def next(self, timeout: float | None):
        """The next frame, `_EOF`, or `_QUIET` when `timeout` seconds pass first; a read error is raised here."""
        try:
            item = self._frames.get(timeout=timeout)
        except queue.Empty:
            return _QUIET
        if isinstance(item, Exception):
            raise item
        return item


def serve(stdin=None, stdout=None, *, config: Config | None = None,
          store_factory: Callable[[str], Any] | None = None) -> int:
    """Run the MCP stdio server until EOF, SIGTERM/SIGINT or the parent's death; returns the exit code.

    :param stdin: binary stream of frames (default: the process stdin).
    :param stdout: binary stream for frames (default: the process stdout, with fd 1 moved to stderr).
    :param config: settings (default `load_config(strict=False)`: config file problems are logged
        on stderr and the settings they concern keep their defaults).
    :param store_factory: `factory(namespace) -> MemoryStore` (default: open `config.db_path`).
    """
    real_stdio = stdin is None and stdout is None
    if config is None:
        config = load_config(strict=False)  # a bad config file must not keep the agent's tools away
        for problem in config.problems:
            logger.warning("%s (built-in defaults used instead)", problem)
    saved_stdout = sys.stdout
    restore: Callable[[], None]
    if stdout is None:
        out, restore = _claim_stdout()
    else:
        out = stdout
        sys.stdout = sys.stderr

        def restore() -> None:
            sys.stdout = saved_stdout
    inp = stdin if stdin is not None else sys.stdin.buffer
    limit = int(config.get("mcp.max_frame_bytes"))
    session = Session(config, store_factory=store_factory, write=FrameWriter(out))
    stop = threading.Event()
    previous: dict[int, Any] = {}
    if real_stdio:
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                previous[sig] = signal.signal(sig, _interrupt)
            except (ValueError, OSError):
                pass
        _watch_parent(stop)
    frames = _FrameReader(inp, limit, session.note_cancellation)
    try:
        while True:
            frame = frames.next(session.idle_wait())
            if frame is _EOF:
                for response in session.release_held(give_up=True):
                    session.send(response)
                break
            if isinstance(frame, Oversize):
                session.send(error_response(frame.request_id, INVALID_REQUEST,
                                            f"frame larger than mcp.max_frame_bytes ({limit} bytes)"))
            elif frame is not _QUIET:
                response = session.handle_frame(frame)
                if response is not None:
                    session.send(response)
            else:
                session.idle_work()
            for response in session.release_held():
                session.send(response)
    except KeyboardInterrupt:
        logger.info("interrupted; exiting")
    except (BrokenPipeError, ConnectionResetError):
        logger.info("the client closed the connection")
    finally:
        stop.set()
        for sig, handler in previous.items():
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError):
                pass
        try:
            session.close()
        except SupermemoryError as exc:
            logger.warning("closing the store: %s", exc)
        try:
            restore()
        except (BrokenPipeError, OSError):
            pass
    return 0
