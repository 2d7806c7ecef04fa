"""supermemory backfill: the histories already on disk, captured once per session, in the right project, dated by their own time."""
from __future__ import annotations

import json
import os
import tracemalloc

import pytest

from conftest import FakeEmbedder
from helpers.histories import ClaudeSession, CodexRollout, claude_path, stamp
from supermemory.core import MemoryStore
from supermemory.timeparse import from_iso
from test_redact import AWS_ID, GH_CLASSIC


@pytest.fixture
def dirs(tmp_path):
    """A Claude Code projects folder, a Codex sessions folder and three project folders:
    a git repo (`shop`, the session ran in a subfolder), a plain folder (`notes`), and one that
    was deleted after its sessions (`gone-app`)."""
    shop = tmp_path / "work" / "shop"
    (shop / ".git").mkdir(parents=True)
    (shop / "web").mkdir()
    notes = tmp_path / "work" / "notes"
    notes.mkdir()
    return {"claude": tmp_path / "claude-projects", "codex": tmp_path / "codex-sessions", "shop": shop,
            "notes": notes, "gone": str(tmp_path / "work" / "gone-app")}


def run(store, dirs, **kw):
    return store.backfill(claude=str(dirs["claude"]), codex=str(dirs["codex"]), **kw)


def sessions(store):
    return store.list(namespace="*", kinds=["session"], limit=100)["items"]


def body(store, item):
    return store.get(item["id"], namespace="*")["memories"][0]["body"]


def test_each_session_files_under_its_projects_namespace_dated_by_its_own_time(store, dirs):
    ClaudeSession("c-shop", str(dirs["shop"] / "web"), "2026-09-01").user(
        "Make the checkout button disabled while the payment is pending").edit("web/checkout.tsx").write(
        claude_path(dirs["claude"], str(dirs["shop"] / "web"), "c-shop"))
    ClaudeSession("c-notes", str(dirs["notes"]), "2026-09-05").user(
        "Summarise the meeting notes into a todo list").write(claude_path(dirs["claude"], str(dirs["notes"]), "c-notes"))
    CodexRollout("0199aaaa-0000-7000-8000-000000000001", dirs["gone"], "2026-09-10").user(
        "Port the cron jobs of gone-app to systemd timers").shell(["bash", "-lc", "systemctl list-timers"], "ok").write(
        dirs["codex"])
    result = run(store, dirs)
    assert result["sessions"] == 3 and result["captured"] == 3 and result["skipped"] == 0
    by_ns = {item["namespace"]: item for item in sessions(store)}
    assert set(by_ns) == {"shop", "notes", "gone-app"}
    assert result["missing_folders"] == [{"namespace": "gone-app", "paths": [dirs["gone"]]}]
    shop = store.get(by_ns["shop"]["id"], namespace="*")["memories"][0]
    assert shop["created_at"].startswith("2026-09-01") and shop["updated_at"].startswith("2026-09-01")
    assert json.loads(json.dumps(shop["source"]))["platform"] == "claude-code"
    assert by_ns["gone-app"]["updated_at"].startswith("2026-09-10")


