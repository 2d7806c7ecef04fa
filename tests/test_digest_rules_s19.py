"""Standing instructions in a session digest (fresh-user run 19, defect 9): a rule the user sets in a session ("from
now on always run make lint before you commit") is listed under its own heading and reaches the next session's
briefing the way open ends do; one-off requests, questions and assistant turns are no such rule."""

from __future__ import annotations

import json

import pytest

from supermemory.render_briefing import briefing_view
from supermemory.transcripts import digest_from_dict, digest_to_dict, parse_claude, parse_codex, render_digest
from supermemory.transcripts.digest import OPEN_ENDS_HEADING, headline

CWD = "/work/ledgerly"
STANDING_HEADING = "Standing instructions:"
LINT = "From now on always run make lint before you commit."
REVERSE_CHARGE = ("We still need to add the reverse-charge note for B2B customers in Austria to the invoice "
                  "template, that's a TODO for next session.")


def _user(uuid: str, text: str) -> dict:
    return {"type": "user", "uuid": uuid, "cwd": CWD, "sessionId": "s19", "timestamp": f"2026-12-04T09:0{uuid}:00Z",
            "message": {"role": "user", "content": text}}


def _said(uuid: str, text: str) -> dict:
    return {"type": "assistant", "uuid": uuid, "cwd": CWD, "sessionId": "s19",
            "timestamp": f"2026-12-04T09:0{uuid}:00Z",
            "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}]}}


# The report's session (mktr.py), its user turn 8 and the reply.
SESSION = [
    _user("1", "The Austrian invoices show 19% VAT instead of 20%. Can you find out why?"),
    _said("2", "AT is set to 19 in config/vat_rates.yaml; it should be 20. Fixed it."),
    _user("3", f"Thanks. {REVERSE_CHARGE} And from now on always run make lint before you commit."),
    _said("4", "Understood: the reverse-charge note is open, and I'll run make lint before every commit."),
]


def _body(lines: list[dict]) -> str:
    return render_digest(parse_claude(lines))[1]


def _rules(text: str) -> list[str]:
    return parse_claude([_user("1", text), _said("2", "OK.")]).instructions


def test_the_reported_rule_gets_its_own_heading_and_the_headline():
    d = parse_claude(SESSION)
    assert d.instructions == [LINT]
    body = render_digest(d)[1]
    assert f"\n\n{STANDING_HEADING}\n- {LINT}\n" in body, body
    assert f"{OPEN_ENDS_HEADING}\n- To do: {REVERSE_CHARGE}" in body, body
    # The one-line mention keeps both; the open-task listing still sees the open ends first.
    assert headline(body) == f"{OPEN_ENDS_HEADING} To do: {REVERSE_CHARGE} · {STANDING_HEADING} {LINT}"
    assert headline(body, standing_first=True) == f"{STANDING_HEADING} {LINT} · {OPEN_ENDS_HEADING} To do: {REVERSE_CHARGE}"


def test_a_session_with_rules_and_no_open_ends_is_not_listed_as_open():
    body = _body([_user("1", "Never push to main directly."), _said("2", "Understood.")])
    assert headline(body) == f"{STANDING_HEADING} Never push to main directly."
    assert not headline(body).startswith(OPEN_ENDS_HEADING)
    # Without rules or open ends the headline is still the requests.
    assert headline(_body([_user("1", "Rename the helper."), _said("2", "Done.")])) == "Requests: Rename the helper."


@pytest.mark.parametrize("text, rule", [
    ("from now on always run make lint before you commit", "From now on always run make lint before you commit"),
    ("Going forward, use pnpm instead of npm.", "Going forward, use pnpm instead of npm."),
    ("Always use tabs in Makefiles.", "Always use tabs in Makefiles."),
    ("Please make sure to always add a changelog entry.", "Please make sure to always add a changelog entry."),
    ("Looks good. Never commit generated files.", "Never commit generated files."),
    ("Also, don't ever force-push to main.", "Don't ever force-push to main."),
    ("Every time you change the schema, regenerate the client.",
     "Every time you change the schema, regenerate the client."),
    ("Whenever you touch the API, update openapi.yaml.", "Whenever you touch the API, update openapi.yaml."),
    ("好的。以后都用 pnpm，不要再用 npm。", "以后都用 pnpm，不要再用 npm。"),
    ("每次提交前都要先跑 make lint。", "每次提交前都要先跑 make lint。"),
    ("永远不要直接推到 main 分支", "永远不要直接推到 main 分支"),
    ("记住：数据库迁移只能在周二做。", "记住：数据库迁移只能在周二做。"),
    ("从现在开始，所有的注释都用英文写。", "从现在开始，所有的注释都用英文写。"),
])
def test_standing_instructions_in_english_and_chinese(text, rule):
    assert _rules(text) == [rule]


@pytest.mark.parametrize("text", [
    "run make lint now",                                        # a one-off request
    "Run make lint before you commit this.",                    # one-off: no standing marker
    "Can you always run make lint before you commit?",          # questions are never rules
    "Should we never use ORMs here?",
    "From now on, should I use pnpm?",
    "以后都用 pnpm 吗？",
    "每次都要这样吗",
    "The build always fails on CI.",                            # "always" as a report, not an instruction
    "Always fails when the cache is cold.",
    "Never mind, it works now.",
    "Never seen this error before.",
    "I never got the migration to work.",
    "Every time I run the tests the database is locked.",       # "every time I": a report
    "每次运行都报错。",                                          # every time it runs it errors: a report
    "以后再说吧。",                                              # "later": no rule
    "We still need to fix the parser later.",                   # a to-do, not a rule
    "```\n# always run lint\nnever_push()\n```",                # code is no rule
])
def test_one_off_requests_questions_and_reports_are_no_rule(text):
    assert _rules(text) == []


def test_assistant_turns_are_never_rules():
    d = parse_claude([_user("1", "Fix the flaky test."),
                      _said("2", "Done. From now on I will always run make lint before I commit. Never push to main.")])
    assert d.instructions == []
    assert STANDING_HEADING not in render_digest(d)[1]


def test_codex_user_turns_and_repeats_and_snapshots():
    def msg(role: str, text: str) -> dict:
        kind = "input_text" if role == "user" else "output_text"
        return {"timestamp": "2026-12-04T10:00:00Z", "type": "response_item",
                "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}}

    d = parse_codex([msg("user", "Always run go vet before committing."), msg("assistant", "Will do.")])
    assert d.instructions == ["Always run go vet before committing."]
    # Said again in a later turn: listed once; the incremental snapshot carries it on.
    d = parse_codex([msg("user", "Done? always run go vet before committing!"), msg("assistant", "Yes.")],
                    digest_from_dict(json.loads(json.dumps(digest_to_dict(d)))))
    assert d.instructions == ["Always run go vet before committing."]
    assert digest_from_dict(digest_to_dict(d)).instructions == d.instructions


def test_a_long_digest_keeps_its_rules_when_trimmed():
    lines = [_user("1", "Never deploy on Fridays.")] + [
        _user(str(i), f"Please refactor module number {i} of the billing service into smaller pieces " * 3)
        for i in range(2, 9)] + [_said("9", "OK.")]
    d = parse_claude(lines)
    d.commands = [f"pytest tests/test_module_{i}.py -q --maxfail=1" for i in range(80)]
    body = render_digest(d, max_chars=1200)[1]
    assert len(body) <= 1200 and f"{STANDING_HEADING}\n- Never deploy on Fridays." in body, body


def test_the_rule_reaches_the_next_sessions_briefing_redacted(store, tmp_path):
    """End to end: the transcript captured as the PreCompact hook does, then the compact briefing; a secret in the
    rule's sentence is redacted like the rest of the digest."""
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    lines = SESSION + [_user("5", f"Every time you deploy, export GITHUB_TOKEN={secret} first."),
                       _said("6", "Noted.")]
    path = tmp_path / "s19.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    session = store.capture_session(str(path), session_id="s19", platform="claude-code", cwd=CWD)["id"]
    body = store.get(session)["memories"][0]["body"]
    assert f"{STANDING_HEADING}\n- {LINT}\n- Every time you deploy, export GITHUB_TOKEN=" in body, body
    assert secret not in body
    view = briefing_view(store.briefing(source="compact", session_id="s19"))
    text = view["text"]
    assert view["items"]["sessions"] == [session], text
    line = next(ln for ln in text.splitlines() if ln.startswith(f"- [{session} session]"))
    assert f"— {STANDING_HEADING} {LINT}; Every time you deploy" in line, line
    assert "Open ends: To do: We still need to add the reverse-charge note" in line, line
    assert secret not in text
