"""Protocol fuzzing of ONE live `supermemory mcp` process with hypothesis-generated frames.

Frames: random JSON values, valid requests with mutated fields, wrong types, huge ids, unicode
and lone surrogates, truncated JSON, random bytes, blank lines and oversize frames. After each
frame a sentinel `ping` marks where its answers end. Properties: the server never dies; a
request with a valid id gets exactly one response carrying that id; notifications and client
responses get none; anything unparseable gets exactly one error with a null id; no frame ever
produces an internal error; and a valid ping afterwards still works.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.common import McpClient, run_slow
from supermemory.mcp.protocol import INTERNAL_ERROR

FRAME_LIMIT = 65_536
STATS = {"frames": 0, "requests": 0, "notifications": 0, "unparseable": 0, "errors": 0, "results": 0}

SPECIAL_TEXT = ["", " ", "\x00", "a\x00b", "\ud800", "x\udfffy", "\U0001f600 emoji", "中文记忆", "\u2028",
                "'); DROP TABLE memories;--", '"', "NEAR(a b", "*", "col:val", "M1", "M99999999999999999999",
                "../../etc/passwd", "ns_global", "%s%n", "\\", "\r"]
text = st.one_of(st.text(max_size=40), st.sampled_from(SPECIAL_TEXT))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63 - 2, max_value=2**200),
                    st.integers(min_value=-(2**200), max_value=-(2**63)),
                    st.floats(allow_nan=False, allow_infinity=False), text)
json_values = st.recursive(scalars, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(text, children, max_size=4)), max_leaves=12)
valid_ids = st.one_of(st.integers(), st.integers(min_value=2**63 - 2, max_value=2**300),
                      st.integers(max_value=-(2**63)), text)
ids = st.one_of(valid_ids, valid_ids, valid_ids, st.floats(allow_nan=False, allow_infinity=False), st.none(),
                st.booleans(), st.lists(scalars, max_size=2), st.dictionaries(text, scalars, max_size=2))
KEYS = ["jsonrpc", "id", "method", "params", "result", "error"]
METHODS = ["ping", "tools/list", "tools/call", "initialize", "notifications/initialized", "notifications/cancelled",
           "notifications/roots/list_changed", "resources/list", "prompts/list", "shutdown", "exit", ""]


@st.composite
def base_requests(draw) -> dict:
    request_id = draw(ids)
    choice = draw(st.sampled_from(["ping", "list", "recall", "remember", "get", "list_mem", "init", "notify",
                                   "notify", "notify", "response", "response", "briefing"]))
    call = {"recall": ("memory_recall", {"query": draw(text)}),
            "remember": ("memory_remember", {"content": draw(text)}),
            "get": ("memory_get", {"ids": [draw(text)]}),
            "list_mem": ("memory_list", {"limit": draw(st.integers(-5, 2000))}),
            "briefing": ("memory_briefing", {"query": draw(text)})}
    if choice == "ping":
        return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}
    if choice == "list":
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
    if choice == "init":
        return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
                "params": {"protocolVersion": draw(st.sampled_from(["2025-06-18", "2024-11-05", "1999"]) | text),
                           "capabilities": draw(st.sampled_from([{}, {"roots": {}}]) | json_values),
                           "clientInfo": {"name": draw(text), "version": "1"}}}
    if choice == "notify":
        return {"jsonrpc": "2.0", "method": draw(st.sampled_from(METHODS) | text),
                "params": draw(st.sampled_from([{}, {"requestId": 1}, [], "x", 1, None]) | json_values)}
    if choice == "response":
        return {"jsonrpc": "2.0", "id": request_id,
                draw(st.sampled_from(["result", "error"])): draw(json_values)}
    name, arguments = call[choice]
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


@st.composite
def mutated_requests(draw) -> dict:
    message = draw(base_requests())
    for _ in range(draw(st.integers(0, 3))):
        action = draw(st.sampled_from(["drop", "set", "jsonrpc", "method", "params", "arguments", "name"]))
        if action == "drop" and message:
            message.pop(draw(st.sampled_from(sorted(message))))
        elif action == "set":
            message[draw(st.sampled_from(KEYS) | text)] = draw(json_values)
        elif action == "jsonrpc":
            message["jsonrpc"] = draw(st.sampled_from(["1.0", 2.0, 2, None, "2.0 ", ""]))
        elif action == "method":
            message["method"] = draw(st.sampled_from(METHODS) | json_values)
        elif action == "params":
            message["params"] = draw(json_values)
        elif isinstance(message.get("params"), dict):
            key = "arguments" if action == "arguments" else "name"
            message["params"][key] = draw(json_values)
    return message


def _dumps(draw, message) -> bytes:
    ascii_only = draw(st.booleans())
    return json.dumps(message, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@st.composite
def frames(draw) -> bytes:
    kind = draw(st.sampled_from(["mutated"] * 6 + ["json", "bytes", "truncated", "blank", "oversize", "hugeint",
                                                  "deep"]))
    if kind == "mutated":
        return _dumps(draw, draw(mutated_requests()))
    if kind == "json":
        return _dumps(draw, draw(json_values))
    if kind == "bytes":
        return draw(st.binary(max_size=300)).replace(b"\n", b"")
    if kind == "truncated":
        data = _dumps(draw, draw(mutated_requests()))
        return data[:draw(st.integers(0, max(0, len(data) - 1)))]
    if kind == "blank":
        return draw(st.sampled_from([b"", b" ", b"\t", b"\r", b"   \r", "\u2028".encode()]))
    if kind == "oversize":
        message = draw(mutated_requests())
        message["padding"] = "x" * (FRAME_LIMIT + draw(st.integers(100, 5000)))
        return _dumps(draw, message)
    if kind == "hugeint":  # more digits than Python's int parser allows by default
        digits = "9" * draw(st.integers(4000, 6000))
        return ('{"jsonrpc":"2.0","id":' + digits + ',"method":"ping"}').encode()
    depth = draw(st.integers(50, 5000))
    return ('{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":' + "[" * depth + "]" * depth + "}}").encode()


def _reject_constant(name):
    raise ValueError(name)


def _depth(text: str) -> int:
    """Deepest bracket nesting outside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _head_id(frame: bytes):
    """A request id the frame's first FRAME_LIMIT bytes hold at the top level beside a method, else None (bytes
    that are not UTF-8 read as U+FFFD, as the server reads the head of a frame it refuses)."""
    try:
        message = json.loads(frame.decode("utf-8", "replace"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return None
    return request_id


def expected_reply(frame: bytes):
    """What JSON-RPC 2.0 requires for this frame: "none", "null" (one error, null id), ("id", value),
    or ("id-or-null", value) for nesting so deep that a parser may refuse it before seeing the id.
    """
    if len(frame) + 1 > FRAME_LIMIT:   # refused unread; the id comes from the head when it shows one
        return ("id-or-null", _head_id(frame)) if _head_id(frame) is not None else "null"
    try:
        decoded = frame.decode("utf-8")
    except UnicodeDecodeError:
        return "null"
    if not decoded.strip():
        return "none"
    try:
        message = json.loads(decoded, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return "null"
    if not isinstance(message, dict):
        return "null"
    if "method" not in message and ("result" in message or "error" in message):
        return "none"  # a response from the client
    if "id" not in message:   # a notification only with a method: else Invalid Request, null id
        return "none" if isinstance(message.get("method"), str) and message["method"] else "null"
    request_id = message["id"]
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return ("id-or-null" if _depth(decoded) > 400 else "id", request_id)
    return "null"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    home = root / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"mcp": {"max_frame_bytes": FRAME_LIMIT}}))
    project = root / "fuzzproj"
    project.mkdir()
    client = McpClient(home, project)
    assert "result" in client.initialize()
    assert client.tool("memory_remember", {"content": "a memory the fuzzer can find"})["isError"] is False
    yield client
    code, err = client.close()
    client.kill()
    assert code == 0, err[-3000:]


