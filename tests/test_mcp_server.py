"""The MCP stdio server: in-process over BytesIO, plus a few real subprocess sessions."""
from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import jsonschema
import pytest
from helpers.common import LineReader, McpClient, age_search_index

from supermemory.mcp import methods
from supermemory.config import Config
from supermemory.settings import DEFAULTS, deep_merge as _deep_merge
from supermemory.core import MemoryStore
from supermemory.embed import HashProvider
from supermemory.config import namespace_for_dir
from supermemory.mcp.protocol import (INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
                                      SUPPORTED_PROTOCOL_VERSIONS)
from supermemory.mcp.server import serve
from supermemory.mcp.session import Session
from supermemory.mcp.tools import TOOLS, TOOLS_BY_NAME, resolve_export_path
from supermemory.mcp.validation import validate

REPO = Path(__file__).resolve().parents[1]
PING = {"jsonrpc": "2.0", "id": "after", "method": "ping"}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "claude-code", "version": "2.0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def make_config(tmp_path: Path, **overrides) -> Config:
    return Config(home=tmp_path, settings=_deep_merge(DEFAULTS, overrides))


@pytest.fixture
def config(tmp_path):
    return make_config(tmp_path)


@pytest.fixture
def store(tmp_path, config):
    memory_store = MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj")
    yield memory_store
    memory_store.close()


def encode(frame) -> bytes:
    if isinstance(frame, bytes):
        return frame
    return json.dumps(frame).encode("utf-8")


def run(frames, store=None, *, config=None, tmp_path=None) -> list[dict]:
    """Feed frames to serve() in-process; returns every frame the server wrote."""
    data = b"".join(encode(f) + b"\n" for f in frames)
    out = io.BytesIO()
    config = config or (store.config if store is not None else make_config(tmp_path))
    factory = (lambda namespace: store) if store is not None else None
    assert serve(io.BytesIO(data), out, config=config, store_factory=factory) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def by_id(responses: list[dict]) -> dict:
    return {r["id"]: r for r in responses if "id" in r and "method" not in r}


def call(store, name: str, arguments: dict | None = None, *, init=INIT) -> dict:
    """Initialize, call one tool; returns the tools/call response frame."""
    frames = [init, INITIALIZED] if init else []
    params = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
    frames.append({"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": params})
    response = by_id(run(frames, store))["call"]
    if "result" in response and not response["result"]["isError"]:
        tool = TOOLS_BY_NAME[name]
        jsonschema.validate(response["result"]["structuredContent"], tool.output_schema)
    return response


def ok(store, name: str, arguments: dict | None = None) -> dict:
    response = call(store, name, arguments)
    assert "result" in response, response
    result = response["result"]
    assert result["isError"] is False, result
    assert result["content"][0]["type"] == "text"
    return result


def assert_still_serving(responses: list[dict]) -> None:
    assert responses[-1] == {"jsonrpc": "2.0", "id": "after", "result": {}}


# --- lifecycle -------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
def test_initialize_echoes_each_supported_protocol_version(store, version):
    frame = {**INIT, "params": {**INIT["params"], "protocolVersion": version}}
    result = run([frame], store)[0]["result"]
    assert result["protocolVersion"] == version


def test_initialize_answers_an_unknown_protocol_version_with_our_newest(store):
    frame = {**INIT, "params": {**INIT["params"], "protocolVersion": "1999-01-01"}}
    result = run([frame], store)[0]["result"]
    assert result["protocolVersion"] == SUPPORTED_PROTOCOL_VERSIONS[-1] == "2025-11-25"


def test_initialize_reports_tools_server_info_and_instructions_with_a_briefing(store):
    store.remember("Always run the linter before committing", kind="preference", pinned=True)
    result = run([INIT], store)[0]["result"]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "supermemory"
    assert result["serverInfo"]["version"]
    text = result["instructions"]
    for word in ("memory_recall", "memory_remember", "memory_update", "memory_forget", "global"):
        assert word in text
    assert "Always run the linter" in text


def test_instructions_leave_out_the_briefing_when_disabled(tmp_path):
    config = make_config(tmp_path, mcp={"instructions_briefing": False})
    memory_store = MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj")
    memory_store.remember("Pinned rule about tabs", kind="preference", pinned=True)
    result = run([INIT], memory_store)[0]["result"]
    memory_store.close()
    assert "Pinned rule about tabs" not in result["instructions"]
    assert "memory_recall" in result["instructions"]


def test_initialize_neither_creates_nor_opens_a_missing_database(tmp_path):
    config = make_config(tmp_path / "fresh")
    result = run([INIT, PING], config=config)
    assert "memory_recall" in result[0]["result"]["instructions"]
    assert not config.db_path.exists()


def test_initialize_requires_a_protocol_version_string(store):
    frame = {**INIT, "params": {"protocolVersion": 20250618}}
    responses = run([frame, PING], store)
    assert responses[0]["error"]["code"] == INVALID_PARAMS
    assert "protocolVersion" in responses[0]["error"]["message"]
    assert_still_serving(responses)


def test_ping_and_cancelled_notifications(store):
    responses = run([{"jsonrpc": "2.0", "id": 7, "method": "ping"},
                     {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}, PING], store)
    assert responses == [{"jsonrpc": "2.0", "id": 7, "result": {}}, {"jsonrpc": "2.0", "id": "after", "result": {}}]


def test_initialize_does_not_import_numpy_onnxruntime_or_the_stemmer(tmp_path):
    home = tmp_path / "home"
    config = make_config(home)
    seeded = MemoryStore(config.db_path, config=config, embedder=HashProvider(), namespace="proj")
    seeded.remember("A decision about caching", kind="decision")
    seeded.close()
    script = textwrap.dedent("""
        import io, json, sys
        from supermemory.mcp.server import serve
        frames = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        ]
        out = io.BytesIO()
        serve(io.BytesIO(b"".join(json.dumps(f).encode() + b"\\n" for f in frames)), out)
        replies = [json.loads(line) for line in out.getvalue().splitlines()]
        print(json.dumps({"ok": all("result" in r for r in replies), "briefing": "caching" in
                          replies[0]["result"]["instructions"],
                          "numpy": "numpy" in sys.modules, "onnxruntime": "onnxruntime" in sys.modules,
                          "stemmer": "Stemmer" in sys.modules}))
    """)
    env = dict(os.environ, SUPERMEMORY_HOME=str(home), SUPERMEMORY_NAMESPACE="proj",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"ok": True, "briefing": True, "numpy": False, "onnxruntime": False, "stemmer": False}


class LoadingEmbedder(HashProvider):
    """A hash embedder with a model to warm up."""

    def __init__(self, fail: bool = False):
        self.fail = fail
        self.loaded_on: str | None = None

    def load(self) -> None:
        self.loaded_on = threading.current_thread().name
        if self.fail:
            raise RuntimeError("model file is corrupt")


def test_initialized_warms_the_embedder_in_a_background_thread(tmp_path, config):
    embedder = LoadingEmbedder()
    memory_store = MemoryStore(tmp_path / "m.db", config=config, embedder=embedder, namespace="proj")
    session = Session(config, store_factory=lambda namespace: memory_store)
    assert session.handle_message(INIT)["result"]
    assert session.handle_message(INITIALIZED) is None
    session.warmup_thread.join(10)
    assert embedder.loaded_on == "supermemory-warmup"
    memory_store.close()


def test_a_failing_warm_up_is_logged_and_the_server_keeps_serving(tmp_path, config, caplog):
    embedder = LoadingEmbedder(fail=True)
    memory_store = MemoryStore(tmp_path / "m.db", config=config, embedder=embedder, namespace="proj")
    session = Session(config, store_factory=lambda namespace: memory_store)
    session.handle_message(INIT)
    session.handle_message(INITIALIZED)
    session.warmup_thread.join(10)
    assert "warm-up failed" in caplog.text
    assert session.handle_message(PING) == {"jsonrpc": "2.0", "id": "after", "result": {}}
    memory_store.close()


