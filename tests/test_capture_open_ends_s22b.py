"""The session capture's open ends (fu23 D5): a build failure a later test run of the same tool cleared."""

from __future__ import annotations

import pytest

from supermemory.transcripts import parse_claude
from supermemory.transcripts.commands import covered_keys

CWD = "/home/dev/etl"


def _user(uuid: str, text: str) -> dict:
    return {"type": "user", "uuid": uuid, "cwd": CWD, "sessionId": "s22b",
            "message": {"role": "user", "content": text}}


def _said(uuid: str, text: str) -> dict:
    return {"type": "assistant", "uuid": uuid, "cwd": CWD, "sessionId": "s22b",
            "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}]}}


def _run(n: int, cmd: str, output: str, failed: bool = False) -> list[dict]:
    return [{"type": "assistant", "uuid": f"b{n}", "cwd": CWD, "sessionId": "s22b", "message": {
        "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": cmd}}]}},
        {"type": "user", "uuid": f"r{n}", "cwd": CWD, "sessionId": "s22b", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{n}", "content": output, "is_error": failed}]}}]


def _edit(n: int, path: str) -> list[dict]:
    return [{"type": "assistant", "uuid": f"e{n}", "cwd": CWD, "sessionId": "s22b", "message": {
        "role": "assistant", "content": [{"type": "tool_use", "id": f"te{n}", "name": "Edit",
                                          "input": {"file_path": f"{CWD}/{path}", "old_string": "a", "new_string": "b"}}]}},
        {"type": "user", "uuid": f"re{n}", "cwd": CWD, "sessionId": "s22b", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"te{n}", "content": "The file has been updated."}]}}]


OPENING_EN = [_user("u1", "Make the invoice sync incremental."), _said("a1", "The sync now reads only changed rows.")]


# --------------------------------------------------------------------------- D5: a test run that builds the crate

BUILD_FAIL = "error[E0432]: unresolved import `chrono_tz`\n --> src/sync.rs:3:5"


def test_a_passing_cargo_test_clears_an_earlier_cargo_build_failure_after_the_fix():
    lines = OPENING_EN + _run(1, "cargo build", BUILD_FAIL, failed=True) + _edit(1, "Cargo.toml") + \
        _run(2, "cargo test", "test result: ok. 17 passed; 0 failed") + [_said("a2", "Builds and tests pass.")]
    d = parse_claude(lines)
    assert d.errors and d.open_ends == [], d.open_ends
    go = OPENING_EN + _run(1, "go build ./...", "sync.go:12:2: undefined: backoff", failed=True) + \
        _run(2, "go test ./...", "ok  \texample.com/etl\t0.4s") + [_said("a2", "Fixed.")]
    assert parse_claude(go).open_ends == []


@pytest.mark.parametrize("later", ["cargo fmt", "cargo check", "go test ./...", "npm test"])
def test_an_unrelated_or_narrower_later_success_does_not_clear_a_build_failure_but_a_test_run_does(later):
    lines = OPENING_EN + _run(1, "cargo build", BUILD_FAIL, failed=True) + _edit(1, "Cargo.toml") + \
        _run(2, later, "ok")
    ends = parse_claude(lines + [_said("a2", "Done.")]).open_ends
    assert [e for e in ends if e.startswith("Possibly fixed, not re-run: cargo build")], ends
    assert parse_claude(lines + _run(3, "cargo test --all", "test result: ok") + [_said("a2", "Done.")]).open_ends == []


def test_a_build_does_not_clear_a_failed_test_run_but_a_later_test_run_clears_both():
    lines = OPENING_EN + _run(1, "cargo test", "test result: FAILED. 16 passed; 1 failed", failed=True) + \
        _run(2, "cargo build", "Finished dev profile")
    ends = parse_claude(lines + [_said("a2", "Built.")]).open_ends
    assert [e for e in ends if e.startswith("Unresolved error: cargo test")] and len(ends) == 1, ends
    lines += _run(3, "cargo build --release", BUILD_FAIL, failed=True) + _run(4, "cargo test", "test result: ok")
    assert parse_claude(lines + [_said("a2", "Done.")]).open_ends == []


def test_the_table_of_covered_steps_is_small_and_stays_within_one_tool():
    assert covered_keys("cargo test") == ("cargo build", "cargo check")
    assert covered_keys("npm test") == () and covered_keys("npm run build") == ()
    for key in ("cargo test", "cargo build", "cargo clippy", "go test"):
        assert all(c.split()[0] == key.split()[0] for c in covered_keys(key))
