"""The session digest's open ends: stated to-dos are open, an error the session edited after is not called unresolved."""

from __future__ import annotations

import json

from supermemory.transcripts import digest_from_dict, digest_to_dict, parse, parse_claude, parse_codex, render_digest
from supermemory.transcripts.digest import headline

CWD = "/work/projA"

# A fresh user's session (fresh.md #10): pytest fails on Redis, the agent adds a redis service to ci.yml and does
# not run the tests again, the user states a TODO for later.
SESSION = "\n".join(json.dumps(line) for line in [
    {"type": "user", "uuid": "u1", "cwd": CWD, "sessionId": "s1", "timestamp": "2026-12-04T05:01:00Z",
     "message": {"role": "user", "content": "The checkout tests are flaky on CI, can you figure out why?"}},
    {"type": "assistant", "uuid": "u2", "cwd": CWD, "sessionId": "s1", "timestamp": "2026-12-04T05:02:00Z",
     "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [
         {"type": "tool_use", "id": "tu_2", "name": "Bash", "input": {"command": "pytest tests/test_checkout.py -x -q"}}]}},
    {"type": "user", "uuid": "u3", "cwd": CWD, "sessionId": "s1", "timestamp": "2026-12-04T05:03:00Z",
     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_2", "is_error": True,
         "content": "FAILED tests/test_checkout.py::test_rate_limit - redis.exceptions.ConnectionError: "
                    "Error 111 connecting to localhost:6379. Connection refused."}]}},
    {"type": "assistant", "uuid": "u4", "cwd": CWD, "sessionId": "s1", "timestamp": "2026-12-04T05:04:00Z",
     "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [
         {"type": "text", "text": "The CI job does not start redis. I'll add a redis service to ci.yml."},
         {"type": "tool_use", "id": "tu_3", "name": "Edit", "input": {
             "file_path": CWD + "/.github/workflows/ci.yml", "old_string": "services:", "new_string": "services:\n  redis:"}}]}},
    {"type": "user", "uuid": "u5", "cwd": CWD, "sessionId": "s1", "timestamp": "2026-12-04T05:05:00Z",
     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_3",
                                               "content": "The file has been updated."}]}},
    {"type": "user", "uuid": "u6", "cwd": CWD, "sessionId": "s1", "timestamp": "2026-12-04T05:06:00Z",
     "message": {"role": "user", "content":
                 "great. next time remember we still need to mock the Stripe client in test_refunds.py, that's a TODO"}},
    {"type": "assistant", "uuid": "u7", "cwd": CWD, "sessionId": "s1", "timestamp": "2026-12-04T05:07:00Z",
     "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [
         {"type": "text", "text": "Noted. I fixed the CI redis service."}]}},
])

STRIPE = "To do: next time remember we still need to mock the Stripe client in test_refunds.py, that's a TODO"


