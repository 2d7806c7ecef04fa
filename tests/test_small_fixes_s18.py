"""Small fixes from the session-17 fresh-user report: the remember hint for a negated restatement, health's
possible contradictions that a link already settled, NUL warnings, the pending-vector notice's scope, the
SessionStart word on a broken database, the SUPERMEMORY_HOME-is-a-file message, MCP empty content, help text."""
from __future__ import annotations

from supermemory.core import MemoryStore
from supermemory.render import CLI_COMMANDS, render_health, render_remember
from tests.test_fresh_user_mcp_hooks import FILL_SLICE, _Counting, _long_text, _Missing, _small_chunks
from tests.test_mcp_server import call

# Long enough a shared tail that the test embedder (feature hashing) puts the pairs above 0.9, as bge-small does.
TAIL = " in the web workspace: pnpm keeps the lockfile and the shared store in sync across every package of the monorepo"


def test_remember_hints_at_a_close_memory_it_negates_as_health_does(store):
    # Fresh-user report: "Do not prefer pathlib…" next to "Prefer pathlib…" (0.98) came back with no hint at all.
    use = store.remember(f"Use the staging database for load tests{TAIL}", kind="preference")
    dont = store.remember(f"Do not use the staging database for load tests{TAIL}", kind="preference")
    assert dont["near_duplicates"] == []
    [against] = dont["possible_contradictions"]
    assert against["id"] == use["id"] and against["similarity"] >= 0.9
    [pair] = store.health()["possible_contradictions"]
    assert {pair["a"], pair["b"]} == {use["id"], dont["id"]}
    text = render_remember(dont, commands=CLI_COMMANDS)
    assert f"May contradict: {use['id']}" in text and f"supermemory update {use['id']}" in text


def test_mcp_remember_shows_the_possible_contradiction(store):
    use = store.remember(f"Use the staging database for load tests{TAIL}", kind="preference")
    result = call(store, "memory_remember", {"content": f"Do not use the staging database for load tests{TAIL}",
                                             "kind": "preference"})["result"]
    assert result["isError"] is False
    assert [c["id"] for c in result["structuredContent"]["possible_contradictions"]] == [use["id"]]
    assert f"May contradict: {use['id']}" in result["content"][0]["text"]


def test_a_copy_is_still_a_near_duplicate_not_a_contradiction(store):
    first = store.remember(f"Use the staging database for load tests{TAIL}")
    again = store.remember(f"Use the staging database for load tests{TAIL}", title="Staging for load tests")
    assert [n["id"] for n in again["near_duplicates"]] == [first["id"]]
    assert again["possible_contradictions"] == []


def test_health_skips_a_possible_contradiction_that_a_link_settled(store):
    # Fresh-user report: "We deploy … Netlify" / "We no longer deploy … Netlify" (M37 supersedes M36) was still a
    # possible contradiction and made health say "needs attention".
    use = store.remember(f"Use the staging database for load tests{TAIL}")
    dont = store.remember(f"Do not use the staging database for load tests{TAIL}")
    assert store.health()["possible_contradiction_count"] == 1
    for relation in ("supersedes", "contradicts"):
        store.link(dont["id"], use["id"], relation=relation)
        report = store.health()
        assert report["possible_contradictions"] == [] and report["possible_contradiction_count"] == 0
        store.unlink(dont["id"], use["id"], relation=relation)
    store.link(use["id"], dont["id"], relation="supersedes")   # either direction
    assert store.health()["possible_contradiction_count"] == 0


def test_mcp_remember_warns_of_nul_characters_it_removed_as_it_warns_of_surrogates(store):
    # Fresh-user report: a NUL was dropped without a word while a lone surrogate got a `warnings` entry.
    result = call(store, "memory_remember", {"content": "NUL test \u0000 inside the text about kafka \ud83d",
                                             "title": "t\u0000\u0000"})["result"]
    assert result["isError"] is False
    warnings = result["structuredContent"]["warnings"]
    assert "content held 1 NUL character(s), removed" in warnings
    assert "title held 2 NUL character(s), removed" in warnings
    assert "content held 1 invalid character(s) (lone surrogates), replaced with U+FFFD" in warnings
    assert all(f"({w})" in result["content"][0]["text"] for w in warnings)
    assert "\x00" not in store.get(result["structuredContent"]["id"])["memories"][0]["body"]


def test_pending_vectors_are_counted_and_told_for_the_namespaces_read_only(db_path, config, caplog):
    # Fresh-user report: in project B, `recall` said "920 chunks still wait for a vector" and health "vectors pending:
    # 572 chunks", all of them project A's long notes.
    _small_chunks(config)
    with MemoryStore(db_path, config=config, embedder=_Missing(), namespace="proja") as store:
        chunks = store.remember(_long_text(40), create_namespace=True)["chunks"]
    with MemoryStore(db_path, config=config, embedder=_Counting(), namespace="projb") as store:
        store.remember("projB uses MongoDB 7 for the catalog service.", create_namespace=True)
        assert store.health()["vectors_pending"] == 0
        with caplog.at_level("WARNING", logger="supermemory"):
            assert store.catch_up_vectors(limit=FILL_SLICE) == 0
        assert "still wait for a vector" not in caplog.text
        assert store.health(namespace="proja")["vectors_pending"] == chunks - FILL_SLICE
        with caplog.at_level("WARNING", logger="supermemory"):
            left = store.catch_up_vectors(namespace="proja", limit=FILL_SLICE)
        assert left == chunks - 2 * FILL_SLICE
        assert f"{left} chunks still wait for a vector in namespaces proja, global" in caplog.text