def test_a_resumed_session_its_subagents_side_chain_and_compaction_count_once(store, dirs):
    cwd = str(dirs["shop"])
    main = ClaudeSession("sess-1", cwd, "2026-10-01").user("Find why the nightly export job runs out of memory")
    main.bash("python -m export --profile", "MemoryError: cannot allocate 2 GiB", error=True)
    main.raw({"type": "user", "isSidechain": True, "sessionId": "sess-1", "uuid": "side-1", "cwd": cwd,
              "timestamp": stamp("2026-10-01", 30),
              "message": {"role": "user", "content": "Side chain prompt that is not the user speaking"}})
    main.compact("the user asked about the export job; we profiled it")
    main.user("Stream the rows in batches of 10k instead of loading them all")
    main.write(claude_path(dirs["claude"], cwd, "sess-1"))
    agent = ClaudeSession("sess-1", cwd, "2026-10-01", sidechain=True, agent_id="a1b2")
    agent.user("Search the code base for fetchall() calls").bash("rg -n fetchall src/", "src/export.py:88")
    agent.write(claude_path(dirs["claude"], cwd, "sess-1").with_suffix("") / "subagents" / "agent-a1b2.jsonl")
    resumed = ClaudeSession("sess-1", cwd, "2026-10-03").user("Resumed: now add a regression test for the batching")
    resumed.write(dirs["claude"] / "-work-shop" / "resumed-part.jsonl")
    rollout = CodexRollout("0199bbbb-0000-7000-8000-000000000002", cwd, "2026-10-04").user(
        "Rename the export CLI flag --all to --everything").compacted("summary of the earlier turns")
    rollout.write(dirs["codex"])
    CodexRollout("0199bbbb-0000-7000-8000-000000000002", cwd, "2026-10-05").user(
        "Resumed rollout: update the changelog for the flag rename").write(dirs["codex"], name="rollout-resumed.jsonl")
    CodexRollout("0199cccc-0000-7000-8000-000000000003", cwd, "2026-10-04", source={
        "subagent": {"thread_spawn": {"parent_thread_id": "0199bbbb-0000-7000-8000-000000000002", "depth": 1}}}).user(
        "Subagent task: list the call sites of the flag").shell(["rg", "--all", "src"], "src/cli.py:12").write(dirs["codex"])

    result = run(store, dirs)
    assert result["sessions"] == 2 and result["files"] == 6 and result["captured"] == 2
    items = sessions(store)
    assert len(items) == 2
    claude = next(i for i in items if i["source"]["platform"] == "claude-code")
    text = body(store, claude)
    assert "nightly export job" in text and "batches of 10k" in text and "regression test" in text
    assert "rg -n fetchall src/" in text                       # the subagent's work, with its parent
    assert "Side chain prompt" not in text and "Search the code base" not in text
    assert "being continued from a previous conversation" not in text and "we profiled it" not in text
    assert claude["updated_at"].startswith("2026-10-03")     # the resumed part's last line
    assert len(store.history(claude["id"], namespace="*")["versions"]) == 1
    codex = body(store, next(i for i in items if i["source"]["platform"] == "codex"))
    assert "--everything" in codex and "changelog" in codex and "rg --all src" in codex
    assert "summary of the earlier turns" not in codex


def test_malformed_unknown_and_truncated_lines_are_counted_and_skipped_never_fatal(store, dirs):
    cwd = str(dirs["notes"])
    s = ClaudeSession("odd", cwd, "2026-10-02").user("Convert the notes to markdown tables")
    s.raw({"type": "queue-operation", "operation": "enqueue", "sessionId": "odd"})
    s.raw({"type": "ai-title", "aiTitle": "Notes to tables", "sessionId": "odd"})
    path = s.write(claude_path(dirs["claude"], cwd, "odd"), tail='not json at all\n[1, 2]\n{"type": "user", "trunc')
    rollout = CodexRollout("0199dddd-0000-7000-8000-000000000004", cwd, "2026-10-02").user("Tidy the notes index")
    rollout.raw({"timestamp": stamp("2026-10-02", 9), "type": "brand_new_record", "payload": {"x": 1}})
    rollout.write(dirs["codex"], tail="{broken\n")
    os.symlink(str(dirs["claude"] / "nowhere.jsonl"), str(dirs["claude"] / "dangling.jsonl"))
    result = run(store, dirs)
    assert result["captured"] == 2 and result["skipped"] == 0
    assert result["lines"]["malformed"] == 3 and result["lines"]["unknown_type"] == 3
    assert result["lines"]["partial_tail"] == 1
    assert [u["path"] for u in result["unreadable"]] == [str(dirs["claude"] / "dangling.jsonl")]
    assert "unreadable" in result["unreadable"][0]["reason"]
    # the unfinished line is finished later: read then, once
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('", "sessionId": "odd"}\n')
    again = run(store, dirs)
    assert again["lines"].get("partial_tail", 0) == 0 and again["unchanged"] == 2


