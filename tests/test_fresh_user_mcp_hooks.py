"""Defects a fresh-user run found in the MCP server and the hooks, each pinned by the way it was reproduced."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from supermemory.config import Config
from supermemory.core import MemoryStore
from supermemory.errors import EmbeddingUnavailableError
from supermemory.mcp.protocol import INVALID_REQUEST, head_request_id
from supermemory.mcp.server import serve
from supermemory.settings import DEFAULTS, deep_merge
from supermemory.store import embedding
from supermemory.store.embedding import FILL_SLICE

from conftest import FakeEmbedder

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


# --- cancellation -----------------------------------------------------------------------------------

INIT_WITH_ROOTS = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}},
                              "clientInfo": {"name": "claude-code", "version": "2.0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _remember(request_id, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "memory_remember", "arguments": {"content": text}}}


def _cancel(request_id) -> dict:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}


@pytest.fixture
def hash_store(tmp_path):
    from supermemory.core import MemoryStore
    from supermemory.embed import HashProvider

    config = Config(home=tmp_path, settings=DEFAULTS)
    store = MemoryStore(tmp_path / "m.db", config=config, embedder=HashProvider(), namespace="proj")
    yield store
    store.close()


def _run_with(store, frames: list[dict]) -> list[dict]:
    out = io.BytesIO()
    data = b"".join(_frame(frame) + b"\n" for frame in frames)
    assert serve(io.BytesIO(data), out, config=store.config, store_factory=lambda namespace: store) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_tool_call_cancelled_while_it_waits_for_the_roots_is_never_run(hash_store):
    """Found by hand: the client offered roots, sent memory_remember, then notifications/cancelled for it (the
    user pressed Esc); the call waited its 2 s for roots/list, then wrote the memory and answered anyway."""
    responses = _run_with(hash_store, [INIT_WITH_ROOTS, INITIALIZED, _remember(5, "the user cancelled this write"),
                                       _cancel(5), _remember(6, "this one stands"), PING])
    answered = [r.get("id") for r in responses if "method" not in r]
    assert 5 not in answered and 6 in answered and "after" in answered
    assert [item["title"] for item in hash_store.list()["items"]] == ["this one stands"]


def test_a_request_cancelled_while_queued_behind_a_slow_call_is_not_run(hash_store, monkeypatch):
    """The reader notes a cancellation as soon as it reads it; the loop, busy with a slow call meanwhile, then
    drops the request it names instead of running it."""
    import threading

    from supermemory.mcp.session import Session

    noted = threading.Event()
    note = Session.note_cancellation

    def noting(self, frame):
        note(self, frame)
        if b"notifications/cancelled" in frame:
            noted.set()

    monkeypatch.setattr(Session, "note_cancellation", noting)
    stats = hash_store.stats

    def slow_stats(**kwargs):
        assert noted.wait(10), "the reader never saw the cancellation"
        return stats(**kwargs)

    monkeypatch.setattr(hash_store, "stats", slow_stats)
    slow = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_stats", "arguments": {}}}
    responses = _run_with(hash_store, [slow, _remember(2, "cancelled while queued"), _cancel(2), PING])
    assert [r["id"] for r in responses] == [1, "after"]
    assert hash_store.list()["total"] == 0


def test_a_cancellation_only_reaches_requests_sent_before_it(hash_store):
    """A cancellation the loop has passed (of an id never sent, or already answered) does not swallow a later
    request that uses the id; frames are fed one at a time as the reader and then the loop see them."""
    from supermemory.mcp.session import Session

    session = Session(hash_store.config, store_factory=lambda namespace: hash_store)
    answered = []
    for message in [_cancel(3), _remember(3, "sent after its id was cancelled"), _remember(4, "answered first"),
                    _cancel(4), _remember(4, "reused id"), PING]:
        frame = _frame(message)
        session.note_cancellation(frame)
        response = session.handle_frame(frame)
        if response is not None:
            answered.append(response["id"])
    assert answered == [3, 4, 4, "after"]
    assert hash_store.list()["total"] == 3


# --- hooks ------------------------------------------------------------------------------------------

def test_a_stop_payload_over_4_mb_is_still_read(capsys):
    """Found by hand: a Codex Stop payload whose last_assistant_message was 5 MB was cut at 4 MB, reported as
    'stdin was not JSON', and the turn was captured with defaults (no session id, no transcript)."""
    from supermemory import hooks

    payload = {"session_id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "transcript_path": None, "cwd": "/tmp/x",
               "hook_event_name": "Stop", "last_assistant_message": "y" * (5 * 1024 * 1024)}
    read = hooks._read_payload(io.StringIO(json.dumps(payload)))
    assert read["session_id"] == payload["session_id"]
    assert "not JSON" not in capsys.readouterr().err


def test_a_payload_over_the_limit_says_so_instead_of_not_json(capsys, monkeypatch):
    from supermemory import hooks

    monkeypatch.setattr(hooks, "MAX_PAYLOAD", 1000)
    assert hooks._read_payload(io.StringIO(json.dumps({"cwd": "/x", "text": "y" * 2000}))) == {}
    err = capsys.readouterr().err
    assert "larger than" in err and "not JSON" not in err
    assert hooks._read_payload(io.StringIO(json.dumps({"cwd": "/x", "text": "y" * 900}))) == {"cwd": "/x",
                                                                                              "text": "y" * 900}


# --- paths no folder can have -----------------------------------------------------------------------

@pytest.mark.parametrize("uri", ["file:///tmp/a%00b", "file://[::1/work", "file:///tmp/\ud800x"])
def test_a_roots_answer_naming_an_impossible_folder_does_not_end_the_server(hash_store, uri):
    """Found by hand: the client answered roots/list with file:///tmp/a%00b and the server died with a
    ValueError traceback (rc 1) before answering the next tool call; an unclosed IPv6 host did the same."""
    roots = {"jsonrpc": "2.0", "id": "sm-roots-1", "result": {"roots": [{"uri": uri}]}}
    stats = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_stats", "arguments": {}}}
    responses = _run_with(hash_store, [INIT_WITH_ROOTS, INITIALIZED, roots, stats, PING])
    answered = {r["id"]: r for r in responses if "method" not in r}
    assert answered[2]["result"]["isError"] is False
    assert answered["after"]["result"] == {}


@pytest.mark.parametrize("folder", ["/srv/a\x00b", "\ud800", "/tmp/\udcff/x"])
def test_a_folder_no_path_can_hold_still_gets_a_namespace(folder):
    from supermemory.config import namespace_for_dir

    assert namespace_for_dir(folder)


def test_session_start_with_a_nul_in_the_payload_cwd_still_briefs():
    """Found by hand: {"cwd": "/root/x\\u0000y"} ended the SessionStart hook with 'ValueError: embedded null
    byte', so the session started without its briefing."""
    from supermemory import hooks

    out = io.StringIO()
    assert hooks.run_hook("session-start", stdin=io.StringIO(json.dumps({"cwd": "/srv/x\x00y", "source": "startup"})),
                          stdout=out, budget=120) == 0
    answer = json.loads(out.getvalue())
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "no memories yet" in answer["hookSpecificOutput"]["additionalContext"]



