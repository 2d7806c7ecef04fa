"""Defects a fresh-user run found in the MCP server and the hooks, each pinned by the way it was reproduced."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from supermemory.config import Config
from supermemory.mcp.protocol import INVALID_REQUEST, head_request_id
from supermemory.mcp.server import serve
from supermemory.settings import DEFAULTS, deep_merge

PING = {"jsonrpc": "2.0", "id": "after", "method": "ping"}


def _serve(frames: list[bytes], tmp_path: Path, **settings) -> list[dict]:
    config = Config(home=tmp_path, settings=deep_merge(DEFAULTS, settings))
    out = io.BytesIO()
    assert serve(io.BytesIO(b"".join(frame + b"\n" for frame in frames)), out, config=config,
                 store_factory=lambda namespace: pytest.fail("no store is needed")) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _frame(message: dict) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


@pytest.mark.parametrize("request_id", [7, "call-7"])
def test_a_request_over_the_frame_limit_is_refused_under_its_own_id(tmp_path, request_id):
    """Found with the SDK client: a 9 MB memory_remember got an error with id null, so the client's call waited
    until its own timeout; the SDK (and Claude Code) write `id` before `params`, so the head names it."""
    huge = _frame({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": "memory_remember", "arguments": {"content": "z" * 5000}}})
    responses = _serve([huge, _frame(PING)], tmp_path, mcp={"max_frame_bytes": 1024})
    assert responses[0]["id"] == request_id
    assert responses[0]["error"]["code"] == INVALID_REQUEST
    assert "mcp.max_frame_bytes" in responses[0]["error"]["message"]
    assert responses[1] == {"jsonrpc": "2.0", "id": "after", "result": {}}


@pytest.mark.parametrize("head, expected", [
    (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{"content":"zzz', 3),
    (b' { "method" : "tools/call" , "id" : "a\\"b" , "params": [1, 2', 'a"b'),
    (b'{"jsonrpc":"2.0","method":"tools/call","params":{"id":5,"x":"zzz', None),       # nested id only
    (b'{"jsonrpc":"2.0","params":{"content":"zzz","id":5', None),
    (b'{"jsonrpc":"2.0","id":4,"result":{"roots":["zzz', None),                        # a client's response
    (b'{"jsonrpc":"2.0","id":true,"method":"ping","params":{"x":"zz', None),            # not a valid id
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping","params":{"x":"zz', None),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"x":"zzz', None),                     # a batch
    (b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":' + b"[" * 5000, 2),       # deep after the id
    (b'{"id":' + b"9" * 5000 + b',"method":"ping"', None),                              # too many digits
    (b'{"id":NaN,"method":"ping","params":"', None),
    (b'\xff\xfe{"id":1,"method":"ping"', None),
    (b'', None),
])
def test_the_id_of_a_cut_frame_is_read_only_from_its_top_level(head, expected):
    assert head_request_id(head) == expected