def _exchange(server: McpClient, frame: bytes, sentinel: str) -> list[dict]:
    """Send one fuzz frame and a sentinel ping; return every reply that arrived before the sentinel's."""
    server.send_raw(frame + b"\n")
    server.send_raw(json.dumps({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}).encode())
    replies = []
    while True:
        line = server.out.next(60)
        assert line is not None, "the server died: " + server.stderr_text()[-3000:]
        message = json.loads(line)
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", message
        if "method" in message:  # a request from the server (roots/list): not an answer
            if "id" in message:   # answered as a client does, or tool calls wait 2 s for it and answer late
                server.send_raw(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"roots": []}}).encode())
            continue
        if message.get("id") == sentinel:
            assert message == {"jsonrpc": "2.0", "id": sentinel, "result": {}}
            return replies
        replies.append(message)


def _fuzz(server: McpClient, examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
    @given(frame=frames())
    def one_frame(frame: bytes) -> None:
        STATS["frames"] += 1
        want = expected_reply(frame)
        replies = _exchange(server, frame, f"sentinel-{STATS['frames']}")
        for reply in replies:
            assert ("result" in reply) != ("error" in reply), reply
            if "error" in reply:
                STATS["errors"] += 1
                assert reply["error"]["code"] != INTERNAL_ERROR, (frame[:300], reply)
                assert isinstance(reply["error"]["message"], str) and reply["error"]["message"]
            else:
                STATS["results"] += 1
        if want == "none":
            STATS["notifications"] += 1
            assert replies == [], (frame[:300], replies)
        elif want == "null":
            STATS["unparseable"] += 1
            assert len(replies) == 1 and replies[0]["id"] is None and "error" in replies[0], (frame[:300], replies)
        else:
            STATS["requests"] += 1
            assert len(replies) == 1, (frame[:300], replies)
            got = replies[0]["id"]
            if want[0] == "id-or-null" and got is None:
                assert "error" in replies[0]
            else:
                assert got == want[1] and type(got) is type(want[1]), (frame[:300], replies)

    one_frame()
    assert server.proc.poll() is None, "the server exited"


def test_random_and_mutated_frames_get_exactly_the_replies_json_rpc_requires(server):
    _fuzz(server, 200)


@pytest.mark.slow
def test_many_more_fuzzed_frames(server, request):
    if not run_slow(request.config):
        pytest.skip("heavy variant: run with -m slow or SUPERMEMORY_SLOW_TESTS=1")
    _fuzz(server, 3000)


def test_the_server_still_answers_ping_and_tools_after_fuzzing(server):
    response = server.request("ping")
    assert response["result"] == {}
    result = server.tool("memory_recall", {"query": "memory the fuzzer can find"})
    assert result["isError"] is False
    assert any("fuzzer" in r["title"] for r in result["structuredContent"]["results"])
    assert server.proc.poll() is None
    print(f"protocol fuzz: {STATS}")