def test_half_an_emoji_in_a_transcript_is_captured_once_and_then_found_unchanged(store, dirs):
    # Found by a fresh-user run: a user message holding "\\ud83d" (JavaScript cuts strings by UTF-16 unit, and
    # JSON.stringify writes the lone half as an escape) stored the memory but failed to save the capture state
    # (UnicodeEncodeError), so every backfill reported the session as an error and read it again.
    cwd = str(dirs["shop"])
    ClaudeSession("half", cwd, "2026-10-03").user("Ship the release notes \ud83d today").write(
        claude_path(dirs["claude"], cwd, "half"))
    CodexRollout("0199cccc-0000-7000-8000-000000000003", cwd, "2026-10-03").user(
        "Rename the \udc00 column").write(dirs["codex"])
    first = run(store, dirs)
    assert (first["captured"], first["skipped"]) == (2, 0), first
    second = run(store, dirs)
    assert (second["captured"], second["updated"], second["unchanged"], second["skipped"]) == (0, 0, 2, 0), second
    bodies = " ".join(body(store, item) for item in sessions(store))
    assert "release notes \ufffd today" in bodies and "Rename the \ufffd column" in bodies


def test_a_tool_call_nested_deeper_than_the_recursion_limit_skips_that_call_not_the_session(store, dirs):
    # Found by a fresh-user run: a function_call whose `arguments` string held 100 000 nested brackets raised
    # RecursionError out of the Codex parser, so neither backfill nor the Stop hook ever captured the session.
    cwd = str(dirs["shop"])
    rollout = CodexRollout("0199dede-0000-7000-8000-000000000007", cwd, "2026-10-04").user(
        "Profile the image resizer")
    rollout.raw({"timestamp": stamp("2026-10-04", 5), "type": "response_item",
                 "payload": {"type": "function_call", "name": "shell", "call_id": "deep",
                             "arguments": "[" * 100_000 + "]" * 100_000}})
    rollout.raw({"timestamp": stamp("2026-10-04", 6), "type": "response_item",
                 "payload": {"type": "function_call_output", "call_id": "deep",
                             "output": '{"a":' * 100_000 + "1" + "}" * 100_000}})
    rollout.shell(["bash", "-lc", "py-spy top"], "resize 92%").write(dirs["codex"])
    result = run(store, dirs)
    assert (result["captured"], result["skipped"]) == (1, 0), result
    assert "py-spy top" in body(store, sessions(store)[0])


def test_a_secret_in_a_tool_result_never_reaches_the_database_file(db_path, config, dirs):
    cwd = str(dirs["shop"])
    s = ClaudeSession("secret", cwd, "2026-10-06").user("Why does the deploy script fail to push?")
    s.bash("./deploy.sh", f"fatal: https://{GH_CLASSIC}@github.com/acme/app rejected", error=True)
    s.write(claude_path(dirs["claude"], cwd, "secret"))
    CodexRollout("0199eeee-0000-7000-8000-000000000005", cwd, "2026-10-06").user("Check the AWS env").shell(
        ["env"], f"AWS_ACCESS_KEY_ID={AWS_ID}\nPATH=/usr/bin", 1).write(dirs["codex"])
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj") as store:
        assert run(store, dirs)["captured"] == 2
        assert "[REDACTED" in body(store, sessions(store)[0]) + body(store, sessions(store)[1])
    raw = b"".join(p.read_bytes() for p in db_path.parent.iterdir() if p.name.startswith(db_path.name))
    assert GH_CLASSIC.encode() not in raw and AWS_ID.encode() not in raw