# --- roots and namespaces --------------------------------------------------------------------------

def test_workspace_roots_set_the_default_namespace(store, tmp_path):
    project = tmp_path / "Shiny Project"
    (project / ".git").mkdir(parents=True)
    init = {**INIT, "params": {**INIT["params"], "capabilities": {"roots": {"listChanged": True}}}}
    uri = "file://" + str(project / "src").replace(" ", "%20")
    responses = run([init, INITIALIZED,
                     {"jsonrpc": "2.0", "id": "sm-roots-1", "result": {"roots": [{"uri": uri, "name": "x"}]}},
                     {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                      "params": {"name": "memory_remember", "arguments": {"content": "Roots decide the namespace"}}}],
                    store)
    requests = [r for r in responses if r.get("method") == "roots/list"]
    assert requests == [{"jsonrpc": "2.0", "id": "sm-roots-1", "method": "roots/list"}]
    assert by_id(responses)[5]["result"]["structuredContent"]["namespace"] == "shiny-project"
    assert len(responses) == 3  # initialize, roots/list request, tools/call: the client's response got no reply



def _roots_project(tmp_path) -> tuple[dict, str]:
    project = tmp_path / "Rooted Project"
    (project / ".git").mkdir(parents=True)
    init = {**INIT, "params": {**INIT["params"], "capabilities": {"roots": {}}}}
    return init, "file://" + str(project).replace(" ", "%20")


def _remember(request_id, content: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "memory_remember", "arguments": {"content": content}}}


def test_a_tool_call_sent_before_the_roots_answer_waits_for_it(store, tmp_path):
    init, uri = _roots_project(tmp_path)
    responses = run([init, INITIALIZED, _remember(5, "Written before the roots answer"), PING,
                     {"jsonrpc": "2.0", "id": "sm-roots-1", "result": {"roots": [{"uri": uri}]}},
                     _remember(6, "Written after it")], store)
    answered = [r.get("id") for r in responses if "method" not in r]
    assert answered == [0, "after", 5, 6]      # the ping is not held; the held call runs once the roots are in
    assert by_id(responses)[5]["result"]["structuredContent"]["namespace"] == "rooted-project"
    assert by_id(responses)[6]["result"]["structuredContent"]["namespace"] == "rooted-project"


def test_a_held_tool_call_is_answered_when_the_client_never_lists_its_roots(store, tmp_path, monkeypatch):
    from supermemory.mcp import session as session_module

    monkeypatch.setattr(session_module, "ROOTS_WAIT_SECONDS", 0.3)
    init, _ = _roots_project(tmp_path)
    read_fd, write_fd = os.pipe()
    out = io.BytesIO()
    with os.fdopen(read_fd, "rb") as server_in:
        server = threading.Thread(target=serve, args=(server_in, out),
                                  kwargs={"config": store.config, "store_factory": lambda namespace: store})
        server.start()
        with os.fdopen(write_fd, "wb") as client:     # stays open: the client waits for the answer, sends nothing
            client.write(b"".join(encode(f) + b"\n" for f in (init, INITIALIZED, _remember(5, "No roots come"))))
            client.flush()
            deadline = time.monotonic() + 30
            while b'"id":5' not in out.getvalue() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert b'"id":5' in out.getvalue()
        server.join(30)
    responses = [json.loads(line) for line in out.getvalue().splitlines()]
    assert by_id(responses)[5]["result"]["structuredContent"]["namespace"] == "proj"


def test_changed_roots_are_asked_for_again_and_the_next_tool_call_uses_the_new_project(tmp_path):
    """Over stdio with a real `supermemory mcp`: the client switches projects and calls a tool at once (as the SDK
    does); the server asks for the roots again and runs the call in the new project's namespace once they come.
    A failed or missing answer keeps the namespace (a warning on stderr), and an explicit namespace always wins."""
    projects = {}
    for name in ("Alpha", "Beta"):
        (tmp_path / name / ".git").mkdir(parents=True)
        projects[name] = "file://" + str(tmp_path / name)
    client = McpClient(tmp_path / "home", tmp_path)

    def send(frame: dict) -> None:
        client.send_raw(json.dumps(frame).encode())

    def frame() -> dict:
        line = client.out.next(30)
        assert line is not None, client.stderr_text()
        return json.loads(line)

    def answer_roots(expected_id: str, result: dict | None = None, error: dict | None = None) -> None:
        request = frame()       # the server asks before it answers anything sent after the change
        assert request == {"jsonrpc": "2.0", "id": expected_id, "method": "roots/list"}
        send({"jsonrpc": "2.0", "id": expected_id, **({"error": error} if error else {"result": result})})

    def namespace_of(request_id: int) -> str:
        response = frame()
        assert response["id"] == request_id and response["result"]["isError"] is False, response
        return response["result"]["structuredContent"]["namespace"]

    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    try:
        send({**INIT, "params": {**INIT["params"], "capabilities": {"roots": {"listChanged": True}}}})
        assert frame()["id"] == 0
        send(INITIALIZED)
        answer_roots("sm-roots-1", {"roots": [{"uri": projects["Alpha"]}]})
        send(_remember(1, "Alpha uses tabs"))
        assert namespace_of(1) == "alpha"

        send(changed)                                   # the user opened Beta, and the agent writes at once
        send(_remember(2, "Beta uses spaces"))
        answer_roots("sm-roots-2", {"roots": [{"uri": projects["Beta"]}]})
        assert namespace_of(2) == "beta"
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_remember", "arguments": {
            "content": "Pinned on purpose", "namespace": "pinned", "create_namespace": True}}})
        assert namespace_of(3) == "pinned"              # an explicit namespace wins over the roots

        send(changed)
        answer_roots("sm-roots-3", error={"code": -32603, "message": "roots unavailable"})
        send(_remember(4, "Still Beta after a failed answer"))
        assert namespace_of(4) == "beta"

        send(changed)
        assert frame() == {"jsonrpc": "2.0", "id": "sm-roots-4", "method": "roots/list"}   # never answered
        send(_remember(5, "Still Beta after no answer"))
        assert namespace_of(5) == "beta"
        code, err = client.close()
    finally:
        client.kill()
    assert code == 0
    assert "could not list its workspace roots" in err and "roots unavailable" in err
    assert "did not list its workspace roots within" in err


def test_an_answer_to_an_earlier_roots_request_does_not_undo_a_later_change(store, tmp_path):
    uris = {}
    for name in ("Alpha", "Beta"):
        (tmp_path / name / ".git").mkdir(parents=True)
        uris[name] = "file://" + str(tmp_path / name)
    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    init = {**INIT, "params": {**INIT["params"], "capabilities": {"roots": {"listChanged": True}}}}
    responses = run([init, INITIALIZED,
                     {"jsonrpc": "2.0", "id": "sm-roots-1", "result": {"roots": [{"uri": uris["Alpha"]}]}},
                     changed, changed,     # two changes in a row; their answers come back out of order
                     {"jsonrpc": "2.0", "id": "sm-roots-3", "result": {"roots": [{"uri": uris["Beta"]}]}},
                     {"jsonrpc": "2.0", "id": "sm-roots-2", "result": {"roots": [{"uri": uris["Alpha"]}]}},
                     _remember(5, "Written in Beta")], store)
    assert by_id(responses)[5]["result"]["structuredContent"]["namespace"] == "beta"


