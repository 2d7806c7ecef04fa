"""The session capture's open ends (fu23 D4, D5, D6): Chinese to-do lists and deferrals, deferrals that name what they
put off, a build failure a later test run of the same tool cleared, and one open end per listed item."""

from __future__ import annotations

import functools

import pytest

from supermemory.transcripts import digest_from_dict, digest_to_dict, parse, parse_claude, render_digest
from supermemory.transcripts.commands import covered_keys
from supermemory.transcripts.digest import headline

from helpers.claude_lines import said_line, user_line

CWD = "/home/dev/etl"


_user = functools.partial(user_line, cwd=CWD, session="s22b")
_said = functools.partial(said_line, cwd=CWD, session="s22b")


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


OPENING_ZH = [_user("u1", "把 invoices 同步任务改成增量的"), _said("a1", "已经改成按 updated_at 增量同步。")]
OPENING_EN = [_user("u1", "Make the invoice sync incremental."), _said("a1", "The sync now reads only changed rows.")]


# --------------------------------------------------------------------------- D4: Chinese lists under a label


@pytest.mark.parametrize("label", ["还没做完的：", "待办：", "下一步：", "后续还需要：", "剩下的工作:"])
def test_a_chinese_label_line_makes_each_item_below_it_an_open_end(label):
    said = f"同步改好了。\n\n{label}\n- 给 sync_invoices 补一个回填脚本\n- 在监控面板上加延迟告警"
    d = parse_claude(OPENING_ZH + [_said("a2", said)])
    assert d.open_ends == ["给 sync_invoices 补一个回填脚本", "在监控面板上加延迟告警"], d.open_ends
    # a sentence that only mentions next steps or to-dos in passing is no open end
    for said in ("下一步我先看一下同步日志。", "我们讨论了下一步的方案，已经定下来了。", "待办事项已经全部完成了。",
                 "后续还需要的话可以再加索引，但现在不用。"):
        assert parse_claude(OPENING_ZH + [_said("a2", said)]).open_ends == [], said


def test_the_user_listing_leftover_work_in_chinese_is_an_open_end_too():
    d = parse_claude(OPENING_ZH + [_user("u2", "待办：\n1. 回填去年的数据\n2. 更新运维手册"), _said("a2", "记下了。")])
    assert d.open_ends == ["回填去年的数据", "更新运维手册"], d.open_ends


def test_a_list_under_a_label_is_bounded_and_only_its_own_items_count():
    items = [f"- step number {n} of the rollout" for n in range(1, 9)]
    said = "Next steps:\n" + "\n".join(items[:7]) + "\n\nEverything else is merged."
    d = parse_claude(OPENING_EN + [_said("a2", said)])
    assert d.open_ends == [f"step number {n} of the rollout" for n in range(1, 6)], d.open_ends


# --------------------------------------------------------------------------- D4: deferrals


@pytest.mark.parametrize("reply, thing", [
    ("回填那个先放一放，下周再做。", "回填"),
    ("好的，先把延迟告警放一放。", "延迟告警"),
    ("运维手册下个迭代再说。", "运维手册"),
    ("Let's leave the backfill script for next week.", "the backfill script"),
    ("The latency alert can wait until next sprint.", "The latency alert"),
    ("ok, park the runbook update, I need to ask ops first.", "the runbook update"),
    ("We'll handle the retry backoff tomorrow.", "the retry backoff"),
])
def test_a_user_deferral_that_names_its_object_defers_that_object(reply, thing):
    d = parse_claude(OPENING_EN + [_user("u2", reply), _said("a2", "OK.")])
    assert d.open_ends == [f"Deferred: {thing}"], d.open_ends


@pytest.mark.parametrize("reply", ["Let's leave the tests as they are.", "The deploy can wait for the migration.",
                                   "Can we leave the backfill for next week?", "我们先不管缓存，直接改 SQL。",
                                   "这个问题下周再开会讨论吗？"])
def test_a_sentence_that_defers_nothing_it_names_is_no_deferral_unlike_one_that_does(reply):
    d = parse_claude(OPENING_EN + [_user("u2", reply), _said("a2", "OK.")])
    assert not [e for e in d.open_ends if e.startswith("Deferred")], d.open_ends
    d = parse_claude(OPENING_EN + [_user("u2", reply), _user("u3", "先把回填放一放。"), _said("a2", "OK.")])
    assert [e for e in d.open_ends if e.startswith("Deferred")] == ["Deferred: 回填"], d.open_ends


@pytest.mark.parametrize("reply", ["先放一放", "好的，这个下周再说吧", "that can wait"])
def test_a_bare_chinese_or_pronoun_deferral_keeps_the_assistants_proposal(reply):
    d = parse_claude(OPENING_ZH + [_said("a2", "增量同步好了。要不要顺便把回填脚本也写了？"), _user("u2", reply)])
    assert d.open_ends == ["Deferred: 要不要顺便把回填脚本也写了？"], d.open_ends
    assert d.turns == 1


def test_a_chinese_acknowledgement_is_no_request_and_a_chinese_yes_to_a_question_is_one():
    d = parse_claude(OPENING_ZH + [_user("u2", "好的，谢谢")])
    assert d.open_ends == [] and d.turns == 1, d.open_ends
    d = parse_claude(OPENING_ZH + [_said("a2", "要不要顺便把回填脚本也写了？"), _user("u2", "好的")])
    assert d.open_ends == ["Unanswered request: 好的"], d.open_ends


def test_a_deferred_thing_the_assistant_lists_again_is_shown_once():
    d = parse_claude(OPENING_EN + [_user("u2", "Let's leave the backfill script for next week."),
                                   _said("a2", "Still to do:\n- The backfill script (next week)\n- A latency alert")])
    assert d.open_ends == ["The backfill script (next week)", "A latency alert"], d.open_ends


def test_named_deferrals_and_list_items_survive_a_snapshot_and_incremental_capture():
    lines = OPENING_ZH + [_user("u2", "回填那个先放一放，下周再做。"), _said("a2", "待办：\n- 更新运维手册\n- 加延迟告警")]
    whole = parse(lines)
    rest = parse(lines[3:], digest_from_dict(digest_to_dict(parse(lines[:3]))))
    assert digest_to_dict(rest) == digest_to_dict(whole)
    assert whole.open_ends == ["Deferred: 回填", "更新运维手册", "加延迟告警"], whole.open_ends


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


# --------------------------------------------------------------------------- D6: one open end per item, one label


def test_listed_items_render_one_per_line_without_a_second_label():
    said = "Merged.\n\nStill to do:\n- Backfill last year's invoices\n- Add a latency alert to the dashboard"
    d = parse_claude(OPENING_EN + [_said("a2", said)])
    _title, body = render_digest(d)
    assert "Open ends:\n- Backfill last year's invoices\n- Add a latency alert to the dashboard" in body, body
    assert headline(body) == "Open ends: Backfill last year's invoices; Add a latency alert to the dashboard"
    assert "Note:" not in body


def test_a_label_the_text_wrote_is_kept_once_and_a_plain_note_keeps_its_note():
    d = parse_claude(OPENING_EN + [_said("a2", "Merged. Remaining: the EUR rounding rule. I'll add the backoff later.")])
    assert d.open_ends == ["Remaining: the EUR rounding rule.", "Note: I'll add the backoff later."], d.open_ends