def test_backfill_twice_adds_nothing_and_a_grown_transcript_gets_one_new_version(store, dirs):
    cwd = str(dirs["shop"])
    one = ClaudeSession("grow", cwd, "2026-10-07").user("Add rate limiting to the login endpoint")
    path = one.write(claude_path(dirs["claude"], cwd, "grow"))
    ClaudeSession("still", cwd, "2026-10-08").user("Bump the Node version in CI to 22").write(
        claude_path(dirs["claude"], cwd, "still"))
    CodexRollout("0199ffff-0000-7000-8000-000000000006", cwd, "2026-10-09").user("Write the release notes").write(
        dirs["codex"])
    assert run(store, dirs)["captured"] == 3
    before = store.stats(namespace="*")
    second = run(store, dirs)
    assert (second["captured"], second["updated"], second["unchanged"]) == (0, 0, 3)
    assert store.stats(namespace="*")["memories"] == before["memories"] == 3
    assert store.stats(namespace="*")["versions_superseded"] == 0
    one.lines.clear()
    one.user("Also return Retry-After on the 429 response")
    with open(path, "a", encoding="utf-8") as fh:
        for line in one.lines:
            fh.write(json.dumps(line) + "\n")
    third = run(store, dirs)
    assert (third["captured"], third["updated"], third["unchanged"]) == (0, 1, 2)
    stats = store.stats(namespace="*")
    assert stats["memories"] == 3 and stats["versions_superseded"] == 1
    grown = next(i for i in sessions(store) if "rate limiting" in i["title"])
    assert "Retry-After" in body(store, grown)


def test_a_session_captured_live_first_is_continued_not_duplicated(store, dirs):
    cwd = str(dirs["shop"])
    path = ClaudeSession("live", cwd, "2026-10-10").user("Document the caching headers").write(
        claude_path(dirs["claude"], cwd, "live"))
    live = store.capture_session(str(path), session_id="live", platform="claude-code", cwd=cwd)
    result = run(store, dirs)
    assert result["unchanged"] == 1 and len(sessions(store)) == 1
    assert sessions(store)[0]["id"] == live["id"]


def test_dry_run_shows_the_table_and_writes_nothing(store, dirs):
    ClaudeSession("dry", str(dirs["notes"]), "2026-10-11").user("Outline the blog post on SQLite WAL").write(
        claude_path(dirs["claude"], str(dirs["notes"]), "dry"))
    plan = store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]))
    assert plan["dry_run"] and plan["sessions"] == 1 and plan["captured"] == 1
    assert plan["projects"][0]["namespace"] == "notes"
    assert store.stats(namespace="*")["memories"] == 0
    run(store, dirs)
    assert store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]))["unchanged"] == 1


def test_the_dry_run_names_the_command_only_when_something_is_left_to_capture(store, dirs):
    from supermemory.render_intake import render_backfill

    ClaudeSession("hint", str(dirs["notes"]), "2026-10-11").user("Outline the talk on FTS5 ranking").write(
        claude_path(dirs["claude"], str(dirs["notes"]), "hint"))
    plan = store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]))
    assert "1 new, 0 grown would be captured. Run `supermemory backfill` to capture them." in render_backfill(plan)
    run(store, dirs)
    text = render_backfill(store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"])))
    assert text.endswith("0 new, 0 grown would be captured.") and "Run `supermemory backfill`" not in text


def _append(path, session: ClaudeSession) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        for line in session.lines:
            fh.write(json.dumps(line) + "\n")
    session.lines.clear()


def _summary(result: dict) -> dict:
    return {"totals": [result[k] for k in ("sessions", "captured", "updated", "unchanged", "skipped")],
            "projects": [{k: row[k] for k in ("namespace", "found", "captured", "updated", "unchanged", "skipped",
                                              "reasons")} for row in result["projects"]]}


def test_the_dry_run_predicts_the_real_runs_summary_for_every_kind_of_session(store, dirs, tmp_path):
    """New, grown, grown by lines the digest does not keep, unchanged, empty, an exact repeat of another
    session, and one a live hook captured from another path (the same transcript found again under the
    projects folder): the dry run's table is the real run's, and the second round's too."""
    cwd = str(dirs["shop"])
    grown = ClaudeSession("grown", cwd, "2026-10-01").user("Add rate limiting to the login endpoint")
    grown_path = grown.write(claude_path(dirs["claude"], cwd, "grown"))
    ClaudeSession("still", cwd, "2026-10-02").user("Bump the Node version in CI to 22").write(
        claude_path(dirs["claude"], cwd, "still"))
    quiet = ClaudeSession("quiet", cwd, "2026-10-03").user("Rename the billing module")
    quiet_path = quiet.write(claude_path(dirs["claude"], cwd, "quiet"))
    hooked = ClaudeSession("abc-123", cwd, "2026-10-04").user("Fix the flaky test in tests/test_api.py")
    elsewhere = hooked.write(tmp_path / "elsewhere" / "t.jsonl")
    store.capture_session(str(elsewhere), session_id="abc-123", platform="claude-code", cwd=cwd)   # the hook
    hooked.write(claude_path(dirs["claude"], cwd, "abc-123"))
    assert run(store, dirs)["captured"] == 3
    ClaudeSession("new", str(dirs["notes"]), "2026-10-05").user("Outline the blog post on SQLite WAL").write(
        claude_path(dirs["claude"], str(dirs["notes"]), "new"))
    ClaudeSession("empty", cwd, "2026-10-06").say("Nothing was asked here.").write(
        claude_path(dirs["claude"], cwd, "empty"))
    _append(grown_path, grown.user("Also return Retry-After on the 429 response"))
    _append(quiet_path, quiet.raw({"type": "ai-title", "sessionId": "quiet", "aiTitle": "Billing rename"}))
    for twin in ("twin-a", "twin-b"):   # the same requests at the same times: one digest
        ClaudeSession(twin, str(dirs["notes"]), "2026-10-07").user("Draft the changelog").write(
            claude_path(dirs["claude"], str(dirs["notes"]), twin))
    rounds = []
    for _round in range(2):
        before = store.stats(namespace="*")
        planned = store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]))
        assert store.stats(namespace="*") == before
        assert _summary(planned) == _summary(run(store, dirs))
        rounds.append(_summary(planned))
    assert rounds[0]["totals"] == [8, 2, 1, 3, 2]
    assert rounds[1]["totals"] == [8, 0, 0, 8, 0]   # the second round: every session up to date