def test_the_rest_of_a_long_text_gets_its_vectors_while_the_server_idles(tmp_path):
    config = make_config(tmp_path, store={"chunk_max_tokens": 20, "chunk_overlap_tokens": 0, "write_embed_chunks": 1})
    memory_store = MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj")
    text = " ".join(f"Part {n}: the export job{n} writes shard{n} before upload{n}." for n in range(30))

    def waiting() -> int:
        with MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider()) as other:
            return other.health()["vectors_pending"]

    read_fd, write_fd = os.pipe()
    out = io.BytesIO()
    with os.fdopen(read_fd, "rb") as server_in:
        server = threading.Thread(target=serve, args=(server_in, out),
                                  kwargs={"config": config, "store_factory": lambda namespace: memory_store})
        server.start()
        with os.fdopen(write_fd, "wb") as client:
            client.write(b"".join(encode(f) + b"\n" for f in (INIT, INITIALIZED, _remember(5, text))))
            client.flush()
            deadline = time.monotonic() + 30
            while b'"id":5' not in out.getvalue() and time.monotonic() < deadline:
                time.sleep(0.02)
            answer = by_id([json.loads(line) for line in out.getvalue().splitlines()])[5]["result"]
            pending = answer["structuredContent"]["vectors_pending"]
            assert pending >= 20 and "get their vectors later" in answer["content"][0]["text"]
            while waiting() and time.monotonic() < deadline:   # the client sends nothing meanwhile
                time.sleep(0.05)
            assert waiting() == 0
            client.write(encode(PING) + b"\n")
            client.flush()
            while b'"after"' not in out.getvalue() and time.monotonic() < deadline:
                time.sleep(0.02)
        server.join(30)
    memory_store.close()
    assert_still_serving([json.loads(line) for line in out.getvalue().splitlines()])


def test_a_session_a_hook_could_not_capture_is_captured_while_the_server_idles(store, tmp_path):
    from supermemory import capture

    transcript = tmp_path / "claude.jsonl"
    transcript.write_bytes((REPO / "tests" / "fixtures" / "transcripts" / "claude_session.jsonl").read_bytes())
    note = capture.note_pending(store.config.home, str(transcript), session_id="s-owed", platform="claude-code",
                                cwd=str(tmp_path / "shop"), namespace="shop")
    os.utime(note, (time.time() - 60, time.time() - 60))   # its hook ran out of time a minute ago

    def sessions() -> list:
        with MemoryStore(tmp_path / "m.db", config=store.config, embedder=HashProvider()) as other:
            return other.conn.execute("SELECT namespace, external_key FROM memories WHERE kind = 'session'").fetchall()

    read_fd, write_fd = os.pipe()
    out = io.BytesIO()
    with os.fdopen(read_fd, "rb") as server_in:
        server = threading.Thread(target=serve, args=(server_in, out),
                                  kwargs={"config": store.config, "store_factory": lambda namespace: store})
        server.start()
        with os.fdopen(write_fd, "wb") as client:     # the client sends nothing after initializing
            client.write(b"".join(encode(f) + b"\n" for f in (INIT, INITIALIZED)))
            client.flush()
            deadline = time.monotonic() + 30
            while (not sessions() or note.exists()) and time.monotonic() < deadline:
                time.sleep(0.05)
            client.write(encode(PING) + b"\n")
            client.flush()
            while b'"after"' not in out.getvalue() and time.monotonic() < deadline:
                time.sleep(0.02)
        server.join(30)
    assert sessions() == [("shop", "claude-code:s-owed")]   # in the session's own project, once
    assert not note.exists()
    assert_still_serving([json.loads(line) for line in out.getvalue().splitlines()])


def test_a_held_tool_call_is_answered_before_the_server_exits_at_eof(store, tmp_path):
    init, _ = _roots_project(tmp_path)
    responses = run([init, INITIALIZED, _remember(5, "The client hung up")], store)
    assert by_id(responses)[5]["result"]["structuredContent"]["namespace"] == "proj"

def test_clients_without_roots_are_not_asked_for_them(store):
    responses = run([INIT, INITIALIZED, PING], store)
    assert not [r for r in responses if r.get("method")]


def test_explicit_namespace_wins_over_workspace_roots(tmp_path):
    config = Config(home=tmp_path, explicit_namespace="pinned-ns")
    memory_store = MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="pinned-ns")
    init = {**INIT, "params": {**INIT["params"], "capabilities": {"roots": {}}}}
    responses = run([init, INITIALIZED,
                     {"jsonrpc": "2.0", "id": "sm-roots-1", "result": {"roots": [{"uri": "file:///tmp/other"}]}},
                     {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                      "params": {"name": "memory_remember", "arguments": {"content": "Pinned namespace"}}}],
                    memory_store)
    assert by_id(responses)[5]["result"]["structuredContent"]["namespace"] == "pinned-ns"
    memory_store.close()


def test_writes_record_the_client_platform(store):
    init = {**INIT, "params": {**INIT["params"], "clientInfo": {"name": "codex-mcp-client", "version": "0.1"}}}
    response = call(store, "memory_remember", {"content": "Codex wrote this"}, init=init)
    memory_id = response["result"]["structuredContent"]["id"]
    assert store.get([memory_id])["memories"][0]["source"]["platform"] == "codex"


# --- tools/list ------------------------------------------------------------------------------------

def test_tools_list_describes_every_tool(store):
    tools = run([INIT, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}], store)[1]["result"]["tools"]
    assert [t["name"] for t in tools] == [t.name for t in TOOLS]
    for tool in tools:
        assert tool["description"].startswith("Use ")
        assert tool["title"]
        assert tool["inputSchema"]["type"] == "object"
        assert tool["inputSchema"]["additionalProperties"] is False
        assert tool["outputSchema"]["type"] == "object"
        assert set(tool["annotations"]) >= {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
        assert tool["annotations"]["openWorldHint"] is False
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])


def test_tools_list_honours_cursors(store):
    responses = run([{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "0"}},
                     {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": str(len(TOOLS) - 1)}},
                     {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": str(len(TOOLS))}}],
                    store)
    assert len(responses[0]["result"]["tools"]) == len(TOOLS)
    assert "nextCursor" not in responses[0]["result"]
    assert [t["name"] for t in responses[1]["result"]["tools"]] == [TOOLS[-1].name]
    assert responses[2]["result"]["tools"] == []


def test_tools_list_pages_when_the_table_is_longer_than_a_page(store, monkeypatch):
    monkeypatch.setattr(methods, "TOOLS_PAGE_SIZE", 5)
    first = run([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}], store)[0]["result"]
    assert len(first["tools"]) == 5 and first["nextCursor"] == "5"
    second = run([{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "5"}}], store)[0]["result"]
    assert second["tools"][0]["name"] == TOOLS[5].name


@pytest.mark.parametrize("cursor", ["abc", "-1", "999", 5, "", None])
def test_tools_list_rejects_invalid_cursors(store, cursor):
    params = {"cursor": cursor}
    responses = run([{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}, PING], store)
    if cursor is None:
        assert "tools" in responses[0]["result"]
    else:
        assert responses[0]["error"]["code"] == INVALID_PARAMS
        assert "cursor" in responses[0]["error"]["message"]
    assert_still_serving(responses)


# --- each tool's happy path ------------------------------------------------------------------------

def test_memory_briefing(store):
    store.remember("Deploys go through the staging cluster first", kind="decision")
    result = ok(store, "memory_briefing", {"max_tokens": 200})
    assert "staging cluster" in result["content"][0]["text"]
    assert result["structuredContent"]["text"] == result["content"][0]["text"]


