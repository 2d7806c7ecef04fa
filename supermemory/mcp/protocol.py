"""JSON-RPC 2.0 over newline-delimited stdio: error codes, protocol versions, error frames, framing."""
from __future__ import annotations

import io
import json
import logging
import threading
from typing import Any, Iterator

from supermemory.errors import SupermemoryError

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

SUPPORTED_PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[-1]
TOOL_ARGUMENT_ERRORS_SINCE = "2025-11-25"   # SEP-1303: input validation failures are tool results
_DISCARD_CHUNK = 64 * 1024


class JsonRpcError(SupermemoryError):
    """A protocol-level failure answered as a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def valid_id(value: Any) -> bool:
    """JSON-RPC ids are strings or integers (never booleans, floats or null)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(text: str) -> Any:
    """One frame's JSON, refusing NaN and Infinity (Python accepts them; JSON does not).

    Raises:
        ValueError: not valid JSON. RecursionError: nested too deeply.
    """
    return json.loads(text, parse_constant=_reject_constant)


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> dict:
    """A JSON-RPC error response frame."""
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class Oversize:
    """A frame longer than the limit (its bytes were discarded).

    :param request_id: the request's id when the kept head of the frame shows it at the top level next to a
        `method` (clients write `jsonrpc`, `id`, `method` before `params`), so the refusal reaches the caller
        that waits for it; None when the head does not say.
    """

    def __init__(self, request_id: Any = None):
        self.request_id = request_id


_WHITESPACE = " \t\n\r"


def head_request_id(head: bytes) -> Any:
    """The id of a request whose frame was cut at the limit, read from the top-level members of its head.

    Members are read in order until one is cut off or malformed; the id counts only when it is a valid id
    and a string `method` was read too (a client's response or a bare object gets None).
    """
    text = head.decode("utf-8", "replace")
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    pos = len(text) - len(text.lstrip(_WHITESPACE))
    if not text.startswith("{", pos):
        return None
    members: dict[str, Any] = {}
    pos += 1
    try:
        while True:
            while pos < len(text) and text[pos] in _WHITESPACE:
                pos += 1
            key, pos = decoder.raw_decode(text, pos)
            while pos < len(text) and text[pos] in _WHITESPACE:
                pos += 1
            if not isinstance(key, str) or not text.startswith(":", pos):
                break
            pos += 1
            while pos < len(text) and text[pos] in _WHITESPACE:
                pos += 1
            value, pos = decoder.raw_decode(text, pos)
            members[key] = value
            while pos < len(text) and text[pos] in _WHITESPACE:
                pos += 1
            if not text.startswith(",", pos):
                break
            pos += 1
    except (ValueError, RecursionError):
        pass   # the member the limit cut off (or a malformed one): what came before it stands
    request_id = members.get("id")
    if isinstance(members.get("method"), str) and valid_id(request_id):
        return request_id
    return None


def read_frames(stream, limit: int) -> Iterator[bytes | Oversize]:
    """Yield newline-delimited frames, never holding more than `limit` + 1 bytes of one in memory."""
    while True:
        line = stream.readline(limit + 1)
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogatepass")
        if not line:
            return
        if line.endswith(b"\n") or len(line) <= limit:
            yield line
            continue
        request_id = head_request_id(line)
        del line
        while True:
            rest = stream.readline(_DISCARD_CHUNK)
            if isinstance(rest, str):
                rest = rest.encode("utf-8", "surrogatepass")
            if not rest or rest.endswith(b"\n"):
                break
        yield Oversize(request_id)


def encode(message: dict) -> bytes:
    """One frame: compact JSON in UTF-8 plus a newline (ASCII escapes if a lone surrogate is in it)."""
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        text = json.dumps(message, ensure_ascii=True, separators=(",", ":"), allow_nan=False, default=str)
        return text.encode("ascii") + b"\n"


class FrameWriter:
    """Writes one JSON object + newline per frame to a binary (or text) stream, flushed each time."""

    def __init__(self, stream):
        self.stream = stream
        self.text = isinstance(stream, io.TextIOBase)
        self.lock = threading.Lock()

    def __call__(self, message: dict) -> None:
        try:
            data = encode(message)
        except (TypeError, ValueError) as exc:
            logger.error("cannot encode a response: %s", exc)
            data = encode(error_response(message.get("id"), INTERNAL_ERROR, "Internal error"))
        with self.lock:
            self.stream.write(data.decode("utf-8") if self.text else data)
            self.stream.flush()
