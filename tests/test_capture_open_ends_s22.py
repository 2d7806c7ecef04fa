"""The session capture's open ends (fu22 D5): an error a later chained run clears is not left unresolved, the common
labels of leftover work are kept, and a user's acknowledgement or deferral is no unanswered request."""

from __future__ import annotations

import functools

import json

import pytest

from supermemory.text import lexicons
from supermemory.transcripts import digest_from_dict, digest_to_dict, parse, parse_claude, parse_codex

from helpers.claude_lines import said_line, user_line

CWD = "/home/dev/billing"


_user = functools.partial(user_line, cwd=CWD, session="s22")
_said = functools.partial(said_line, cwd=CWD, session="s22")


def _bash(uuid: str, tid: str, cmd: str) -> dict:
    return {"type": "assistant", "uuid": uuid, "cwd": CWD, "sessionId": "s22", "message": {
        "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}]}}


def _result(uuid: str, tid: str, text: str, is_error: bool = False) -> dict:
    return {"type": "user", "uuid": uuid, "cwd": CWD, "sessionId": "s22", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": is_error}]}}


def _run(n: int, cmd: str, output: str, failed: bool = False) -> list[dict]:
    return [_bash(f"b{n}", f"t{n}", cmd), _result(f"r{n}", f"t{n}", output, failed)]


def _unresolved(ends: list[str]) -> list[str]:
    return [e for e in ends if e.startswith("Unresolved error:")]


INVOICE_FAIL = "E   sqlalchemy.exc.ProgrammingError: relation \"invoice_lines\" does not exist"
OPENING = [_user("u1", "Add a currency column to the invoice PDF export.")]


# --------------------------------------------------------------------------- 1. errors cleared by a chained rerun


def test_a_chained_rerun_with_other_flags_that_passes_clears_the_error_and_one_that_fails_again_does_not():
    failed = OPENING + _run(1, "pytest tests/test_invoices.py -x", INVOICE_FAIL, failed=True) + [
        _said("a1", "The test database lacks the invoice_lines table; applying the migrations first.")]
    passed = parse_claude(failed + _run(2, "make migrate-test && pytest tests/test_invoices.py -q --create-db",
                                        "6 passed in 2.1s") + [_said("a2", "All invoice tests pass now.")])
    assert not _unresolved(passed.open_ends), passed.open_ends
    assert passed.errors and "invoice_lines" in passed.errors[0]   # the error stays in the session's history

    again = parse_claude(failed + _run(2, "make migrate-test && pytest tests/test_invoices.py -q --create-db",
                                       INVOICE_FAIL, failed=True) + [_said("a2", "Still failing.")])
    assert [e for e in _unresolved(again.open_ends) if "pytest tests/test_invoices.py -x" in e], again.open_ends


def test_a_passing_chain_clears_only_the_commands_it_ran():
    lines = OPENING + _run(1, "npm run lint", "error  'total' is assigned a value but never used", failed=True) + \
        _run(2, "cd /home/dev/billing && pytest -q", INVOICE_FAIL, failed=True) + \
        _run(3, "make migrate-test && pytest -q 2>&1 | tail -3", "12 passed in 3.0s") + \
        [_said("a1", "Tests pass after the migration.")]
    ends = _unresolved(parse_claude(lines).open_ends)
    assert len(ends) == 1 and ends[0].startswith("Unresolved error: npm run lint"), ends


def test_after_an_or_the_chain_proves_nothing_about_the_command_before_it():
    lines = OPENING + _run(1, "pytest -q", INVOICE_FAIL, failed=True) + \
        _run(2, "make migrate-test && pytest -q", "9 passed") + \
        _run(3, "mypy billing", "billing/pdf.py:12: error: Incompatible types", failed=True) + \
        _run(4, "make types || mypy billing", "ok") + [_said("a1", "Done.")]
    ends = _unresolved(parse_claude(lines).open_ends)
    assert len(ends) == 1 and "mypy billing" in ends[0], ends   # pytest cleared by the && chain, mypy not by ||


def test_codex_chained_rerun_clears_the_error_too():
    def call(n, cmd):
        return {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": f"c{n}",
                                                     "arguments": json.dumps({"command": ["bash", "-lc", cmd]})}}

    def out(n, text, code):
        return {"type": "response_item", "payload": {"type": "function_call_output", "call_id": f"c{n}",
                                                     "output": json.dumps({"output": text,
                                                                           "metadata": {"exit_code": code}})}}

    lines = [{"type": "session_meta", "payload": {"id": "x22", "cwd": CWD}},
             {"type": "event_msg", "payload": {"type": "user_message", "message": "fix the invoice tests"}},
             call(1, "cargo test invoices"), out(1, "error[E0425]: cannot find value `rate` in this scope", 101),
             call(2, "cargo fmt && cargo test invoices --release"), out(2, "test result: ok. 4 passed", 0),
             {"type": "event_msg", "payload": {"type": "agent_message", "message": "Fixed."}}]
    d = parse_codex(lines)
    assert d.errors and not _unresolved(d.open_ends), (d.errors, d.open_ends)


# --------------------------------------------------------------------------- 2. labels of leftover work

NO_LABEL = ("To do this I moved the formatter into billing/pdf.py.", "Pending review, the export looks right.",
            "The remaining tests pass.", "Next I ran the whole suite and it passed.")
LABELS = ("Still to do", "TODO", "Next steps", "Left to do", "Not done yet", "Follow-ups", "Remaining", "Outstanding",
          "Open items", "Pending")


def test_every_common_label_of_leftover_work_is_kept_as_an_open_end():
    for label in LABELS:
        text = f"Merged the export changes. {label}: wire the currency column into the CSV export as well."
        d = parse_claude(OPENING + [_said("a1", text)])
        assert f"{label}: wire the currency column into the CSV export as well." in d.open_ends, (label, d.open_ends)
    said = "Done. **Still to do:**\n- translate the PDF footer\n- add the EUR rounding rule"
    d = parse_claude(OPENING + [_said("a1", said)])
    assert d.open_ends == ["translate the PDF footer", "add the EUR rounding rule"], d.open_ends
    for text in NO_LABEL:   # a label word without its colon is no open end
        assert parse_claude(OPENING + [_said("a1", text)]).open_ends == [], text


def test_the_user_stating_leftover_work_with_a_label_is_a_to_do():
    d = parse_claude(OPENING + [_said("a1", "Added the column."),
                                _user("u2", "Thanks. Still to do: the Swiss franc formatting."),
                                _said("a2", "Noted.")])
    assert "Still to do: the Swiss franc formatting." in d.open_ends, d.open_ends


# --------------------------------------------------------------------------- 3. acknowledgements and deferrals

PROPOSAL = [_said("a1", "The currency column is in the PDF. Should I also add it to the CSV export?")]


@pytest.mark.parametrize("reply", ["ok, leave that for next time", "later", "Not now, maybe tomorrow.",
                                   "let's park that", "fine, skip it for now"])
def test_a_deferral_is_no_request_and_keeps_the_deferred_proposal_open(reply):
    d = parse_claude(OPENING + PROPOSAL + [_user("u2", reply)])
    assert d.open_ends == ["Deferred: Should I also add it to the CSV export?"], d.open_ends
    assert reply not in d.requests and d.turns == 1


def test_a_deferral_of_a_proposal_already_noted_adds_nothing_twice():
    said = "Added the column. Remaining: the CSV export still lacks it; we could add it later."
    d = parse_claude(OPENING + [_said("a1", said), _user("u2", "ok, leave that for next time")])
    assert d.open_ends == ["Remaining: the CSV export still lacks it; we could add it later."], d.open_ends


@pytest.mark.parametrize("reply", ["ok", "thanks!", "never mind", "fine, skip it", "Great, thank you 👍",
                                   "no thanks, that's all"])
def test_an_acknowledgement_is_no_request_and_leaves_nothing_open(reply):
    d = parse_claude(OPENING + [_said("a1", "The currency column is in the PDF and the tests pass."),
                                _user("u2", reply)])
    assert d.open_ends == [] and d.requests == ["Add a currency column to the invoice PDF export."], d.open_ends
    # a decline after the assistant's question closes it too
    if reply != "ok":
        assert parse_claude(OPENING + PROPOSAL + [_user("u2", reply)]).open_ends == []


def test_a_real_request_at_the_end_is_still_unanswered_and_so_is_an_approval():
    d = parse_claude(OPENING + PROPOSAL + [_user("u2", "ok, leave that for next time"),
                                           _said("a2", "Sure, I'll leave the CSV export as it is."),
                                           _user("u3", "can you also add a --dry-run flag?")])
    assert d.open_ends == ["Unanswered request: can you also add a --dry-run flag?",
                           "Deferred: Should I also add it to the CSV export?"], d.open_ends
    # a bare agreement that answers the assistant's question approves it: still a request
    assert parse_claude(OPENING + PROPOSAL + [_user("u2", "sure")]).open_ends == ["Unanswered request: sure"]


def test_an_acknowledgement_does_not_hide_a_request_nobody_answered():
    d = parse_claude(OPENING + [_said("a1", "Done."), _user("u2", "now rename the PDF template"),
                                _user("u3", "thanks")])
    assert d.open_ends == ["Unanswered request: now rename the PDF template"], d.open_ends


def test_a_deferred_proposal_survives_a_snapshot_and_incremental_capture():
    lines = OPENING + PROPOSAL + [_user("u2", "later")] + _run(1, "pytest -q", INVOICE_FAIL, failed=True)
    whole = parse(lines)
    half = digest_from_dict(digest_to_dict(parse(lines[:3])))
    rest = parse(lines[3:], half)
    assert digest_to_dict(rest) == digest_to_dict(whole)
    assert "Deferred: Should I also add it to the CSV export?" in whole.open_ends


@pytest.mark.parametrize("name", ["leftover_work_labels", "acknowledgements", "agreement_words", "deferral_phrases"])
def test_the_reply_and_label_lexicons_have_a_provenance_and_compile(name):
    assert lexicons.provenance(name)
    assert lexicons.marker_pattern(name).pattern