def _long_text(sections: int) -> str:
    """A text of `sections` sentences, each with words of its own."""
    return " ".join(f"Section {n}: the ingest worker{n} retries batch{n} after timeout{n} errors." for n in range(sections))


def _small_chunks(config, write_embed_chunks: int = 32) -> None:
    """Tiny chunks, so a short test text makes many of them."""
    config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0,
                                                   write_embed_chunks=write_embed_chunks)


class _Missing(FakeEmbedder):
    """The model is not installed: nothing can be embedded, nothing pinned."""

    def fingerprint(self):
        raise EmbeddingUnavailableError("model files missing")

    def embed_multi(self, texts, progress=None):
        raise EmbeddingUnavailableError("model files missing")


class _Counting(FakeEmbedder):
    """Counts the texts it embeds."""

    def __init__(self):
        super().__init__()
        self.embedded = 0

    def embed_multi(self, texts, progress=None):
        self.embedded += len(texts)
        return super().embed_multi(texts, progress=progress)


def test_the_first_use_of_a_newly_installed_model_embeds_one_slice_not_the_whole_backlog(db_path, config):
    # Found by a fresh-user run: a 377 KB note stored while the model was missing (545 chunks, lexical only);
    # once the model was there, the MCP server's first idle slice pinned the database and embedded all 545
    # chunks in one go on the main thread: `tools/list` right after `initialize` answered after 71 s.
    _small_chunks(config)
    with MemoryStore(db_path, config=config, embedder=_Missing(), namespace="p") as store:
        written = store.remember(_long_text(40), create_namespace=True)
    with MemoryStore(db_path, config=config, embedder=_Counting(), namespace="p") as store:
        chunks = written["chunks"]
        assert chunks > 2 * FILL_SLICE and store.pinned_model() is None
        store.remember("deploys go out on Tuesdays")           # the first embedding pins the database
        counting = store.context.embedder
        assert store.pinned_model() is not None
        at_pin = counting.embedded - 1                         # the new text is one chunk
        assert at_pin <= FILL_SLICE                            # one slice of the backlog
        assert store.context.vectors_pending is True           # the rest: idle time or maintenance
        assert store.fill_vectors() == chunks - at_pin
        assert store.health()["vectors_pending"] == 0