def _lines(text: str = SESSION) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def _bash(uuid: str, tid: str, cmd: str) -> dict:
    return {"type": "assistant", "uuid": uuid, "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}]}}


def _edit(uuid: str, tid: str, path: str) -> dict:
    return {"type": "assistant", "uuid": uuid, "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tid, "name": "Edit", "input": {"file_path": path}}]}}


def _result(uuid: str, tid: str, text: str, is_error: bool = False) -> dict:
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": is_error}]}}


def _user(uuid: str, text: str) -> dict:
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": text}}


def _said(uuid: str, text: str) -> dict:
    return {"type": "assistant", "uuid": uuid, "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}


def test_the_users_stated_todo_is_an_open_end_and_an_error_edited_after_is_only_possibly_fixed():
    d = parse(_lines())
    assert STRIPE in d.open_ends
    assert not any(e.startswith("Unresolved error") for e in d.open_ends), d.open_ends
    assert [e for e in d.open_ends if e.startswith("Possibly fixed, not re-run: pytest tests/test_checkout.py")]
    assert d.open_ends[0] == STRIPE  # what the user said is still to do comes before an unverified fix
    assert d.errors and "ConnectionError" in d.errors[0]  # the error stays in the session's history
    title, body = render_digest(d)
    assert headline(body).startswith("Open ends: " + STRIPE)


def test_a_passing_rerun_after_the_edit_leaves_no_error_open():
    d = parse(_lines())
    d = parse_claude([_bash("r1", "t9", "python -m pytest tests/test_checkout.py -q"), _result("r2", "t9", "5 passed")], d)
    assert not any("pytest" in e for e in d.open_ends), d.open_ends
    assert STRIPE in d.open_ends


def test_a_failing_edit_does_not_count_as_a_fix_and_a_new_failure_reopens_the_error():
    lines = [_bash("1", "t1", "pytest -q"), _result("2", "t1", "FAILED tests/test_a.py::test_x - assert 1 == 2", True),
             _edit("3", "t2", "/p/a.py"), _result("4", "t2", "File has not been read yet.", True)]
    d = parse_claude(lines)
    assert [e for e in d.open_ends if e.startswith("Unresolved error: pytest -q")], d.open_ends
    d = parse_claude([_edit("5", "t3", "/p/a.py"), _result("6", "t3", "The file has been updated.")], d)
    assert [e for e in d.open_ends if e.startswith("Possibly fixed, not re-run: pytest -q")], d.open_ends
    d = parse_claude([_bash("7", "t4", "pytest -q"), _result("8", "t4", "FAILED tests/test_a.py::test_x - assert 1 == 3", True)], d)
    assert [e for e in d.open_ends if e.startswith("Unresolved error: pytest -q")], d.open_ends
    assert not any(e.startswith("Possibly fixed") for e in d.open_ends)


def test_later_and_follow_up_statements_are_open_ends_but_asking_to_do_them_now_is_not():
    d = parse_claude([_user("1", "Let's leave the retry logic for later. The webhook signature check needs a follow-up."),
                      _said("2", "OK. I'll add the backoff later.")])
    assert "Deferred: the retry logic" in d.open_ends
    assert "To do: The webhook signature check needs a follow-up." in d.open_ends
    assert "Note: I'll add the backoff later." in d.open_ends
    d = parse_claude([_user("1", "Fix the TODO in parser.py please."), _said("2", "Done.")])
    assert d.open_ends == []
    d = parse_claude([_user("1", "Can you write the follow-up test for the refund webhook?"), _said("2", "Done.")])
    assert d.open_ends == []
    d = parse_claude([_user("1", "This crashes:\n# TODO: handle None\nx = f(None)"), _said("2", "Fixed.")])
    assert d.open_ends == []
    d = parse_claude([_user("1", "Add support for Python 3 or later."), _said("2", "Fine.")])
    assert d.open_ends == []


def test_codex_apply_patch_after_a_failure_makes_it_possibly_fixed():
    def item(payload):
        return {"timestamp": "2026-12-01T10:00:00Z", "type": "response_item", "payload": payload}

    lines = [
        item({"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"]}),
              "call_id": "c1"}),
        item({"type": "function_call_output", "call_id": "c1",
              "output": json.dumps({"output": "FAILED tests/test_h.py::test_db - assert 500 == 503",
                                    "metadata": {"exit_code": 1}})}),
        item({"type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
              "input": "*** Begin Patch\n*** Update File: src/h.py\n@@\n-a\n+b\n*** End Patch"}),
        item({"type": "custom_tool_call_output", "call_id": "c2",
              "output": json.dumps({"output": "Success.", "metadata": {"exit_code": 0}})}),
    ]
    d = parse_codex(lines)
    assert [e for e in d.open_ends if e.startswith("Possibly fixed, not re-run: pytest -q")], d.open_ends
    assert not any(e.startswith("Unresolved error") for e in d.open_ends)


def test_a_snapshot_written_before_the_edit_flag_still_reads_its_unresolved_errors():
    d = parse_claude([_bash("1", "t1", "pytest -q"), _result("2", "t1", "FAILED tests/test_a.py::test_x - boom", True)])
    snap = digest_to_dict(d)
    snap["state"]["unresolved"] = [entry[:2] for entry in snap["state"]["unresolved"]]  # the older [key, line] form
    snap["state"].pop("asks", None)
    d = parse_claude([_said("3", "Looking.")], digest_from_dict(snap))
    assert [e for e in d.open_ends if e.startswith("Unresolved error: pytest -q")], d.open_ends
    d = parse_claude([_edit("4", "t2", "/p/a.py"), _result("5", "t2", "The file has been updated.")], d)
    assert [e for e in d.open_ends if e.startswith("Possibly fixed, not re-run: pytest -q")], d.open_ends