def test_memory_briefing_structured_items_are_the_ones_its_text_shows(store):
    for i in range(8):
        store.remember(f"Decision number {i}: use library{i} for feature{i} because of reasons", kind="decision")
    brief = ok(store, "memory_briefing", {"max_tokens": 60})["structuredContent"]
    in_text = re.findall(r"^- \[(M\d+) ", brief["text"], flags=re.M)
    assert 0 < len(in_text) < 8 and brief["items"]["decisions"] == in_text
    assert brief["sections"]["decisions"] == len(in_text) and brief["not_shown"]["decisions"] == 8 - len(in_text)


def test_memory_remember_creates_then_reports_exact_duplicates(store):
    args = {"content": "The CI cache key must include the lockfile hash", "kind": "gotcha", "title": "CI cache key",
            "tags": ["ci"], "importance": 0.8, "pinned": False, "ttl_days": 30}
    first = ok(store, "memory_remember", args)
    assert first["structuredContent"]["status"] == "created"
    assert first["content"][0]["text"].startswith(f"Stored {first['structuredContent']['id']}")
    again = ok(store, "memory_remember", args)
    assert again["structuredContent"]["status"] == "duplicate"
    assert again["structuredContent"]["id"] == first["structuredContent"]["id"]
    stored = store.get([first["structuredContent"]["id"]])["memories"][0]
    assert stored["source"]["platform"] == "claude-code" and stored["source"]["cwd"]
    assert stored["tags"] == ["ci"] and stored["namespace"] == "proj"


def test_memory_remember_says_an_unclosed_private_tag_left_the_rest_out(store):
    result = ok(store, "memory_remember", {"content": "Docs: wrap secrets in <private> tags. Deploy on Friday"})
    assert result["structuredContent"]["unclosed_private"] == len(" tags. Deploy on Friday")
    text = result["content"][0]["text"]
    assert "unclosed <private> tag: everything after it" in text and "</private>" in text


def test_memory_remember_into_a_new_namespace_needs_consent(store):
    refused = call(store, "memory_remember", {"content": "Lost fact", "namespace": "typo-project"})["result"]
    assert refused["isError"] is True
    assert "create_namespace" in refused["content"][0]["text"]
    allowed = ok(store, "memory_remember", {"content": "Lost fact", "namespace": "typo-project",
                                            "create_namespace": True})
    assert allowed["structuredContent"]["namespace"] == "typo-project"


def test_memory_recall_compact_full_and_explain(store):
    store.remember("Use ruff for linting; black is not used in this repo. " + "Details. " * 30, kind="decision",
                   title="Linting with ruff")
    compact = ok(store, "memory_recall", {"query": "ruff linting", "limit": 3})
    hits = compact["structuredContent"]["results"]
    assert hits and hits[0]["title"] == "Linting with ruff"
    assert "body" not in hits[0]
    full = ok(store, "memory_recall", {"query": "ruff linting", "format": "full", "explain": True,
                                       "kinds": ["decision"], "min_similarity": 0, "relative_cutoff": 0,
                                       "max_tokens": 2000, "since": "30d", "namespace": "proj"})
    hit = full["structuredContent"]["results"][0]
    assert "Details." in hit["body"] and "features" in hit
    assert "features:" in full["content"][0]["text"]
    logged = store.conn.execute("SELECT origin FROM search_log ORDER BY id DESC LIMIT 1").fetchone()[0]
    assert logged == "mcp"


def test_memory_recall_with_nothing_to_return_says_why_once(store):
    store.remember("lumen unit tests use vitest; pnpm test runs them in watch mode.")
    result = ok(store, "memory_recall", {"query": "how do we shard the elasticsearch cluster"})
    assert result["structuredContent"]["results"] == []
    assert "nothing relevant" in result["structuredContent"]["note"]
    text = result["content"][0]["text"]
    assert text.startswith("No relevant memories") and text.count("nothing relevant") == 1


def test_memory_recall_answers_a_broad_question_by_listing_and_intent_false_turns_it_off(store):
    task = store.remember("TODO: add retries to the webhook sender.", kind="task")["id"]
    store.remember("We use Postgres 15 for the ledger service.", kind="decision")
    listed = ok(store, "memory_recall", {"query": "what's still open?", "explain": True})["structuredContent"]
    assert [r["id"] for r in listed["results"]] == [task] and listed["results"][0]["score"] is None
    assert listed["note"].startswith("broad query: kind=task status=open") and listed["intent"]["only"]
    plain = ok(store, "memory_recall", {"query": "what's still open?", "intent": False})["structuredContent"]
    assert "broad query" not in (plain.get("note") or "")


def test_memory_get_and_missing_ids(store):
    memory_id = store.remember("Ports: API on 8080, admin on 9090", kind="fact")["id"]
    result = ok(store, "memory_get", {"ids": [memory_id, "M999"]})
    assert result["structuredContent"]["memories"][0]["body"] == "Ports: API on 8080, admin on 9090"
    assert result["structuredContent"]["missing"] == ["M999"]
    assert "Not found: M999" in result["content"][0]["text"]


def test_memory_list_with_filters_and_paging(store):
    for n in range(3):
        store.remember(f"Open task number {n}", kind="task", tags=["todo"])
    store.remember("A plain note", kind="note")
    result = ok(store, "memory_list", {"kinds": ["task"], "tags": ["todo"], "status": "open", "limit": 2,
                                       "offset": 0, "since": "7d", "order": "recent"})
    assert len(result["structuredContent"]["memories"]) == 2
    assert result["structuredContent"]["total"] == 3
    assert "offset=2" in result["content"][0]["text"]


def test_memory_list_and_memory_get_carry_their_records_under_the_same_key(store):
    """memory_list said `items` where memory_get said `memories`; both say `memories` now (no `items` alias over
    MCP: it would send every record twice and halve the page a response holds)."""
    memory_id = store.remember("Ports: API on 8080, admin on 9090", kind="fact")["id"]
    listed = ok(store, "memory_list", {})["structuredContent"]
    got = ok(store, "memory_get", {"ids": [memory_id]})["structuredContent"]
    assert [m["id"] for m in listed["memories"]] == [m["id"] for m in got["memories"]] == [memory_id]
    assert "items" not in listed and listed["total"] == 1
    schema = TOOLS_BY_NAME["memory_list"].output_schema
    jsonschema.validate(listed, schema)
    assert "memories" in schema["required"]


def test_memory_update_and_history(store):
    memory_id = store.remember("Staging DB is on port 5432", kind="fact")["id"]
    updated = ok(store, "memory_update", {"id": memory_id, "content": "Staging DB moved to port 6432",
                                          "importance": 0.9, "tags": ["db"]})
    new_id = updated["structuredContent"]["id"]
    assert updated["structuredContent"]["previous"] == memory_id and new_id != memory_id
    unchanged = ok(store, "memory_update", {"id": new_id, "importance": 0.9})
    assert unchanged["structuredContent"]["status"] == "unchanged"
    history = ok(store, "memory_history", {"id": new_id})
    assert [v["id"] for v in history["structuredContent"]["versions"]] == [memory_id, new_id]
    assert "6432" in history["content"][0]["text"] and "5432" in history["content"][0]["text"]
    secret = ok(store, "memory_update", {"id": new_id, "content": "Staging DB password: hunter2-" + "x9Qz7Lw3Rt5"})
    assert "Redacted before storing" in secret["content"][0]["text"]


def test_memory_history_shows_when_a_task_was_closed_and_by_whom(store):
    """A status-only update wrote a new version whose title and body repeat the old ones, so memory_history's text
    showed the same lines twice and nothing of the close; it now names the change and the client that made it."""
    memory_id = store.remember("Write the release notes", kind="task")["id"]
    closed = ok(store, "memory_update", {"id": memory_id, "status": "done"})["structuredContent"]["id"]
    history = ok(store, "memory_history", {"id": closed})
    text = history["content"][0]["text"]
    assert f"- {closed} " in text and "by claude-code" in text and "changed: status open → done" in text
    assert text.count("Write the release notes") == 3   # two titles, one body: the unchanged text is not repeated
    assert [v["status"] for v in history["structuredContent"]["versions"]] == ["open", "done"]
    assert history["structuredContent"]["versions"][1]["source"]["by"] == "claude-code"