def test_a_slice_another_process_filled_first_still_ends_the_idle_turn(db_path, config):
    # Found by a fresh-user run: two MCP servers on one store, both filling the rest of a 377 KB note between
    # requests. Whichever lost the race for a slice (the other committed its vectors while it was embedding)
    # counted nothing done and went on to the next slice, and the next, while its client waited: a ping took
    # 80 s, a memory_stats 11.9 s.
    _small_chunks(config, write_embed_chunks=1)
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p") as other:
        other.remember(_long_text(40), create_namespace=True)
        with MemoryStore(db_path, config=config, embedder=_Counting(), namespace="p") as store:
            store.remember("deploys go out on Tuesdays")
            racing = store.context.embedder
            calls = []
            real = racing.embed_multi

            def beaten(texts, progress=None):   # the other server commits the same slice meanwhile
                calls.append(len(texts))
                other.fill_vectors(limit=1)
                return real(texts, progress=progress)

            racing.embed_multi = beaten
            assert store.fill_vectors(limit=1) == 0
            assert calls == [FILL_SLICE]                    # one slice per idle turn, won or lost
            assert store.context.vectors_pending is not False


def test_two_servers_fill_in_different_stretches_of_a_long_text(db_path, config, monkeypatch):
    # Found by a fresh-user run: two MCP servers on one store (two agent sessions in one project) both
    # filled the rest of a long text from its first chunk on, so while one embedded a slice the other
    # embedded the same one, and one copy was thrown away: twice the CPU for the same vectors. Each
    # process now starts at a point of its own (its pid's), so neither loses its slice to the other.
    import os

    _small_chunks(config, write_embed_chunks=1)
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p") as other:
        written = other.remember(_long_text(60), create_namespace=True)
        with MemoryStore(db_path, config=config, embedder=_Counting(), namespace="p") as store:
            racing = store.context.embedder
            real = racing.embed_multi
            won_by_other = []

            def meanwhile(texts, progress=None):   # the other server fills a slice while this one embeds
                monkeypatch.setattr(os, "getpid", lambda: 7)   # starts a third of the way in, 4242 at 86 %
                won_by_other.append(other.fill_vectors(limit=1))
                monkeypatch.setattr(os, "getpid", lambda: 4242)
                return real(texts, progress=progress)

            racing.embed_multi = meanwhile
            monkeypatch.setattr(os, "getpid", lambda: 4242)
            assert [store.fill_vectors(limit=1) for _ in range(3)] == [FILL_SLICE] * 3   # none thrown away
            assert won_by_other == [FILL_SLICE] * 3
            racing.embed_multi = real
            assert store.fill_vectors() == written["vectors_pending"] - 6 * FILL_SLICE   # then the rest, all of it
            assert store.health()["vectors_pending"] == 0