def test_project_since_and_limit_select_sessions(store, dirs):
    for n, (folder, day) in enumerate([("shop", "2026-06-01"), ("shop", "2026-11-20"), ("notes", "2026-11-21")]):
        cwd = str(dirs[folder])
        path = ClaudeSession(f"pick-{n}", cwd, day).user(f"Task number {n} for the {folder} project").write(
            claude_path(dirs["claude"], cwd, f"pick-{n}"))
        os.utime(path, (from_iso(day + "T12:00:00Z"),) * 2)
    plan = store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]), project=str(dirs["shop"]))
    assert plan["sessions"] == 2 and [p["namespace"] for p in plan["projects"]] == ["shop"]
    recent = store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]), since="2026-11-01")
    assert recent["sessions"] == 2
    newest = run(store, dirs, limit=1)
    assert newest["sessions"] == 1 and sessions(store)[0]["namespace"] == "notes"


def test_since_and_limit_compare_each_sessions_last_timestamp_not_its_files_mtime(store, dirs):
    """`--since 30d` took a session 45 days old whose transcript had been copied (a fresh mtime): --since and --limit
    compared file modification times. They now compare the session's last timestamp (found at the file's end, read
    further back past a long last line), and a file's mtime only for a transcript without any timestamp."""
    import time
    from datetime import datetime, timezone

    now = time.time()

    def ago(days: float) -> str:
        return datetime.fromtimestamp(now - days * 86400, tz=timezone.utc).strftime("%Y-%m-%d")

    cwd = str(dirs["shop"])
    ClaudeSession("copied-old", cwd, ago(45)).user("Old session copied from another machine").raw(
        {"type": "attachment", "content": "x" * 300_000}).write(claude_path(dirs["claude"], cwd, "copied-old"))
    CodexRollout("0199bbbb-0000-7000-8000-000000000045", cwd, ago(45)).user("Old rollout copied too").write(dirs["codex"])
    restored = ClaudeSession("restored", cwd, ago(35))   # begun 35 days ago, its first lines all that old
    for n in range(45):
        restored.user(f"Early request number {n}")
    restored.lines += ClaudeSession("restored", cwd, ago(3)).user("Resumed three days ago").lines
    restored = restored.raw({"type": "attachment", "content": "y" * 300_000}).write(
        claude_path(dirs["claude"], cwd, "restored"))
    os.utime(restored, (now - 60 * 86400,) * 2)
    for sid, days in (("bare-new", 10), ("bare-old", 40)):   # no timestamp in the file: its mtime is all there is
        path = ClaudeSession(sid, cwd, ago(days)).user(f"Session {sid} without timestamps")
        path.lines = [{k: v for k, v in line.items() if k != "timestamp"} for line in path.lines]
        os.utime(path.write(claude_path(dirs["claude"], cwd, sid)), (now - days * 86400,) * 2)
    plan = store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]), since="30d")
    chosen = {s["session"]: s for s in plan["sessions_list"]}
    assert set(chosen) == {"restored", "bare-new"}, chosen
    assert chosen["restored"]["active"].startswith(ago(3)) and chosen["restored"]["active_from"] == "transcript"
    assert chosen["bare-new"]["active_from"] == "file time"
    newest = store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]), limit=2)
    assert [s["session"] for s in newest["sessions_list"]] == ["restored", "bare-new"]


