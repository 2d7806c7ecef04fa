"""Low-severity fixes from the second fresh-user report of session 17: text that is empty once cleaned refused as
"" is over MCP, the compact briefing led by the compacted session, the index ordered by what lasts, and open ends
of session digests in the broad "what's still open?" listing."""
from __future__ import annotations

from tests.test_mcp_server import INIT, call


def test_text_empty_once_cleaned_is_refused_as_the_empty_string_is(store):
    # Fresh-user report (2025-06-18): content "\u0000" and " \u0000 \n", query "\u0000" came back as tool results
    # with isError "content must not be empty", while "" and "   " got JSON-RPC -32602.
    for version in ("2025-06-18", "2025-11-25"):
        init = {**INIT, "params": {**INIT["params"], "protocolVersion": version}}
        answers = [call(store, "memory_remember", {"content": content}, init=init)
                   for content in ("", "\u0000", " \u0000 \n")]
        answers += [call(store, "memory_recall", {"query": query}, init=init) for query in ("", "\u0000", "\u0000 ")]
        answers.append(call(store, "memory_remember", {"content": "x", "tags": ["\u0000"]}, init=init))
        for answer in answers:
            if version == "2025-06-18":
                assert answer["error"]["code"] == -32602, answer
                assert answer["error"]["message"].endswith("must not be empty")
            else:
                assert answer["result"]["isError"] is True
                assert answer["result"]["content"][0]["text"].startswith("invalid arguments: arguments.")


def _capture(tmp_path, cwd, session: str, request: str, hour: int) -> None:
    """A Claude Code transcript of one request under `session`, captured as PreCompact does."""
    from supermemory import hooks
    from tests.test_hooks import append_lines, claude_line, claude_payload

    transcript = tmp_path / "transcripts" / f"{session}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    lines = [claude_line(1, "user", request, ts=f"2026-11-30T{hour:02d}:00:00.000Z"),
             claude_line(2, "assistant", [{"type": "text", "text": f"On it. TODO: {request}"}],
                         ts=f"2026-11-30T{hour:02d}:01:00.000Z")]
    for line in lines:
        line.update(sessionId=session, cwd=str(cwd))
        if line["type"] == "assistant":
            line["message"]["model"] = "claude-sonnet-4-5"
    append_lines(transcript, lines)
    assert hooks.capture(claude_payload(transcript, cwd, session=session))["status"] == "created"


def test_the_compacted_session_leads_last_sessions_though_a_parallel_one_was_captured_since(
        tmp_path, isolated_home, monkeypatch):
    # Fresh-user report: session S compacted (PreCompact captured it), then a parallel session S9 ended; the
    # SessionStart(compact) briefing of S listed S9's digest first, and render keeps room for the first only.
    from supermemory import hooks
    from tests.test_hooks import project

    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    cwd = project(tmp_path, "shop")
    _capture(tmp_path, cwd, "S", "Mock the Stripe client in test_refunds.py", 9)
    _capture(tmp_path, cwd, "S9", "Rename the billing module to invoicing", 10)

    def last_sessions(source: str, session: str = "S") -> list[str]:
        context = hooks.session_start({"cwd": str(cwd), "source": source, "session_id": session})[
            "hookSpecificOutput"]["additionalContext"]
        return context.split("## Last sessions\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()

    compact = last_sessions("compact")
    assert "test_refunds.py" in compact[0] and "billing module" in compact[1], compact
    assert "billing module" in last_sessions("startup")[0]            # at startup: newest first, as before
    assert "billing module" in last_sessions("compact", "S9")[0]
    _capture(tmp_path, cwd, "S10", "Bump the Django version to 5.1", 11)   # S is now third: not in the last two
    compact = last_sessions("compact")
    assert len(compact) == 2 and "test_refunds.py" in compact[0] and "Django" in compact[1], compact


def test_the_index_keeps_recalled_facts_and_notes_over_a_newer_burst_of_routine_ones(store):
    # Fresh-user report: `supermemory index` kept all 150 "Concurrency probe N" facts and left out the Sentry fact
    # recall had returned four times, and the local-dev note returned three times: facts and notes went newest first.
    sentry = store.remember("Sentry DSN is configured via SENTRY_DSN; errors from the worker are tagged.", kind="fact")
    dev = store.remember("Local dev: docker compose up -d db redis, then make run.", kind="note")
    quiet = store.remember("The staging environment is at staging.shop.internal.", kind="fact")
    for _ in range(3):
        assert sentry["id"] in [r["id"] for r in store.recall("Sentry DSN worker errors")["results"]]
    assert dev["id"] in [r["id"] for r in store.recall("docker compose local dev make run")["results"]]
    for i in range(12):
        store.remember(f"Concurrency probe {i}: widget-{i} noted.", kind="fact")
    full = [item["id"] for item in store.memory_index()["items"]]
    assert full[:2] == [sentry["id"], dev["id"]]          # recalled most, then less: before every newer one
    assert full.index(quiet["id"]) == len(full) - 1      # never recalled, oldest: still by recency among equals
    capped = [item["id"] for item in store.memory_index(max_lines=4)["items"]]
    assert capped[:2] == [sentry["id"], dev["id"]]


def test_what_is_still_open_lists_recent_session_open_ends_after_the_open_tasks(store):
    # Fresh-user report: "what's still open?" listed the 15 open tasks only; the digest whose open ends held the
    # user's "To do: mock the Stripe client in test_refunds.py" reached the agent through the briefing alone.
    import time

    from supermemory.transcripts import SessionDigest, render_digest

    def digest(request: str, open_ends: list[str], *, days_ago: float = 0) -> str:
        title, body = render_digest(SessionDigest(platform="claude-code", cwd="/work/shop", requests=[request],
                                                  open_ends=open_ends, turns=1))
        return store.remember(body, title=title, kind="session", at=time.time() - days_ago * 86400)["id"]

    old = digest("Profile the importer", ["Note: TODO: cache the importer lookups"], days_ago=40)
    task = store.remember("Finish the retry logic in the uploader.", kind="task")["id"]
    store.remember("Write the refund webhook tests.", kind="task", status="done")
    todo = digest("The checkout tests are flaky", ["Note: To do: mock the Stripe client in test_refunds.py"])
    digest("Rename the billing module", [])                         # no open ends: not open work
    store.remember("Orders live in PostgreSQL 15.", kind="decision")
    for query in ("what's still open?", "any TODOs left?"):
        found = store.recall(query)
        assert [r["id"] for r in found["results"]] == [task, todo], found
        assert "test_refunds.py" in found["results"][1]["summary"]
    assert [r["id"] for r in store.recall("what's still open?", limit=1)["results"]] == [task]   # tasks first
    assert old not in [r["id"] for r in store.recall("what's still open?", limit=10)["results"]]
    assert [r["kind"] for r in store.recall("open decisions")["results"]] == ["decision"]