def test_a_running_server_fills_in_what_another_process_wrote_after_its_next_tool_call(db_path, config):
    # Found by a fresh-user run: with `supermemory mcp` running (it had looked once and found nothing to fill
    # in), a `supermemory remember` of a 377 KB note from the CLI left 513 chunks without a vector; 40 pings
    # and a memory_stats over 20 s later the server had filled in none (it never looked again), though the
    # note said the server fills them while it idles.
    from supermemory.mcp.session import Session

    _small_chunks(config, write_embed_chunks=1)
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p") as server_store:
        server_store.remember("deploys go out on Tuesdays", create_namespace=True)
        session = Session(config, store_factory=lambda namespace: server_store)
        session.handle_message(dict(INIT_WITH_ROOTS, params=dict(INIT_WITH_ROOTS["params"], capabilities={})))
        session.handle_message(INITIALIZED)
        stats = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_stats"}}
        assert "result" in session.handle_message(stats)
        session.idle_work()
        assert not session.has_idle_work()                      # looked, nothing to do: the loop may block
        with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p") as cli:
            pending = cli.remember(_long_text(20))["vectors_pending"]
        assert pending > FILL_SLICE and not session.has_idle_work()   # nothing tells the server yet
        assert "result" in session.handle_message(dict(stats, id=2))
        assert session.has_idle_work()                          # after a tool call it looks again
        session.idle_work()
        left = server_store.health()["vectors_pending"]
        assert left == pending - FILL_SLICE
        assert "result" in session.handle_message(dict(stats, id=3))
        session.idle_work()                                     # nobody else wrote: one PRAGMA, no scan
        while session.has_idle_work():
            session.idle_work()
        assert server_store.health()["vectors_pending"] == 0


def test_a_write_without_the_model_says_its_vectors_follow_not_to_reindex(db_path, config, caplog):
    # Found by a fresh-user run: a PreCompact hook that could not load the model said "lexical recall only until
    # `supermemory reindex`" (a re-embedding of every memory), though such chunks now get their vectors while
    # the MCP server idles or at maintenance, as this test shows.
    with MemoryStore(db_path, config=config, embedder=_Missing(), namespace="p") as store:
        with caplog.at_level("WARNING", logger="supermemory"):
            store.remember("the release checklist lives in docs/release.md", create_namespace=True)
    assert "storing without vectors" in caplog.text and "reindex" not in caplog.text
    assert "maintenance" in caplog.text
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p") as store:
        store.maintenance()
        assert store.health()["vectors_pending"] == 0


def test_catch_up_embeds_what_a_write_without_the_model_left_and_looks_no_further_when_nothing_waits(db_path, config):
    # Found by a fresh-user run: "we use uv for Python packaging" stored without the model, then "ruff for lint"
    # with it; a CLI-only user's `recall "python packaging tool"` put ruff first until `supermemory maintenance`.
    # The CLI's recall and remember now call catch_up_vectors first (tests/test_cli.py runs them).
    with MemoryStore(db_path, config=config, embedder=_Missing(), namespace="p") as store:
        store.remember("we use uv for Python packaging", create_namespace=True)
    with MemoryStore(db_path, config=config, embedder=_Counting(), namespace="p") as store:
        assert store.health()["vectors_pending"] == 1
        assert store.catch_up_vectors() == 0 and store.context.embedder.embedded == 1
        assert store.health()["vectors_pending"] == 0
    with MemoryStore(db_path, config=config, embedder=_Counting(), namespace="p") as store:
        assert not embedding.may_be_waiting(store.context)       # two counts, no scan, no model
        assert store.catch_up_vectors() == 0 and store.context.embedder.embedded == 0
        store.forget([store.list()["items"][0]["id"]])
        assert not embedding.may_be_waiting(store.context)       # a forgotten memory leaves both indexes


def test_catch_up_stops_at_its_bounds_and_says_how_many_chunks_are_left(db_path, config, caplog):
    _small_chunks(config)
    with MemoryStore(db_path, config=config, embedder=_Missing(), namespace="p") as store:
        chunks = store.remember(_long_text(40), create_namespace=True)["chunks"]
    with MemoryStore(db_path, config=config, embedder=_Counting(), namespace="p") as store:
        with caplog.at_level("WARNING", logger="supermemory"):
            left = store.catch_up_vectors(limit=FILL_SLICE)
        assert chunks > 2 * FILL_SLICE and store.context.embedder.embedded == FILL_SLICE
        assert left == chunks - FILL_SLICE == store.health()["vectors_pending"]
        assert f"{left} chunks still wait for a vector" in caplog.text and "maintenance" in caplog.text
        assert store.catch_up_vectors(seconds=0) == left                  # the time is up before the first slice


def test_catch_up_without_the_model_leaves_the_chunks_and_says_nothing(db_path, config, caplog):
    with MemoryStore(db_path, config=config, embedder=_Missing(), namespace="p") as store:
        store.remember("we use uv for Python packaging", create_namespace=True)
        caplog.clear()   # the write's own warning: its vectors follow once the model runs
        with caplog.at_level("WARNING", logger="supermemory"):
            assert store.catch_up_vectors() == 0
        assert caplog.text == "" and store.health()["vectors_pending"] == 1