def test_health_says_pending_vectors_are_work_in_progress_above_clean(store):
    report = {"schema_version": 6, "model_pin": "x", "model_pin_status": "ok", "near_duplicates": [],
              "near_duplicate_pairs": 0, "contradictions": [], "contradiction_count": 0, "orphans": {},
              "vectors_pending": 12, "stale": 0, "expired": 0, "clean": True}
    [pending] = [line for line in render_health(report).splitlines() if line.startswith("vectors pending")]
    assert "work in progress, not a problem" in pending


def test_a_data_folder_that_is_a_file_is_named_as_the_cause(tmp_path, config):
    # Fresh-user report: "cannot create the database at /tmp/f/memory.db: [Errno 17] File exists: '/tmp/f'; make that
    # folder writable …" for SUPERMEMORY_HOME=/tmp/f, a file.
    import pytest

    from supermemory.errors import StorageError

    home = tmp_path / "f"
    home.write_text("")
    for path in (home / "memory.db", home / "sub" / "memory.db"):
        with pytest.raises(StorageError, match=f"{home} is a file, not a folder; point SUPERMEMORY_HOME at a folder"):
            MemoryStore(path, config=config, embedder=None)


def test_session_start_on_a_damaged_database_tells_the_agent_memory_is_unavailable(tmp_path, monkeypatch, capsys):
    # Fresh-user report: a corrupt memory.db gave an empty SessionStart (exit 0); the reason went to stderr only,
    # which Claude Code shows in verbose mode alone, and the agent's tool calls then failed with no word why.
    import io
    import json

    from supermemory import hooks

    home = tmp_path / "home"
    home.mkdir()
    db = home / "memory.db"
    db.write_text("junk\n")
    monkeypatch.setenv("SUPERMEMORY_HOME", str(home))
    out = io.StringIO()
    payload = json.dumps({"source": "startup", "cwd": str(tmp_path)})
    assert hooks.run_hook("session-start", stdin=io.StringIO(payload), stdout=out, budget=30) == 0
    assert out.getvalue().count("\n") == 1
    answer = json.loads(out.getvalue())["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart"
    assert answer["additionalContext"].startswith("supermemory: long-term memory is unavailable this session (")
    assert "not an SQLite database" in answer["additionalContext"]
    assert "supermemory doctor" in answer["additionalContext"] and "\n" not in answer["additionalContext"]
    assert "left untouched" in capsys.readouterr().err and db.read_text() == "junk\n"


def test_blank_and_empty_content_are_refused_alike_under_every_protocol_version(store):
    # Fresh-user report (protocol 2025-06-18): content "" gave JSON-RPC -32602, content "   " a tool result with
    # isError "content must not be empty". Both now take the schema's path: -32602 before 2025-11-25, an
    # "invalid arguments" tool result from it on (SEP-1303).
    from tests.test_mcp_server import INIT

    for version in ("2025-06-18", "2025-11-25"):
        init = {**INIT, "params": {**INIT["params"], "protocolVersion": version}}
        answers = [call(store, "memory_remember", {"content": content}, init=init) for content in ("", "   \n\t")]
        for tool, args in (("memory_recall", {"query": "  "}), ("memory_remember", {"content": "x", "tags": [" "]})):
            answers.append(call(store, tool, args, init=init))
        for answer in answers:
            if version == "2025-06-18":
                assert answer["error"]["code"] == -32602 and answer["error"]["message"].endswith("must not be empty")
            else:
                assert answer["result"]["isError"] is True
                assert answer["result"]["content"][0]["text"].startswith("invalid arguments: arguments.")


def test_list_help_says_kind_is_one_kind_repeated_for_several():
    # Fresh-user report: `list --help` said "--kind … only these kinds" but the option takes one kind a time.
    from supermemory.cli import build_parser

    parser = build_parser()
    for command in ("list", "recall"):
        sub = parser._subparsers._group_actions[0].choices[command]
        help_of = {a.dest: a.help for a in sub._actions}
        assert help_of["kind"] == "only this kind; repeat for several (--kind decision --kind task)"
        extra = ["x"] if command == "recall" else []
        assert sub.parse_args(extra + ["--kind", "decision", "--kind", "task"]).kind == ["decision", "task"]


def test_two_workspace_roots_say_once_on_stderr_that_only_the_first_is_read(store, tmp_path, caplog):
    # Fresh-user report: with roots A and B the server silently used A's namespace; B's memories never came back.
    from tests.test_mcp_server import INIT, INITIALIZED, by_id, run

    roots = []
    for name in ("Alpha Proj", "Beta Proj"):
        (tmp_path / name / ".git").mkdir(parents=True)
        roots.append({"uri": "file://" + str(tmp_path / name).replace(" ", "%20"), "name": name})
    init = {**INIT, "params": {**INIT["params"], "capabilities": {"roots": {"listChanged": True}}}}
    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    with caplog.at_level("WARNING", logger="supermemory"):
        responses = run([init, INITIALIZED,
                         {"jsonrpc": "2.0", "id": "sm-roots-1", "result": {"roots": roots}}, changed,
                         {"jsonrpc": "2.0", "id": "sm-roots-2", "result": {"roots": roots}},
                         {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                          "params": {"name": "memory_remember", "arguments": {"content": "Roots decide"}}}], store)
    assert by_id(responses)[5]["result"]["structuredContent"]["namespace"] == "alpha-proj"
    told = [r.getMessage() for r in caplog.records if "workspace roots" in r.getMessage()]
    assert len(told) == 1, told
    assert "first one's namespace (alpha-proj)" in told[0] and str(tmp_path / "Beta Proj") in told[0]