def test_memory_update_refuses_a_status_on_a_memory_that_is_not_a_task(store):
    memory_id = store.remember("We use Postgres", kind="decision")["id"]
    refused = call(store, "memory_update", {"id": memory_id, "status": "done"})["result"]
    assert refused["isError"] is True
    assert f"status applies to tasks; {memory_id} is a decision" in refused["content"][0]["text"]
    assert [v["id"] for v in store.history(memory_id)["versions"]] == [memory_id]


def test_memory_forget_and_restore(store):
    from supermemory.render import render_history

    memory_id = store.remember("Temporary belief", kind="note")["id"]
    forgotten = ok(store, "memory_forget", {"ids": [memory_id]})
    assert forgotten["structuredContent"] == {"forgotten": [memory_id], "hard": False}
    assert store.get([memory_id])["missing"] == [memory_id]
    assert "forgotten by claude-code" in render_history(store.history(memory_id))   # the client, as update records it
    restored = ok(store, "memory_restore", {"ids": [memory_id]})
    assert restored["structuredContent"]["restored"] == [memory_id]
    assert store.get(memory_id)["memories"][0]["source"]["restored_by"] == "claude-code"
    hard = ok(store, "memory_forget", {"ids": [memory_id], "hard": True})
    assert hard["structuredContent"]["hard"] is True
    assert "Hard-deleted" in hard["content"][0]["text"]


def test_memory_link(store):
    a = store.remember("Use Postgres 16", kind="decision")["id"]
    b = store.remember("Postgres 16 needs the new pg_dump", kind="gotcha")["id"]
    result = ok(store, "memory_link", {"src": b, "dst": a, "relation": "depends-on", "weight": 2})
    assert result["structuredContent"] == {"src": b, "dst": a, "relation": "depends-on", "weight": 2.0,
                                           "status": "created"}


def test_memory_stats(store):
    store.remember("One fact", kind="fact")
    result = ok(store, "memory_stats", {"namespace": "proj"})
    assert result["structuredContent"]["memories"] == 1
    assert "1 live memories" in result["content"][0]["text"]


def test_memory_usage_guide_lists_every_tool(store):
    text = ok(store, "memory_usage_guide", {})["content"][0]["text"]
    for tool in TOOLS:
        assert f"`{tool.name}`" in text


def test_memory_usage_guide_accepts_missing_arguments(store):
    from supermemory.guide import usage_guide

    result = ok(store, "memory_usage_guide")
    assert result["structuredContent"]["text"] == result["content"][0]["text"] == usage_guide(store.config, tools=TOOLS)


def test_memory_export_writes_inside_the_exports_folder(store, tmp_path):
    if not hasattr(store, "export"):
        pytest.skip("MemoryStore.export does not exist yet (the lead is adding it)")
    store.remember("Exported fact", kind="fact")
    result = ok(store, "memory_export", {"path": "backup.jsonl"})
    target = Path(result["structuredContent"]["path"])
    assert target == (tmp_path / "exports" / "backup.jsonl").resolve()
    assert target.exists() and "Exported fact" in target.read_text(encoding="utf-8")


# --- export path policy ----------------------------------------------------------------------------