def test_catch_up_under_another_writers_lock_gives_up_instead_of_waiting_out_the_busy_timeout(db_path, config):
    import time

    from supermemory.store import db as dbm

    with MemoryStore(db_path, config=config, embedder=_Missing(), namespace="p") as store:
        store.remember("we use uv for Python packaging", create_namespace=True)
    holder = dbm.connect(str(db_path), dbm.choose_driver(None))
    try:
        with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p") as store:
            store.embedder                        # pinned before the lock is taken, as a store used before
            holder.execute("BEGIN IMMEDIATE")     # another process is writing (a backfill, say)
            started = time.monotonic()
            assert store.catch_up_vectors() == 0
            assert time.monotonic() - started < 10     # the busy timeout is 30 s
            holder.execute("ROLLBACK")
            assert store.health()["vectors_pending"] == 1 and store.catch_up_vectors() == 0
            assert store.health()["vectors_pending"] == 0
    finally:
        holder.close()


def test_filling_in_waits_for_the_warm_up_so_the_first_requests_answer_at_once(db_path, config):
    # Found by a fresh-user run: a server started on a store with chunks still waiting for a vector ran its
    # first idle slice right after `initialize`, on the main thread, while the warm-up thread was loading the
    # model: the slice waited for the load, and `tools/list` answered after 2.0 s (0.08 s without a backlog).
    import threading

    from supermemory.mcp.session import WARMUP_POLL_SECONDS, Session

    _small_chunks(config, write_embed_chunks=1)
    with MemoryStore(db_path, config=config, embedder=_Counting(), namespace="p") as store:
        store.remember(_long_text(20), create_namespace=True)
        session = Session(config, store_factory=lambda namespace: store)
        session.handle_message(dict(INIT_WITH_ROOTS, params=dict(INIT_WITH_ROOTS["params"], capabilities={})))
        assert session.store is store and store.context.vectors_pending is True
        assert not session.has_idle_work() and session.idle_wait() == WARMUP_POLL_SECONDS   # not initialized yet
        session.handle_message(INITIALIZED)
        loaded = threading.Event()
        session.warmup_thread = threading.Thread(target=loaded.wait, daemon=True)
        session.warmup_thread.start()
        before = store.context.embedder.embedded
        session.idle_work()
        assert not session.has_idle_work() and store.context.embedder.embedded == before
        assert session.idle_wait() == WARMUP_POLL_SECONDS      # the loop looks again soon, never blocks for good
        loaded.set()
        session.warmup_thread.join()
        assert session.has_idle_work() and session.idle_wait() == 0
        session.idle_work()
        assert store.context.embedder.embedded == before + FILL_SLICE


def test_the_first_write_to_a_fresh_database_still_leaves_the_rest_of_a_long_text_pending(db_path, config):
    # Found while writing the warm-up test: the first long text written to a database not yet pinned marked the
    # store pending, then the embedder's first use pinned the database and looked for chunks without a vector
    # (this text's were not inserted yet), found none and marked it done: an MCP server whose warm-up had not
    # pinned the database first never filled that text in.
    _small_chunks(config, write_embed_chunks=1)
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p") as store:
        assert store.pinned_model() is None
        assert store.remember(_long_text(20), create_namespace=True)["vectors_pending"] > 0
        assert store.context.vectors_pending is True


def test_recall_without_the_model_warns_once_per_reason_and_every_result_says_why(db_path, config, caplog):
    # Found by a fresh-user run: a broad question ("kubernetes ingress gotchas") recalls up to three times, and
    # each logged the same "recall without vectors" line, so the CLI printed it twice or three times.
    with MemoryStore(db_path, config=config, embedder=_Missing(), namespace="p") as store:
        store.remember("Gotcha: the ingress drops websockets after 60 s", kind="gotcha", create_namespace=True)
        with caplog.at_level("WARNING", logger="supermemory"):
            results = [store.recall(q) for q in ("kubernetes ingress gotchas", "websockets", "ingress timeouts")]
    assert caplog.text.count("recall without vectors") == 1
    assert all("vector search unavailable" in r["warning"] for r in results)   # the reason stays on each result