def test_a_project_no_transcript_matched_is_said_not_shown_as_an_empty_table(store, dirs, tmp_path):
    """`backfill --project /path/that/does/not/exist` printed an empty table and "0 sessions", nothing else. A folder
    that does not exist with no session is now refused; an existing one with none says no transcript matched it;
    a deleted folder whose sessions are still on disk is a note, and those sessions are taken."""
    from supermemory.errors import InvalidInputError
    from supermemory.render_intake import render_backfill

    cwd = str(dirs["shop"])
    ClaudeSession("shop-1", cwd, "2026-09-01").user("Add a retry to the payment client").write(
        claude_path(dirs["claude"], cwd, "shop-1"))
    CodexRollout("0199cccc-0000-7000-8000-000000000001", dirs["gone"], "2026-09-02").user(
        "Move the gone-app cron jobs to systemd").write(dirs["codex"])
    typo = tmp_path / "path" / "that" / "does" / "not" / "exist"
    for call in (store.backfill_plan, store.backfill):
        with pytest.raises(InvalidInputError, match=f"no such project folder: {typo}, and no transcript"):
            call(claude=str(dirs["claude"]), codex=str(dirs["codex"]), project=str(typo))
    text = render_backfill(store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]),
                                               project=str(dirs["notes"])))
    assert text.splitlines()[0] == (f"no transcript matched the project {dirs['notes']} (namespace 'notes'): "
                                    "no Claude Code or Codex session on disk ran in it")
    assert not text.startswith("project")   # no empty table
    gone = run(store, dirs, project=dirs["gone"])
    assert gone["captured"] == 1 and f"note: the folder {dirs['gone']} does not exist; its 1 sessions" \
        in render_backfill(gone)
    late = render_backfill(store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]), since="2027-01-01"))
    assert "no session active since 20" in late and not late.startswith("project")


def test_briefing_and_since_see_backfilled_sessions_by_their_own_time(store, dirs):
    cwd = str(dirs["shop"])
    ClaudeSession("old-a", cwd, "2026-03-01").user("Old session about the search indexer").write(
        claude_path(dirs["claude"], cwd, "old-a"))
    ClaudeSession("old-b", cwd, "2026-04-01").user("Less old session about the image resizer").write(
        claude_path(dirs["claude"], cwd, "old-b"))
    run(store, dirs)
    live_dir = dirs["claude"] / "live"
    path = ClaudeSession("live-new", cwd, "2026-12-01").user("Live session about the payment webhook").write(
        live_dir / "live-new.jsonl")
    store.capture_session(str(path), session_id="live-new", platform="claude-code", cwd=cwd, namespace="shop")
    brief = store.briefing(namespace="shop")
    titles = [s["title"] for s in brief["sections"]["sessions"]]
    assert "payment webhook" in titles[0] and "image resizer" in titles[1]
    recent = store.list(namespace="shop", kinds=["session"], since="30d")["items"]
    assert [i["title"] for i in recent] == [titles[0]]


