"""Tests for supermemory.transcripts: extractive session digests from agent logs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from supermemory import transcripts as tr
from supermemory.transcripts import (
    SessionDigest,
    detect_platform,
    digest_from_dict,
    digest_to_dict,
    find_codex_rollout,
    parse,
    parse_claude,
    parse_codex,
    read_new_lines,
    render_digest,
)

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude_session.jsonl"
CODEX = FIXTURES / "codex_rollout.jsonl"

REQ1 = "Fix the flaky login test in tests/test_login.py, it fails about 1 in 5 runs on CI."
REQ2 = "Also add a regression test, and make the session timeout configurable via SESSION_TTL."
CODEX_REQ = (
    "The /health endpoint returns 500 when the DB is down; make it return 503 with a JSON body and add a test."
)


def _read_all(path) -> tuple[list[dict], int]:
    lines, offset = read_new_lines(str(path))
    return lines, offset


def _public(d: SessionDigest) -> dict:
    data = digest_to_dict(d)
    data.pop("state")
    return data


@pytest.fixture
def claude_digest() -> SessionDigest:
    return parse_claude(_read_all(CLAUDE)[0])


@pytest.fixture
def codex_digest() -> SessionDigest:
    return parse_codex(_read_all(CODEX)[0])


# ----------------------------------------------------------------------------- fixtures sanity


def test_fixture_files_have_the_intended_shape():
    raw = CLAUDE.read_bytes()
    assert not raw.endswith(b"\n"), "the Claude fixture ends with a partial line on purpose"
    bad = 0
    for line in raw.split(b"\n")[:-1]:
        try:
            json.loads(line)
        except ValueError:
            bad += 1
    assert bad == 1  # exactly one malformed complete line
    assert CODEX.read_bytes().endswith(b"\n")


# ----------------------------------------------------------------------------- Claude Code


def test_claude_metadata(claude_digest):
    d = claude_digest
    assert d.platform == "claude-code"
    assert d.session_id == "7f3c2a9e-1b4d-4c8e-9f10-2a3b4c5d6e7f"
    assert d.cwd == "/home/dev/shop"
    assert d.git_branch == "fix/flaky-login"
    assert d.model == "claude-sonnet-4-5-20250929"
    assert d.started_at == "2026-11-30T10:00:00.000Z"
    assert d.ended_at == "2026-11-30T10:21:30.000Z"  # the partial last line is not counted


def test_claude_requests_skip_meta_continuation_and_duplicates(claude_digest):
    d = claude_digest
    # Caveat (isMeta), <command-name>, the compaction continuation and the re-sent
    # copy of REQ2 under a new uuid (with different spacing) are all left out.
    assert d.requests == [REQ1, REQ2]
    assert d.turns == 2
    assert not any("continued from a previous conversation" in r for r in d.requests)


def test_claude_files_edited_and_read(claude_digest):
    assert claude_digest.files == ["app/auth.py", "tests/test_session_ttl.py"]
    assert claude_digest.files_read == ["tests/test_login.py", "app/auth.py"]


def test_claude_commands(claude_digest):
    assert claude_digest.commands == [
        "cd /home/dev/shop && python -m pytest tests/test_login.py -q",
        "git status --short",
        "python -m pytest -q",
    ]


def test_claude_errors(claude_digest):
    errors = claude_digest.errors
    assert len(errors) == 3
    assert errors[0] == (
        "python -m pytest tests/test_login.py -q (exit 1): "
        "FAILED tests/test_login.py::test_login_redirect - AssertionError: assert 302 == 200"
    )
    assert errors[1] == "Edit: File has not been read yet. Read it first before writing to it."
    assert "KeyError: 'SESSION_TTL'" in errors[2] and errors[2].startswith("python -m pytest -q (exit 1)")
    assert all(len(e) <= tr.ERROR_CHARS for e in errors)


def test_claude_open_ends(claude_digest):
    ends = claude_digest.open_ends
    assert "Awaiting reply: Should I also document SESSION_TTL in the README?" in ends
    # The later Edit succeeded, so the Edit error is resolved; the last pytest run is not.
    unresolved = [e for e in ends if e.startswith("Unresolved error:")]
    assert len(unresolved) == 1 and "test_ttl_env" in unresolved[0]
    assert "Unfinished todo: Make SESSION_TTL configurable (in progress)" in ends
    assert "Unfinished todo: Document SESSION_TTL in README" in ends
    assert "TODO: read SESSION_TTL lazily in app/config.py." in ends
    # TODOs in thinking blocks, fenced code and written file contents are not notes.
    assert not any("snippet is code" in e or "in my head" in e or "not an open end" in e for e in ends)


def test_claude_compact_summary_flag_and_sidechain_are_not_requests():
    base = {"type": "user", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z"}
    lines = [
        {**base, "uuid": "1", "isCompactSummary": True, "message": {"role": "user", "content": "Summary: earlier work"}},
        {**base, "uuid": "2", "isSidechain": True, "message": {"role": "user", "content": "Search the repo for X"}},
        {**base, "uuid": "3", "message": {"role": "user", "content": "<system-reminder>be nice</system-reminder>"}},
        {**base, "uuid": "4", "message": {"role": "user", "content": "<local-command-stdout>ok</local-command-stdout>"}},
        {**base, "uuid": "5", "message": {"role": "user", "content": [{"type": "text", "text": "real request"}]}},
        {**base, "uuid": "5", "message": {"role": "user", "content": "same uuid, replayed"}},
    ]
    d = parse_claude(lines)
    assert d.requests == ["real request"]
    assert d.turns == 1


def test_claude_interrupted_and_unanswered_requests():
    def user(uuid, content):
        return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": content}}

    d = parse_claude([user("1", "refactor the parser")])
    assert d.open_ends == ["Unanswered request: refactor the parser"]

    d = parse_claude(
        [
            {"type": "assistant", "uuid": "2", "message": {"role": "assistant", "content": [{"type": "text", "text": "On it."}]}},
            user("3", [{"type": "text", "text": "[Request interrupted by user]"}]),
        ],
        d,
    )
    assert d.requests == ["refactor the parser"]
    assert d.open_ends == ["Interrupted while working on: refactor the parser"]


def test_claude_error_resolved_by_later_success_of_same_program():
    def use(uuid, tid, cmd):
        return {
            "type": "assistant",
            "uuid": uuid,
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}]},
        }

    def result(uuid, tid, text, is_error=False):
        block = {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": is_error}
        return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": [block]}}

    lines = [
        use("1", "t1", "pytest -q"),
        # Non-zero exit reported only in the text, without is_error.
        result("2", "t1", "Exit code 2\nTraceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'app'"),
        use("3", "t2", "ls"),
        result("4", "t2", "app\ntests"),
    ]
    d = parse_claude(lines)
    assert d.errors == ["pytest -q (exit 2): ModuleNotFoundError: No module named 'app'"]
    assert any(e.startswith("Unresolved error: pytest -q") for e in d.open_ends)  # ls does not fix pytest

    d = parse_claude([use("5", "t3", "uv run python -m pytest -q tests/test_app.py"), result("6", "t3", "3 passed")], d)
    assert not any(e.startswith("Unresolved error") for e in d.open_ends)
    assert d.errors == ["pytest -q (exit 2): ModuleNotFoundError: No module named 'app'"]  # history kept


def test_claude_rejected_tool_use_is_not_an_error():
    lines = [
        {"type": "user", "uuid": "0", "message": {"role": "user", "content": "edit it"}},
        {"type": "assistant", "uuid": "1", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "Edit", "input": {"file_path": "/p/a.py"}}]}},
        {"type": "user", "uuid": "2", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "is_error": True,
             "content": "The user doesn't want to proceed with this tool use. The tool use was rejected."}]}},
    ]
    d = parse_claude(lines)
    assert d.errors == []
    assert d.files == ["/p/a.py"]  # the attempt is still recorded (no cwd known: path kept absolute)
    assert d.open_ends == ["Interrupted while working on: edit it"]


# ----------------------------------------------------------------------------- Codex


def test_codex_metadata(codex_digest):
    d = codex_digest
    assert d.platform == "codex"
    assert d.session_id == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert d.cwd == "/home/dev/api"
    assert d.model == "gpt-5-codex"
    assert d.git_branch == "main"
    assert d.started_at == "2026-12-01T09:00:00.120Z"
    assert d.ended_at == "2026-12-01T09:00:40.100Z"


def test_codex_requests_dedupe_and_skip_environment(codex_digest):
    # response_item + event_msg copies count once; AGENTS.md and environment_context are skipped.
    assert codex_digest.requests == [CODEX_REQ]
    assert codex_digest.turns == 1


def test_codex_files_commands_errors(codex_digest):
    d = codex_digest
    assert d.files == ["src/api/health.py", "tests/test_health.py"]
    assert d.files_read == ["src/api/health.py"]  # from `sed -n '1,80p' …`
    assert d.commands == ['rg -n "health" src', "sed -n '1,80p' src/api/health.py", "pytest -q", "git diff --stat"]
    assert d.errors == [
        "pytest -q (exit 1): FAILED tests/test_health.py::test_health_db_down - assert 500 == 503",
        "error: stream disconnected before completion: error sending request for url "
        "(https://api.openai.com/v1/responses)",
    ]


def test_codex_open_ends(codex_digest):
    ends = codex_digest.open_ends
    assert ends == [
        "Unresolved error: pytest -q (exit 1): FAILED tests/test_health.py::test_health_db_down - assert 500 == 503",
        "Next step: reset the client between tests in tests/conftest.py.",
    ]  # the stream error is behind the agent once it answered again


def _ri(payload, ts="2026-12-01T10:00:00Z"):
    return {"timestamp": ts, "type": "response_item", "payload": payload}


def _ev(payload, ts="2026-12-01T10:00:00Z"):
    return {"timestamp": ts, "type": "event_msg", "payload": payload}


def test_codex_exec_command_end_and_output_count_once():
    lines = [
        _ri({"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "npm test"}), "call_id": "c1"}),
        _ev({"type": "exec_command_end", "call_id": "c1", "command": ["/bin/bash", "-lc", "npm test"], "exit_code": 1,
             "stdout": "", "stderr": "npm ERR! Test failed.  See above for more details.", "aggregated_output": "x"}),
        _ri({"type": "function_call_output", "call_id": "c1",
             "output": "Process exited with code 1\nOutput:\nsomething else entirely failed"}),
    ]
    d = parse_codex(lines)
    assert d.commands == ["npm test"]
    assert d.errors == ["npm test (exit 1): npm ERR! Test failed. See above for more details."]


def test_codex_apply_patch_forms_and_plan():
    patch = "*** Begin Patch\n*** Update File: /home/dev/api/a.py\n*** Move to: b.py\n*** Delete File: c.py\n*** End Patch"
    lines = [
        {"type": "session_meta", "payload": {"id": "s1", "cwd": "/home/dev/api"}},
        _ri({"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["apply_patch", patch]}), "call_id": "p1"}),
        _ri({"type": "function_call", "name": "shell",
             "arguments": json.dumps({"command": ["bash", "-lc", "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: d.py\n+x\n*** End Patch\nEOF"]}),
             "call_id": "p2"}),
        _ri({"type": "function_call", "name": "apply_patch", "arguments": json.dumps({"input": "*** Begin Patch\n*** Add File: e.py\n*** End Patch"}), "call_id": "p3"}),
        _ri({"type": "custom_tool_call_output", "call_id": "p3",
             "output": json.dumps({"output": "apply_patch verification failed: Failed to find expected lines in e.py", "metadata": {"exit_code": 1}})}),
        _ri({"type": "local_shell_call", "call_id": "p4", "status": "completed", "action": {"type": "exec", "command": ["make", "lint"]}}),
        _ri({"type": "function_call", "name": "update_plan", "call_id": "p5", "arguments": json.dumps(
            {"plan": [{"step": "Patch files", "status": "completed"}, {"step": "Run lint", "status": "pending"}]})}),
    ]
    d = parse_codex(lines)
    assert d.files == ["a.py", "b.py", "c.py", "d.py", "e.py"]
    assert d.commands == ["make lint"]  # patches are not listed as commands
    assert d.errors == ["apply_patch (exit 1): apply_patch verification failed: Failed to find expected lines in e.py"]
    assert "Unfinished todo: Run lint" in d.open_ends


def test_codex_turn_aborted_and_legacy_format():
    lines = [
        {"id": "legacy-1", "timestamp": "2025-05-01T00:00:00Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add a --verbose flag"}]},
        {"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["bash", "-lc", "cargo build"]}), "call_id": "x"},
        _ev({"type": "turn_aborted", "reason": "interrupted"}),
    ]
    assert detect_platform(lines) == "codex"
    d = parse(lines)
    assert d.platform == "codex" and d.session_id == "legacy-1"
    assert d.requests == ["add a --verbose flag"]
    assert d.commands == ["cargo build"]
    assert d.open_ends == ["Interrupted while working on: add a --verbose flag"]


# ----------------------------------------------------------------------------- incremental reading


@pytest.mark.parametrize("fixture", [CLAUDE, CODEX], ids=["claude", "codex"])
def test_incremental_by_offset_matches_one_pass(fixture, tmp_path):
    path = tmp_path / fixture.name
    path.write_bytes(fixture.read_bytes())
    full_lines, full_offset = read_new_lines(str(path))
    full = parse(full_lines)

    half = path.stat().st_size // 2
    first, off1 = read_new_lines(str(path), 0, max_bytes=half)
    assert 0 < off1 <= half and path.read_bytes()[off1 - 1 : off1] == b"\n"
    d = parse(first)
    # Persist and restore between hook runs, as the hooks do.
    d = digest_from_dict(json.loads(json.dumps(digest_to_dict(d))))
    rest, off2 = read_new_lines(str(path), off1)
    d = parse(rest, d)

    assert off2 == full_offset
    assert len(first) + len(rest) == len(full_lines)
    assert digest_to_dict(d) == digest_to_dict(full)


@pytest.mark.parametrize("fixture", [CLAUDE, CODEX], ids=["claude", "codex"])
def test_incremental_while_file_grows_in_odd_chunks(fixture, tmp_path):
    data = fixture.read_bytes()
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"")
    d, offset = None, 0
    step = 977  # cuts lines (and multi-byte characters) at arbitrary points
    for end in range(step, len(data) + step, step):
        with open(path, "ab") as fh:
            fh.write(data[end - step : end])
        lines, new_offset = read_new_lines(str(path), offset)
        assert new_offset >= offset
        offset = new_offset
        d = parse(lines, d)
        d = digest_from_dict(digest_to_dict(d))
    assert digest_to_dict(d) == digest_to_dict(parse(read_new_lines(str(fixture))[0]))


def test_partial_trailing_line_is_consumed_only_once_complete(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(CLAUDE.read_bytes())
    lines, offset = read_new_lines(str(path))
    assert offset == CLAUDE.read_bytes().rfind(b"\n") + 1
    d = parse(lines)
    assert read_new_lines(str(path), offset) == ([], offset)  # nothing new, partial untouched

    with open(path, "ab") as fh:
        fh.write(b'OG for release 2.1."},"uuid":"a0000000-0000-4000-8000-000000000025",'
                 b'"timestamp":"2026-11-30T10:22:00.000Z"}\n')
    more, offset2 = read_new_lines(str(path), offset)
    assert offset2 == path.stat().st_size
    assert len(more) == 1
    d = parse(more, d)
    assert d.requests[-1] == "Yes, and then update the CHANGELOG for release 2.1."
    assert d.turns == 3
    assert d.ended_at == "2026-11-30T10:22:00.000Z"
    assert d.open_ends[0] == "Unanswered request: Yes, and then update the CHANGELOG for release 2.1."


def test_truncated_file_restarts_from_zero(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(CODEX.read_bytes())
    _, offset = read_new_lines(str(path))
    path.write_text('{"type":"session_meta","payload":{"id":"new"}}\n', encoding="utf-8")
    lines, new_offset = read_new_lines(str(path), offset)
    assert [ln["payload"]["id"] for ln in lines] == ["new"]
    assert new_offset == path.stat().st_size


def test_missing_file_and_bad_offsets(tmp_path):
    missing = str(tmp_path / "nope.jsonl")
    assert read_new_lines(missing) == ([], 0)
    assert read_new_lines(missing, 123) == ([], 123)
    assert read_new_lines(str(tmp_path), 5) == ([], 5)  # a directory
    path = tmp_path / "s.jsonl"
    path.write_text('{"a": 1}\n', encoding="utf-8")
    assert read_new_lines(str(path), -4) == ([{"a": 1}], 9)


def test_garbage_lines_are_skipped_but_consumed(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_bytes(
        b"\n"
        b"   \n"
        b"not json\n"
        b"[1, 2]\n"
        b"42\n"
        b'"a string"\n'
        b"null\n"
        b"\xff\xfe\xfa broken utf-8\n"
        b'{"type": "user", "message": {"role": "user", "content": "caf\xc3\xa9 \xff ok"}}\r\n'
        b'{"unterminated": \n'
        b'{"type": "progress"}\n'
    )
    lines, offset = read_new_lines(str(path))
    assert offset == path.stat().st_size
    assert [ln.get("type") for ln in lines] == ["user", "progress"]
    assert lines[0]["message"]["content"].startswith("café")


def test_oversized_line_is_skipped_once_complete(tmp_path):
    path = tmp_path / "big.jsonl"
    big = b'{"pad": "' + b"x" * 5000 + b'"}'
    path.write_bytes(big)
    assert read_new_lines(str(path), 0, max_bytes=1024) == ([], 0)  # still incomplete
    with open(path, "ab") as fh:
        fh.write(b'\n{"ok": true}\n')
    lines, offset = read_new_lines(str(path), 0, max_bytes=1024)
    assert lines == [] and offset == len(big) + 1
    lines, offset = read_new_lines(str(path), offset, max_bytes=1024)
    assert lines == [{"ok": True}] and offset == path.stat().st_size


# ----------------------------------------------------------------------------- robustness


def test_parsers_tolerate_odd_structures():
    weird = [
        {},
        {"type": "user"},
        {"type": "user", "message": "not a dict"},
        {"type": "user", "message": {"content": 42}},
        {"type": "user", "message": {"content": [None, 3, {"type": "tool_result"}, {"type": "text", "text": None}]}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Edit", "input": "oops"}]}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": ["x"]}}]}},
        {"type": "assistant", "message": {"content": "plain string reply", "model": 7}},
        {"type": "event_msg", "payload": {"type": "exec_command_end", "exit_code": "1"}},
        {"type": "response_item", "payload": {"type": "function_call", "arguments": "{not json"}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "[1]"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "output": {"weird": True}}},
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": None}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": ["x"]}},
        {"type": "session_meta", "payload": {"id": 5, "git": "main"}},
        {"timestamp": 17, "type": "mystery"},
    ]
    for parser, platform in ((parse_claude, "claude-code"), (parse_codex, "codex")):
        d = parser(weird + ["not a dict", None])  # type: ignore[list-item]
        assert isinstance(d, SessionDigest) and d.platform == platform
        # Junk yields no request, turn, file or error, and the digest still serialises and renders.
        assert (d.requests, d.turns, d.files, d.files_read, d.errors) == ([], 0, [], [], [])
        assert d.session_id is None and d.model is None and d.git_branch is None
        as_dict = digest_to_dict(d)
        assert json.loads(json.dumps(as_dict)) == as_dict
        assert render_digest(d)[1].startswith(f"Platform: {platform}\n0 requests")


def test_detect_platform_and_dispatch():
    claude_lines = _read_all(CLAUDE)[0]
    codex_lines = _read_all(CODEX)[0]
    assert detect_platform(claude_lines) == "claude-code"
    assert detect_platform(codex_lines) == "codex"
    assert detect_platform([]) == "unknown"
    assert detect_platform([{"foo": 1}]) == "unknown"

    assert parse(claude_lines).platform == "claude-code"
    assert parse(codex_lines).platform == "codex"
    # An explicit platform wins; the digest's platform is used when none is given.
    assert parse([], platform="codex").platform == "codex"
    d = parse([{"foo": 1}])
    assert d.platform == "unknown"
    d = parse(codex_lines[:3], d)
    assert d.platform == "codex"
    d = parse(codex_lines[3:], d)
    assert d.requests == [CODEX_REQ]


def test_digest_round_trip_and_tolerant_restore(claude_digest):
    data = digest_to_dict(claude_digest)
    assert json.loads(json.dumps(data)) == data
    assert digest_to_dict(digest_from_dict(data)) == data

    for junk in (None, [], "x", {"requests": "nope", "turns": -3, "state": [], "files": [1, "a.py"]}):
        d = digest_from_dict(junk)
        assert isinstance(d, SessionDigest)
    d = digest_from_dict({"platform": "codex", "requests": "nope", "turns": True, "files": [1, "a.py"],
                          "state": {"pending": [], "unresolved": "bad", "reply": 9}})
    assert d.requests == [] and d.turns == 0 and d.files == ["a.py"]
    d = parse_codex([_ri({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]})], d)
    assert d.requests == ["go"] and d.turns == 1


# ----------------------------------------------------------------------------- caps


def test_lists_are_capped_keeping_first_and_latest():
    lines = [{"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": f"request number {i}"}}
             for i in range(120)]
    for i in range(300):
        lines.append({"type": "assistant", "uuid": f"a{i}", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"echo {i} " + "y" * 400}},
            {"type": "tool_use", "id": f"w{i}", "name": "Write", "input": {"file_path": f"src/f{i}.py"}},
        ]}})
        lines.append({"type": "user", "uuid": f"r{i}", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "is_error": True, "content": f"boom {i}"}]}})
    d = parse_claude(lines)
    assert d.turns == 120
    assert len(d.requests) == tr.MAX_REQUESTS
    assert d.requests[0] == "request number 0" and d.requests[-1] == "request number 119"
    assert len(d.commands) == tr.MAX_COMMANDS and all(len(c) <= tr.COMMAND_CHARS for c in d.commands)
    assert d.commands[0].startswith("echo 0 ") and d.commands[-1].startswith("echo 299 ")
    assert len(d.files) == tr.MAX_FILES and d.files[0] == "src/f0.py" and d.files[-1] == "src/f299.py"
    assert len(d.errors) == tr.MAX_ERRORS
    assert len(d.open_ends) <= tr.MAX_OPEN_ENDS
    assert len(json.dumps(digest_to_dict(d))) < 200_000  # state stays bounded too

    title, body = render_digest(d, max_chars=6000)
    assert len(body) <= 6000
    assert "request number 0" in body and "request number 119" in body
    assert "… " in body and " more" in body


# ----------------------------------------------------------------------------- rendering


def test_render_sections_and_title(claude_digest):
    title, body = render_digest(claude_digest)
    assert title == "Session 2026-11-30 · Fix the flaky login test in tests/test_login.py, it fails…"
    for heading in ("Requests:", "Files edited:", "Files read:", "Commands:", "Errors:", "Open ends:"):
        assert f"\n{heading}\n" in body
    assert "- " + REQ1 in body
    assert "- app/auth.py" in body
    # A file that was read and then edited is listed once, under "Files edited".
    read_section = body.split("Files read:\n", 1)[1].split("\n\n", 1)[0]
    assert read_section == "- tests/test_login.py"
    assert body.startswith("Platform: claude-code · Project: /home/dev/shop · Branch: fix/flaky-login")
    assert render_digest(claude_digest) == (title, body)  # deterministic


def test_render_empty_digest_and_titles():
    title, body = render_digest(SessionDigest(platform="codex"))
    assert title == "Session"
    assert "Requests:" not in body and body.startswith("Platform: codex")

    d = SessionDigest(platform="codex", cwd="/home/dev/api", started_at="2026-12-01T09:00:00Z")
    assert render_digest(d)[0] == "Session 2026-12-01 · api"
    d.requests = ["hi", "please migrate the billing service from the legacy queue to the new event bus today"]
    title = render_digest(d)[0]
    assert title.startswith("Session 2026-12-01 · please migrate the billing service")
    assert title.endswith("…") and len(title) <= len("Session 2026-12-01 · ") + 60


def test_render_trims_longest_lists_first_keeping_ends():
    d = SessionDigest(
        platform="claude-code",
        requests=[f"request {i}" for i in range(3)],
        commands=[f"make target-{i:03d} VERBOSE=1 " + "z" * 40 for i in range(100)],
        files=[f"src/module_{i}.py" for i in range(10)],
        errors=["boom"],
    )
    title, body = render_digest(d, max_chars=1500)
    assert len(body) <= 1500
    # Short lists survive whole; the long command list is cut in the middle.
    for i in range(3):
        assert f"- request {i}" in body
    assert "- boom" in body
    assert "make target-000" in body and "make target-099" in body
    commands = body.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    marker = [ln for ln in commands if ln.startswith("- … ")]
    assert len(marker) == 1
    shown = len(commands) - 1
    assert marker[0] == f"- … {100 - shown} more"
    assert render_digest(d, max_chars=1500) == (title, body)


def test_render_hard_cap_is_always_respected(claude_digest):
    for cap in (1, 50, 300, 800):
        _, body = render_digest(claude_digest, max_chars=cap)
        assert 0 < len(body) <= cap


# ----------------------------------------------------------------------------- locating rollouts


def test_find_codex_rollout(tmp_path, monkeypatch):
    sid = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    home = tmp_path / "codex"
    older = home / "sessions" / "2026" / "11" / "30" / f"rollout-2026-11-30T23-59-00-{sid}.jsonl"
    newer = home / "sessions" / "2026" / "12" / "01" / f"rollout-2026-12-01T09-00-00-{sid}.jsonl"
    other = home / "sessions" / "2026" / "12" / "01" / "rollout-2026-12-01T10-00-00-0199ffff-0000-7000-8000-000000000000.jsonl"
    for p in (older, newer, other):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}\n", encoding="utf-8")
    os.utime(older, (1_000_000, 1_000_000))
    os.utime(newer, (2_000_000, 2_000_000))

    assert find_codex_rollout(sid, str(home)) == str(newer)
    os.utime(older, (3_000_000, 3_000_000))
    assert find_codex_rollout(sid, str(home)) == str(older)

    monkeypatch.setenv("CODEX_HOME", str(home))
    assert find_codex_rollout(sid) == str(older)
    assert find_codex_rollout("0199a1b2-0000-0000-0000-000000000000") is None
    for bad in ("", "*", "../x", "a/b", "[0-9]*"):
        assert find_codex_rollout(bad) is None

    monkeypatch.delenv("CODEX_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    assert find_codex_rollout(sid) is None
    assert find_codex_rollout(sid, str(tmp_path / "absent")) is None