def _outside_untouched(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("path", ["../../etc/x", "../outside.jsonl", "sub/../../x", "/etc/x", "~/x.jsonl"])
def test_memory_export_rejects_paths_outside_the_exports_folder(store, tmp_path, path):
    outside = tmp_path / "outside"
    outside.mkdir()
    before = _outside_untouched(tmp_path)
    result = call(store, "memory_export", {"path": path})["result"]
    assert result["isError"] is True
    assert "inside" in result["content"][0]["text"] or "'..'" in result["content"][0]["text"]
    after = set(_outside_untouched(tmp_path)) - set(before)
    assert after <= {"exports"}  # only the (empty) exports folder may appear


def test_memory_export_rejects_symlinks_that_leave_the_exports_folder(store, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "escape-dir").symlink_to(outside, target_is_directory=True)
    (exports / "escape-file.jsonl").symlink_to(outside / "stolen.jsonl")
    for path in ("escape-dir/x.jsonl", "escape-file.jsonl", str(exports / "escape-file.jsonl")):
        result = call(store, "memory_export", {"path": path})["result"]
        assert result["isError"] is True, path
    assert list(outside.iterdir()) == []


def test_export_paths_resolve_inside_exports_or_the_configured_folder(tmp_path):
    config = make_config(tmp_path / "home")
    target = resolve_export_path(config, "nested/dump.jsonl")
    assert target == str((tmp_path / "home" / "exports" / "nested" / "dump.jsonl").resolve())
    assert oct(os.stat(tmp_path / "home" / "exports").st_mode & 0o777) == "0o700"
    absolute_inside = str(tmp_path / "home" / "exports" / "a.jsonl")
    assert resolve_export_path(config, absolute_inside) == str(Path(absolute_inside).resolve())
    with pytest.raises(Exception, match="inside"):
        resolve_export_path(config, str(tmp_path / "elsewhere" / "a.jsonl"))
    allowed = make_config(tmp_path / "home", export={"dir": str(tmp_path / "elsewhere")})
    assert resolve_export_path(allowed, str(tmp_path / "elsewhere" / "a.jsonl")).endswith("a.jsonl")


# --- protocol errors: each one answered, and the loop keeps going ----------------------------------

@pytest.mark.parametrize("frame, code", [
    (b"{not json", PARSE_ERROR),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', PARSE_ERROR),
    (b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', PARSE_ERROR),
    (b"\xff\xfe\xfa invalid utf-8", PARSE_ERROR),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": "\xc3\x28"}', PARSE_ERROR),
    (b"[" * 100_000, PARSE_ERROR),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', INVALID_REQUEST),
    (b"[]", INVALID_REQUEST),
    (b'"just a string"', INVALID_REQUEST),
    (b"42", INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', INVALID_REQUEST),
    (b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "ping"}', PARSE_ERROR),
])
def test_malformed_frames_get_an_error_with_a_null_id(store, frame, code):
    responses = run([frame, PING], store)
    assert len(responses) == 2
    assert responses[0]["id"] is None
    assert responses[0]["error"]["code"] == code
    assert "Traceback" not in json.dumps(responses[0])
    assert_still_serving(responses)


@pytest.mark.parametrize("frame, reply_id", [
    ({"id": 3, "method": "ping"}, 3),
    ({"jsonrpc": "1.0", "id": "x", "method": "ping"}, "x"),
    ({"jsonrpc": "2.0", "id": 4}, 4),
    ({"jsonrpc": "2.0", "id": 5, "method": 12}, 5),
    ({"jsonrpc": "2.0"}, None),                        # no id and no method: no notification, an invalid request
    ({"jsonrpc": "2.0", "method": 1, "params": "bar"}, None),   # the JSON-RPC 2.0 specification's own example
])
def test_requests_without_a_valid_envelope_are_invalid(store, frame, reply_id):
    responses = run([frame, PING], store)
    assert responses[0]["id"] == reply_id
    assert responses[0]["error"]["code"] == INVALID_REQUEST
    assert_still_serving(responses)


@pytest.mark.parametrize("request_id", ["abc", "", "ünïcødé-id", 0, -5, 2 ** 70, 10 ** 40])
def test_string_and_big_integer_ids_are_echoed_exactly(store, request_id):
    responses = run([{"jsonrpc": "2.0", "id": request_id, "method": "ping"}], store)
    assert responses == [{"jsonrpc": "2.0", "id": request_id, "result": {}}]


def test_unknown_methods_are_method_not_found_with_the_method_as_data(store):
    responses = run([{"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, PING], store)
    assert responses[0]["error"] == {"code": METHOD_NOT_FOUND, "message": "Method not found",
                                     "data": "resources/list"}
    assert_still_serving(responses)


def test_params_must_be_an_object(store):
    responses = run([{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]}, PING], store)
    assert responses[0]["error"]["code"] == INVALID_PARAMS
    assert_still_serving(responses)


def test_unknown_tools_are_invalid_params(store):
    responses = run([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_nope"}}, PING],
                    store)
    assert responses[0]["error"]["code"] == INVALID_PARAMS
    assert responses[0]["error"]["message"] == "unknown tool memory_nope"
    assert_still_serving(responses)


def test_a_misspelled_tool_name_is_answered_with_the_close_ones(store):
    responses = run([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_recal"}}], store)
    assert responses[0]["error"]["code"] == INVALID_PARAMS
    assert responses[0]["error"]["message"] == "unknown tool memory_recal; did you mean 'memory_recall'?"


@pytest.mark.parametrize("params, field", [
    ({"arguments": {}}, "params.name"),
    ({"name": 5}, "params.name"),
    ({"name": "memory_stats", "arguments": [1]}, "params.arguments"),
    ({"name": "memory_stats", "arguments": "namespace=x"}, "params.arguments"),
])
def test_malformed_tools_call_params_name_the_field(store, params, field):
    responses = run([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, PING], store)
    assert responses[0]["error"]["code"] == INVALID_PARAMS
    assert responses[0]["error"]["message"].startswith(field)
    assert_still_serving(responses)


WRONG_ARGUMENTS = [
    ("memory_recall", {"query": "x", "limit": "5"}, "arguments.limit: expected integer"),
    ("memory_recall", {"query": "x", "limit": True}, "arguments.limit: expected integer"),
    ("memory_recall", {"query": "x", "limit": 1.5}, "arguments.limit: expected integer"),
    ("memory_recall", {"query": "x", "limit": 0}, "arguments.limit: must be >= 1"),
    ("memory_recall", {"query": "x", "limit": 10_000}, "arguments.limit: must be <= 100"),
    ("memory_recall", {"query": "x", "format": "verbose"}, "arguments.format: must be one of"),
    ("memory_recall", {"query": "x", "explain": "yes"}, "arguments.explain: expected boolean"),
    ("memory_recall", {"query": "x", "intent": "no"}, "arguments.intent: expected boolean"),
    ("memory_recall", {"query": "x", "kinds": "decision"}, "arguments.kinds: expected array"),
    ("memory_recall", {"query": "x", "kinds": ["banana"]}, "arguments.kinds[0]: must be one of"),
    ("memory_recall", {"query": None}, "arguments.query: expected string"),
    ("memory_recall", {}, "arguments.query: required"),
    ("memory_recall", {"query": "x", "bogus": 1}, "arguments.bogus: unknown field"),
    ("memory_remember", {"content": ""}, "arguments.content: must not be empty"),
    ("memory_remember", {"content": "x", "importance": "high"}, "arguments.importance: expected number"),
    ("memory_remember", {"content": "x", "importance": 2}, "arguments.importance: must be <= 1"),
    ("memory_remember", {"content": "x", "pinned": 1}, "arguments.pinned: expected boolean"),
    ("memory_remember", {"content": "x", "tags": [1, 2]}, "arguments.tags[0]: expected string"),
    ("memory_remember", {"content": "x", "title": "t" * 501}, "arguments.title: longer than 500"),
    ("memory_get", {"ids": []}, "arguments.ids: needs at least 1"),
    ("memory_get", {"ids": "M1"}, "arguments.ids: expected array"),
    ("memory_forget", {"ids": ["M1"], "hard": "true"}, "arguments.hard: expected boolean"),
    ("memory_usage_guide", {"x": 1}, "arguments.x: unknown field"),
]


@pytest.mark.parametrize("tool, arguments, message", WRONG_ARGUMENTS)
def test_before_2025_11_25_wrong_arguments_are_invalid_params_naming_the_field(store, tool, arguments, message):
    responses = run([INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                         "params": {"name": tool, "arguments": arguments}}, PING], store)
    error = by_id(responses)[1]["error"]
    assert error["code"] == INVALID_PARAMS
    assert error["message"].startswith(message), error
    assert_still_serving(responses)


@pytest.mark.parametrize("tool, arguments, message", WRONG_ARGUMENTS)
def test_from_2025_11_25_wrong_arguments_are_a_tool_error_naming_the_field(store, tool, arguments, message):
    """SEP-1303: the model reads what to fix in the tool result instead of the client raising."""
    init = {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-11-25"}}
    responses = run([init, INITIALIZED, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                         "params": {"name": tool, "arguments": arguments}}, PING], store)
    result = by_id(responses)[1]["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("invalid arguments: " + message), result
    assert "structuredContent" not in result
    assert_still_serving(responses)


def test_from_2025_11_25_an_unknown_tool_and_malformed_params_stay_protocol_errors(store):
    init = {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-11-25"}}
    responses = by_id(run([init, INITIALIZED,
                           {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_nope"}},
                           {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                            "params": {"name": "memory_recall", "arguments": ["not", "an", "object"]}}], store))
    assert responses[1]["error"]["code"] == INVALID_PARAMS and "unknown tool" in responses[1]["error"]["message"]
    assert responses[2]["error"]["code"] == INVALID_PARAMS and "params.arguments" in responses[2]["error"]["message"]


def test_integral_floats_count_as_integers():
    schema = {"type": "object", "properties": {"limit": {"type": "integer"}}}
    assert validate(schema, {"limit": 5.0}) == {"limit": 5}


def test_a_10_mb_argument_is_refused_by_the_frame_limit_and_the_server_continues(store):
    huge = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "memory_remember", "arguments": {"content": "x" * (10 * 1024 * 1024)}}}
    responses = run([huge, PING], store)
    assert responses[0]["id"] == 1   # read from the frame's head: the caller gets its answer
    assert responses[0]["error"]["code"] == INVALID_REQUEST
    assert "mcp.max_frame_bytes" in responses[0]["error"]["message"]
    assert_still_serving(responses)
    assert store.list()["total"] == 0


def test_a_long_argument_under_the_frame_limit_is_refused_by_validation(store):
    big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "memory_recall", "arguments": {"query": "q" * 20_000}}}
    responses = run([INIT, INITIALIZED, big, PING], store)
    assert by_id(responses)[1]["error"]["code"] == INVALID_PARAMS
    assert by_id(responses)[1]["error"]["message"].startswith("arguments.query: longer than 10000")
    assert_still_serving(responses)


def test_the_frame_limit_is_a_setting_and_exact_size_frames_pass(tmp_path):
    config = make_config(tmp_path, mcp={"max_frame_bytes": 200})
    memory_store = MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj")
    fits = json.dumps({"jsonrpc": "2.0", "id": "a" * 10, "method": "ping"}).encode()
    fits = fits[:-1] + b" " * (200 - len(fits)) + b"}"
    assert len(fits) == 200
    too_big = fits[:-1] + b" }"
    responses = run([fits, too_big, too_big + b" " * 1000, PING], memory_store)
    memory_store.close()
    assert responses[0] == {"jsonrpc": "2.0", "id": "a" * 10, "result": {}}
    assert [r["error"]["code"] for r in responses[1:3]] == [INVALID_REQUEST, INVALID_REQUEST]
    assert_still_serving(responses)


def test_notifications_are_never_answered_even_when_wrong(store):
    responses = run([
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/unknown"},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "memory_nope"}},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "memory_recall", "arguments": {"limit": "x"}}},
        {"jsonrpc": "2.0", "method": "tools/list", "params": [1]},
        {"jsonrpc": "2.0", "method": "initialize", "params": {}},
        {"method": "notifications/initialized"},
        {"jsonrpc": "1.0", "method": "ping"},
        PING,
    ], store)
    assert responses == [{"jsonrpc": "2.0", "id": "after", "result": {}}]


def test_responses_from_the_client_are_accepted_silently(store):
    responses = run([
        {"jsonrpc": "2.0", "id": 99, "result": {"anything": True}},
        {"jsonrpc": "2.0", "id": "sm-roots-7", "error": {"code": -1, "message": "no"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "you sent junk"}},
        {"id": [1], "result": None},
        PING,
    ], store)
    assert responses == [{"jsonrpc": "2.0", "id": "after", "result": {}}]


def test_blank_lines_are_skipped(store):
    assert run([b"", b"   ", b"\r", PING], store) == [{"jsonrpc": "2.0", "id": "after", "result": {}}]


def test_a_final_frame_without_a_newline_is_still_handled(store):
    out = io.BytesIO()
    serve(io.BytesIO(json.dumps(PING).encode()), out, config=store.config, store_factory=lambda ns: store)
    assert json.loads(out.getvalue()) == {"jsonrpc": "2.0", "id": "after", "result": {}}


def test_text_streams_work_too(store):
    out = io.StringIO()
    serve(io.StringIO(json.dumps(PING) + "\n"), out, config=store.config, store_factory=lambda ns: store)
    assert json.loads(out.getvalue()) == {"jsonrpc": "2.0", "id": "after", "result": {}}


class ExplodingStore:
    """Stands in for a store whose methods fail in unexpected ways, or print to stdout."""

    namespace = "proj"

    def stats(self, **kwargs):
        raise RuntimeError("secret internal detail")

    def list(self, **kwargs):
        print("a library printing to stdout")
        return {"items": [], "total": 0, "limit": 50, "offset": 0, "truncated": False}

    context = type("Context", (), {"vectors_pending": True})()

    def fill_vectors(self, **kwargs):
        raise RuntimeError("idle failure")


def test_unexpected_exceptions_become_a_generic_internal_error(tmp_path, caplog):
    responses = run([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_stats"}}, PING],
                    ExplodingStore(), config=make_config(tmp_path))
    assert responses[0]["error"] == {"code": INTERNAL_ERROR, "message": "Internal error"}
    assert "secret internal detail" not in json.dumps(responses)
    assert "secret internal detail" in caplog.text
    assert_still_serving(responses)


def test_work_between_requests_that_fails_is_logged_once_and_the_server_keeps_serving(tmp_path, caplog):
    read_fd, write_fd = os.pipe()
    out = io.BytesIO()
    with os.fdopen(read_fd, "rb") as server_in:
        server = threading.Thread(target=serve, args=(server_in, out), kwargs={
            "config": make_config(tmp_path), "store_factory": lambda namespace: ExplodingStore()})
        server.start()
        with os.fdopen(write_fd, "wb") as client:   # idle work waits for the client to be initialized
            client.write(b"".join(encode(f) + b"\n" for f in (INIT, INITIALIZED)))
            client.write(encode({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_list"}})
                         + b"\n")
            client.flush()
            deadline = time.monotonic() + 30
            while "idle failure" not in caplog.text and time.monotonic() < deadline:
                time.sleep(0.02)
            client.write(encode(PING) + b"\n")
        server.join(30)
    assert caplog.text.count("filling in vectors between requests failed") == 1
    assert_still_serving([json.loads(line) for line in out.getvalue().splitlines()])


def test_prints_during_a_call_do_not_reach_the_frame_stream(tmp_path, capsys):
    responses = run([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_list"}}, PING],
                    ExplodingStore(), config=make_config(tmp_path))
    assert responses[0]["result"]["content"][0]["text"] == "No memories."
    captured = capsys.readouterr()
    assert "a library printing to stdout" in captured.err
    assert "a library printing to stdout" not in captured.out


def test_store_errors_are_tool_results_with_is_error(store):
    result = call(store, "memory_update", {"id": "M424242", "content": "x"})["result"]
    assert result["isError"] is True
    assert "M424242" in result["content"][0]["text"]
    assert "structuredContent" not in result


# --- response budget -------------------------------------------------------------------------------

def _frame_sizes(result: dict) -> tuple[int, int]:
    text = len(result["content"][0]["text"].encode("utf-8"))
    structured = len(json.dumps(result["structuredContent"], ensure_ascii=False).encode("utf-8"))
    return text, structured


def test_memory_get_cuts_long_bodies_with_a_pointer(store):
    memory_id = store.remember("Long design notes. " + "word " * 40_000, kind="note", title="Design notes")["id"]
    result = ok(store, "memory_get", {"ids": [memory_id]})
    text_size, structured_size = _frame_sizes(result)
    assert text_size <= 30_000 and structured_size <= 30_000
    item = result["structuredContent"]["memories"][0]
    assert item["body_truncated"] is True and item["body_chars"] > 200_000
    call_next = f'call memory_get with ids ["{memory_id}"] and offset {len(item["body"])}'
    assert call_next in result["structuredContent"]["note"]
    assert call_next in result["content"][0]["text"]


_NEXT_PART = re.compile(r'call memory_get with ids \["(M\d+)"\] and offset (\d+)')


def test_memory_get_pages_through_a_long_body_over_a_live_session(tmp_path):
    """Following the note's call, page by page, gives back the whole body exactly (multi-byte text, newlines,
    quotes and backslashes included), and the text content names the same next call."""
    line = 'Zeile {n}: café, naïve, 中文段落 and 😀 emoji, a "quoted" word and a back\\slash'
    content = "Long design notes.\n" + "\n".join(line.format(n=n) for n in range(2500))
    project = tmp_path / "proj"
    project.mkdir()
    client = McpClient(tmp_path / "home", project)
    try:
        client.initialize()
        added = client.tool("memory_remember", {"content": content, "title": "Design notes"})
        memory_id = added["structuredContent"]["id"]
        parts, arguments = [], {"ids": [memory_id]}
        while True:
            result = client.tool("memory_get", arguments)
            assert result["isError"] is False, result
            text_size, structured_size = _frame_sizes(result)
            assert text_size <= 30_000 and structured_size <= 30_000
            item = result["structuredContent"]["memories"][0]
            assert item["body_chars"] == len(content)
            parts.append(item["body"])
            found = _NEXT_PART.search(result["structuredContent"].get("note", ""))
            if not item.get("body_truncated"):
                assert found is None
                break
            assert found and found.group(1) == memory_id
            assert found.group(0) in result["content"][0]["text"]
            arguments = {"ids": [memory_id], "offset": int(found.group(2))}
            assert arguments["offset"] == sum(map(len, parts))
        assert len(parts) > 3
        assert "".join(parts) == content
        assert f"from character {arguments['offset']} of {len(content)}" in result["content"][0]["text"]
        assert client.close()[0] == 0
    finally:
        client.kill()


def test_memory_get_offset_needs_one_id_and_a_place_inside_the_body(store):
    first = store.remember("First fact about the cache layer", kind="fact")["id"]
    second = store.remember("Second fact about the build system", kind="fact")["id"]
    result = call(store, "memory_get", {"ids": [first, second], "offset": 3})["result"]
    assert result["isError"] is True and "exactly one id" in result["content"][0]["text"]
    result = call(store, "memory_get", {"ids": [first], "offset": 10_000})["result"]
    assert result["isError"] is True and "past the end" in result["content"][0]["text"]
    assert "offset" in call(store, "memory_get", {"ids": [first], "offset": -1})["error"]["message"]
    page = ok(store, "memory_get", {"ids": [first], "offset": 6})["structuredContent"]["memories"][0]
    assert page["body"] == "fact about the cache layer" and page["body_offset"] == 6


def test_memory_recall_degrades_to_compact_and_fewer_results(tmp_path):
    config = make_config(tmp_path, mcp={"max_response_bytes": 3000})
    memory_store = MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj")
    for n in range(8):
        memory_store.remember(f"Kubernetes deployment note {n}: " + f"detail{n} " * 400,
                              title=f"Kubernetes deployment {n} " + "with a long descriptive title " * 3)
    result = ok(memory_store, "memory_recall", {"query": "kubernetes deployment", "format": "full", "limit": 8,
                                                "relative_cutoff": 0, "min_similarity": 0})
    memory_store.close()
    text_size, structured_size = _frame_sizes(result)
    assert text_size <= 3000 and structured_size <= 3000
    structured = result["structuredContent"]
    assert "compact format" in structured["note"] and "memory_get" in structured["note"]
    assert all("body" not in hit for hit in structured["results"])
    assert structured["omitted"]


def test_memory_list_cuts_the_page_and_names_the_next_offset(tmp_path):
    config = make_config(tmp_path, mcp={"max_response_bytes": 2500})
    memory_store = MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj")
    for n in range(30):
        memory_store.remember(f"Fact number {n} about the build system and its many caches", kind="fact")
    result = ok(memory_store, "memory_list", {"limit": 30})
    memory_store.close()
    structured = result["structuredContent"]
    assert _frame_sizes(result)[1] <= 2500
    assert structured["truncated"] is True
    assert f"offset={len(structured['memories'])}" in structured["note"] and "items" not in structured


# --- the real process ------------------------------------------------------------------------------

def _spawn(tmp_path: Path, **popen) -> subprocess.Popen:
    env = dict(os.environ, SUPERMEMORY_HOME=str(tmp_path / "home"), SUPERMEMORY_EMBED_PROVIDER="hash",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SUPERMEMORY_NAMESPACE", None)
    return subprocess.Popen([sys.executable, "-m", "supermemory", "mcp"], stdin=popen.pop("stdin", subprocess.PIPE),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path, **popen)


def _send(proc: subprocess.Popen, frame) -> None:
    proc.stdin.write(encode(frame) + b"\n")
    proc.stdin.flush()


def test_subprocess_session_prints_only_frames_and_exits_0_on_eof(tmp_path):
    proc = _spawn(tmp_path)
    frames = [INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
              {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "memory_remember", "arguments": {"content": "Subprocess fact", "kind": "fact"}}},
              {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "memory_recall", "arguments": {"query": "subprocess fact"}}},
              b"garbage line"]
    out, err = proc.communicate(b"".join(encode(f) + b"\n" for f in frames), timeout=60)
    assert proc.returncode == 0, err.decode()
    replies = [json.loads(line) for line in out.decode("utf-8").splitlines()]
    assert len(replies) == 5
    ids = by_id(replies)
    assert ids[0]["result"]["serverInfo"]["name"] == "supermemory"
    assert len(ids[1]["result"]["tools"]) == len(TOOLS)
    assert ids[2]["result"]["structuredContent"]["namespace"] == namespace_for_dir(tmp_path)
    assert ids[3]["result"]["structuredContent"]["results"][0]["title"] == "Subprocess fact"
    assert ids[None]["error"]["code"] == PARSE_ERROR
    assert b"Traceback" not in err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_subprocess_exits_0_without_a_traceback_on_sigterm_and_sigint(tmp_path, signum):
    with _spawn(tmp_path) as proc:
        reader = LineReader(proc.stdout)
        _send(proc, INIT)
        assert json.loads(reader.next())["id"] == 0
        _send(proc, INITIALIZED)
        _send(proc, PING)
        assert json.loads(reader.next())["id"] == "after"
        proc.send_signal(signum)
        assert proc.wait(timeout=30) == 0
        assert reader.next() is None
        err = proc.stderr.read()
    assert b"Traceback" not in err, err.decode()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX reparenting")
def test_subprocess_exits_when_its_parent_dies(tmp_path):
    """The parent dies while the client still holds the server's stdin open: the ppid watcher ends it."""
    read_end, write_end = os.pipe()
    launcher = textwrap.dedent(f"""
        import os, subprocess, sys
        env = dict(os.environ, SUPERMEMORY_HOME={str(tmp_path / "home")!r}, SUPERMEMORY_EMBED_PROVIDER="hash",
                   PYTHONPATH={str(REPO)!r})
        proc = subprocess.Popen([sys.executable, "-m", "supermemory", "mcp"], stdin={read_end},
                                stdout=sys.stdout, stderr=subprocess.DEVNULL, env=env, pass_fds=({read_end},))
        print(proc.pid, flush=True)
        sys.stdin.read()  # live until the test says so
    """)
    parent = subprocess.Popen([sys.executable, "-c", launcher], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              pass_fds=(read_end,), cwd=tmp_path)
    os.close(read_end)
    with parent:
        try:
            reader = LineReader(parent.stdout)
            assert int(reader.next())
            os.write(write_end, encode(INIT) + b"\n")
            assert json.loads(reader.next())["id"] == 0  # the server is up, child of the launcher
            parent.stdin.close()
            assert parent.wait(timeout=30) == 0
            # the server's stdout reaches EOF only once the orphaned server has exited
            assert reader.next(timeout=30) is None
        finally:
            os.close(write_end)


def test_a_search_index_from_an_older_tokenizer_is_rebuilt_at_the_first_tool_call(tmp_path, config):
    first = MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj")
    first.remember("Making movies: the parties were planned in advance")
    age_search_index(first, "making movies parties planned")
    first.close()
    stale = MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj",
                        rebuild_index=False)   # as the server opens it: initialize must stay fast
    assert stale.index_stale
    result = ok(stale, "memory_recall", {"query": "make a movie"})
    assert not stale.index_stale
    assert result["structuredContent"]["results"], result
    stale.close()


def test_memory_link_with_remove_takes_a_wrong_link_back(store):
    a = store.remember("CI runs on Jenkins")["id"]
    b = store.remember("CI moved to GitHub Actions")["id"]
    store.link(b, a, relation="supersedes")
    response = call(store, "memory_link", {"src": b, "dst": a, "relation": "supersedes", "remove": True})
    result = response["result"]
    assert result["isError"] is False
    assert result["structuredContent"] == {"src": b, "dst": a, "removed": ["supersedes"]}
    assert result["content"][0]["text"] == f"Removed {b} -supersedes→ {a}."
    assert store.get(b)["memories"][0]["links"] == []
    again = call(store, "memory_link", {"src": b, "dst": a, "remove": True})["result"]
    assert again["isError"] is True and f"no link from {b} to {a}" in again["content"][0]["text"]


def test_recall_of_a_long_memory_answers_with_the_passage_not_the_whole_text(store):
    store.config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0)
    long_id = store.remember(" ".join(f"Section {n}: the relay{n} forwards queue{n} messages to sink{n}."
                                      for n in range(30)))["id"]
    result = ok(store, "memory_recall", {"query": "where does relay27 forward messages"})
    hit = next(r for r in result["structuredContent"]["results"] if r["id"] == long_id)
    assert "relay27" in hit["passage"]["text"] and "body" not in hit
    assert f"chunk {hit['passage']['chunk']} of {hit['passage']['chunks']}: " in result["content"][0]["text"]