def test_a_large_transcript_is_read_in_bounded_chunks(store, dirs):
    """A 20 MB transcript (big tool outputs) is captured with Python allocations far below its size."""
    cwd = str(dirs["shop"])
    s = ClaudeSession("big", cwd, "2026-10-12").user("Profile the whole test suite and list the slowest tests")
    filler = "".join(f"tests/test_mod{i}.py::test_case_{i} PASSED [{i % 100}%]\n" for i in range(2500))
    for n in range(180):
        s.bash(f"pytest -q tests/part{n}", filler, error=False)
    path = s.write(claude_path(dirs["claude"], cwd, "big"))
    assert path.stat().st_size > 20_000_000
    tracemalloc.start()
    try:
        result = run(store, dirs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result["captured"] == 1
    assert peak < 200_000_000, peak      # ~4 MB chunks: tens of MB expected, 10x headroom
    assert "pytest -q tests/part179" in body(store, sessions(store)[0])


def test_the_cli_prints_the_summary_table_and_json(dirs, tmp_path, monkeypatch, capsys):
    from supermemory.cli import main

    ClaudeSession("cli", str(dirs["notes"]), "2026-10-13").user("Rewrite the README intro").write(
        claude_path(dirs["claude"], str(dirs["notes"]), "cli"))
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    args = ["backfill", "--claude", str(dirs["claude"]), "--codex", str(dirs["codex"])]
    assert main(args + ["--dry-run"]) == 0
    out = capsys.readouterr()
    assert "notes" in out.out and "dry run" in out.out
    assert main(args) == 0
    out = capsys.readouterr()
    assert "1 captured" in out.out and "backfill: 1/1 sessions" in out.err
    assert main(args + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unchanged"] == 1


def test_a_folder_named_on_the_command_line_that_does_not_exist_is_said_and_an_error_when_none_does(
        dirs, tmp_path, capsys):
    from supermemory.cli import main

    for flag, label in (("--claude", "Claude Code"), ("--codex", "Codex")):
        for extra in ([], ["--dry-run"]):
            assert main(["backfill", flag, str(tmp_path / "nope"), *extra]) == 1
            assert capsys.readouterr().err == f"error: the {label} folder {tmp_path / 'nope'} does not exist\n"
    dirs["claude"].mkdir()   # one of two folders named is missing (an agent not used): said, not fatal
    assert main(["backfill", "--claude", str(dirs["claude"]), "--codex", str(tmp_path / "nope")]) == 0
    assert f"skipped {tmp_path / 'nope'}: the Codex folder does not exist" in capsys.readouterr().out


def test_remember_and_update_take_an_explicit_time_never_before_the_old_version(store):
    at = from_iso("2026-01-02T03:04:05Z")
    first = store.remember("The staging DB moved to host db2", at=at, created_at=at - 60)
    rec = store.get(first["id"])["memories"][0]
    assert rec["created_at"] == "2026-01-02T03:03:05Z" and rec["updated_at"] == "2026-01-02T03:04:05Z"
    later = store.update(first["id"], content="The staging DB moved to host db3", at=at + 3600)
    assert store.get(later["id"])["memories"][0]["valid_from"] == "2026-01-02T04:04:05Z"
    earlier = store.update(later["id"], content="The staging DB moved to host db4", at=at - 86400)
    assert store.get(earlier["id"])["memories"][0]["valid_from"] == "2026-01-02T04:04:05Z"


@pytest.mark.model
def test_recall_after_backfill_finds_what_an_old_session_said_in_its_own_project(db_path, config, dirs, onnx_embedder):
    cwd = str(dirs["shop"])
    ClaudeSession("fact", cwd, "2026-08-14").user(
        "The invoice PDFs render blank because wkhtmltopdf needs the --enable-local-file-access flag; "
        "add it to the renderer").edit("billing/pdf.py").write(claude_path(dirs["claude"], cwd, "fact"))
    ClaudeSession("other", str(dirs["notes"]), "2026-08-15").user(
        "Group the reading list by topic and add the publication years").write(
        claude_path(dirs["claude"], str(dirs["notes"]), "other"))
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="shop") as store:
        assert run(store, dirs)["captured"] == 2
        found = store.recall("why are the invoice PDFs blank", namespace="shop")["results"]
        assert found and "wkhtmltopdf" in store.get(found[0]["id"], namespace="shop")["memories"][0]["body"]
        elsewhere = store.recall("why are the invoice PDFs blank", namespace="notes")["results"]
        assert not any("invoice" in r["title"].lower() for r in elsewhere)


def _bench():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "backfill_bench.py"
    spec = importlib.util.spec_from_file_location("backfill_bench_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_generated_history_with_every_redaction_rules_sample_leaves_no_secret_in_the_db(tmp_path, db_path, config):
    """The bench's generator, bounded: 12 sessions over 4 projects, three rule samples planted in each."""
    bench = _bench()
    made = bench.generate(tmp_path / "history", sessions=12, mb=1.5, projects=4)
    assert len(made["planted"]) == 36
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj") as store:
        result = store.backfill(claude=str(tmp_path / "history" / "claude"), codex=str(tmp_path / "history" / "codex"))
        assert result["sessions"] == 12 and result["captured"] == 12
        assert len(result["projects"]) == 4 and len(result["missing_folders"]) == 1
    raw = b"".join(p.read_bytes() for p in db_path.parent.iterdir() if p.name.startswith(db_path.name))
    assert [s for s in made["planted"] if s.encode() in raw] == []


@pytest.mark.slow
def test_the_full_backfill_bench_passes_its_targets(request, capsys):
    """400 sessions / 150 MB with the real model (minutes): run with SUPERMEMORY_SLOW_TESTS=1."""
    from helpers.common import run_slow

    if not run_slow(request.config):
        pytest.skip("heavy variant: run with -m slow or SUPERMEMORY_SLOW_TESTS=1")
    assert _bench().main(["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["secrets_in_db"] == 0 and report["skipped"] == 0
    assert report["peak_rss_mb"] < 400


def test_a_backfill_claims_a_projects_name_only_when_it_writes_a_session_there(tmp_path, dirs):
    # Found by a fresh-user run: a backfill that captured nothing (`--since` left no session), or was refused
    # (`--project` of a folder that does not exist), still claimed 'shop' for the folder its transcripts named, so
    # the real project of that name writing first got a hashed name in a store without a memory.
    from supermemory.config import Config

    home = tmp_path / "home"
    home.mkdir()
    ClaudeSession("c-shop", str(dirs["shop"] / "web"), "2026-09-01").user("Fix the checkout button").write(
        claude_path(dirs["claude"], str(dirs["shop"] / "web"), "c-shop"))
    with MemoryStore(home / "memory.db", config=Config(home=home), embedder=FakeEmbedder(), namespace="proj") as s:
        assert run(s, dirs, since="2026-11-01")["captured"] == 0
        with pytest.raises(Exception, match="no such project folder"):
            run(s, dirs, project=str(tmp_path / "no" / "such" / "dir"))
        assert not (home / "namespaces").exists() or list((home / "namespaces").iterdir()) == []
        assert run(s, dirs)["captured"] == 1
    assert (home / "namespaces" / "shop").read_text().strip() == str(dirs["shop"].resolve())


def test_the_dry_run_reports_the_lines_the_real_run_skips(store, dirs):
    """fu38 D3: only the real run said "skipped: 1 malformed lines, 1 sessions read only up to a <private> tag …"."""
    from supermemory.render_intake import render_backfill

    cwd = str(dirs["shop"])
    path = ClaudeSession("odd", cwd, "2026-10-01").user("Add rate limiting to the login endpoint").write(
        claude_path(dirs["claude"], cwd, "odd"))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"type":"user","broken json\n')
    _append(path, ClaudeSession("odd", cwd, "2026-10-01").user("<private>the staging token is in the vault"))
    planned = store.backfill_plan(claude=str(dirs["claude"]), codex=str(dirs["codex"]))
    real = run(store, dirs)
    skipped = [line for line in render_backfill(real).splitlines() if line.startswith("skipped: ")]
    assert skipped and "malformed" in skipped[0] and "<private>" in skipped[0]
    assert [line for line in render_backfill(planned).splitlines() if line.startswith("skipped: ")] == skipped
