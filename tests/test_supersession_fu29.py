"""Defects of the fresh-user run fu29 (twenty-fourth session): "moved CI off Jenkins and onto GitHub Actions" names
what it replaces, so it supersedes the long Jenkins decision that shares few other words with it."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.text import revision_marker
from supermemory.text.traits import change_values

JENKINS = ("CI runs on our self-hosted Jenkins (jenkins.internal) using a declarative Jenkinsfile with the stages lint, "
           "test, build-image and deploy-staging.")


@pytest.mark.parametrize("text, values", [
    ("We moved CI off Jenkins and onto GitHub Actions.", [("Jenkins", "GitHub Actions")]),
    ("We moved CI off Jenkins and onto GitHub Actions: the pipeline is now .github/workflows/ci.yml.",
     [("Jenkins", "GitHub Actions")]),
    ("Switched the worker away from Celery to Dramatiq.", [("Celery", "Dramatiq")]),
    ("Migrated the mail service off Amazon SES last week.", [("Amazon SES", "")]),
    ("We moved off Mailgun; email goes through Postmark.", [("Mailgun", "")]),
    ("The alarm went off at 5.", []),
])
def test_moving_something_off_a_and_onto_b_names_both_sides(text, values):
    assert change_values(text) == values


@pytest.mark.model
@pytest.mark.parametrize("newer", [
    "We moved CI off Jenkins and onto GitHub Actions.",
    "We moved CI off Jenkins and onto GitHub Actions: the pipeline is now .github/workflows/ci.yml and the "
    "Jenkinsfile has been deleted.",
])
def test_moving_ci_off_jenkins_supersedes_the_long_jenkins_decision_with_the_real_model(
        db_path, config, onnx_embedder, newer):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        old = s.remember(JENKINS, kind="decision")["id"]
        s.remember("The API listens on port 8080 locally.", kind="fact")
        assert s.remember(newer, kind="decision")["supersedes"] == [old]


RATE = "The public API is rate limited to 120 requests per minute per API key, enforced with slowapi."


@pytest.mark.parametrize("text", ["公开 API 的限流从每分钟 120 次调整为每分钟 300 次。", "超时时间提高到 60 秒。", "副本数降到 2 个。"])
def test_a_chinese_value_set_to_another_announces_a_change(text):
    assert revision_marker(text) == "strong"


@pytest.mark.model
@pytest.mark.parametrize("newer", [
    "公开 API 的限流从每个 API key 每分钟 120 次调整为每分钟 300 次，仍然用 slowapi 实现。",
    "公开 API 的限流从每个 API key 每分钟 120 次提高到 300 次。",      # fu31 N2: without "slowapi" too
    "公开 API 的限流调整为每个 API key 每分钟 300 次。",
])
def test_a_chinese_revision_of_an_english_fact_supersedes_it_with_the_real_model(db_path, config, onnx_embedder,
                                                                                newer):
    """The words of a Chinese text are read in English too (限流 → rate, limit) against an English memory."""
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        old = s.remember(RATE, kind="fact")["id"]
        s.remember("Staging lives at staging.example.dev and is redeployed on every push to main.", kind="note")
        assert s.remember(newer, kind="fact")["supersedes"] == [old]


def test_history_of_a_superseded_memory_names_its_successor_as_get_does(store):
    """fu29 D7: `history` called the superseded memory plainly "current" while `get` said "superseded by M…"."""
    from supermemory.render import render_history
    old = store.remember("Staging deploys run from the Jenkins deploy-staging job every night.", kind="decision")["id"]
    new = store.remember("Staging deploys no longer run from the Jenkins deploy-staging job; they run from GitHub "
                         "Actions.", kind="decision")["id"]
    assert store.get(old)["memories"][0]["superseded_by"] == new
    history = store.history(old)
    assert history["superseded_by"] == new
    text = render_history(history)
    assert text.splitlines()[0] == f"History of {old} (latest version {old}, superseded by {new}):"
    assert f"(latest, superseded by {new}" in text       # its chain's latest, no current fact (fu36 D9)
    assert "superseded_by" not in store.history(new)
    store.unlink(new, old, relation="supersedes")
    assert "superseded_by" not in store.history(old)


@pytest.mark.parametrize("text, status", [
    ("Done: PDF rendering was migrated from wkhtmltopdf to WeasyPrint.", "done"),
    ("DONE - rotate the webhook secret", "done"),
    ("已完成：给 worker 增加 Prometheus 指标", "done"),
    ("Dropped: the GraphQL gateway spike", "dropped"),
    ("Add Idempotency-Key support to POST /invoices.", "open"),
    ("Make sure the done callback fires once.", "open"),
])
def test_a_task_headed_done_or_dropped_is_stored_so(store, text, status):
    """fu29 D6: "Done: …" was filed as an open task and listed among the open ones."""
    mid = store.remember(text, kind="task")["id"]
    assert store.get(mid)["memories"][0]["status"] == status


def test_remember_takes_a_task_status_and_refuses_one_for_another_kind(store):
    from supermemory.errors import InvalidInputError
    mid = store.remember("Write the runbook for rotating secrets.", kind="task", status="done")["id"]
    assert store.get(mid)["memories"][0]["status"] == "done"
    assert [m["id"] for m in store.list(status="open")["items"]] == []
    with pytest.raises(InvalidInputError, match="status applies to tasks"):
        store.remember("Use ruff.", kind="preference", status="done")


def test_cli_and_mcp_remember_take_a_status(tmp_path, monkeypatch, capsys):
    from supermemory.cli import build_parser
    args = build_parser().parse_args(["remember", "--status", "dropped", "-k", "task", "x"])
    assert args.status == "dropped"
    from supermemory.mcp.tools import TOOLS
    schema = next(t for t in TOOLS if t.name == "memory_remember").input_schema
    assert schema["properties"]["status"]["enum"] == ["open", "done", "dropped"]


def test_the_briefing_lists_a_recent_change_before_other_recent_memories(store):
    """fu29 D8: with the budget spent on decisions and preferences, the "Recent changes" section's one line went to
    a task marked done, and the value changes made that session appeared nowhere."""
    from supermemory.render_briefing import briefing_view
    old = store.remember("Staging deploys run from the Jenkins deploy-staging job every night.", kind="fact")["id"]
    new = store.remember("Staging deploys no longer run from the Jenkins deploy-staging job; they run from GitHub "
                         "Actions.", kind="fact")["id"]
    task = store.remember("Rotate the webhook signing secret.", kind="task")["id"]
    for i in range(4):
        store.remember(f"Note {i}: the invoice numbering scheme number {i} lives in billing/sequence_{i}.py.",
                       kind="note")
    store.update(task, status="done")      # the newest change of all
    sections = store.briefing()["sections"]
    assert sections["recent"][0]["id"] == new and sections["recent"][0]["was"]
    assert old not in [item["id"] for items in sections.values() for item in items]
    view = briefing_view(store.briefing(max_tokens=120))
    assert new in view["items"]["recent"]


@pytest.mark.model
@pytest.mark.parametrize("older, newer, stamp, name", [
    (JENKINS, "We moved CI off Jenkins and onto GitHub Actions.", "WORDINGS_STAMP_KEY",
     "supersedes links of newer change wordings"),
    # fu36 D1: a change of what the older memory is about
    ("Audio goes through the kira crate; we dropped rodio because it had no tweening or clock-synced playback.",
     "We switched the audio backend from kira to FMOD Studio because the sound designers need live mixing.",
     "SUBJECT_STAMP_KEY", "supersedes links of changed subjects"),
])
def test_a_store_written_before_the_new_wordings_gets_their_links_once_by_maintenance(
        db_path, config, onnx_embedder, older, newer, stamp, name):
    """Existing stores get the links of a session's new wordings from a one-time pass of their own."""
    from supermemory.store import lifecycle, supersession
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        old = s.remember(older, kind="decision")["id"]
        new = s.remember(newer, kind="decision")["id"]
        with s.context.txn():     # as an older version left it: no link, its own passes done, this one not
            s.conn.execute("DELETE FROM links")
            s.conn.execute("DELETE FROM meta WHERE key = ?", (getattr(supersession, stamp),))
        assert lifecycle.pending_passes(s.context) == [name]
        s.maintenance()
        assert s.get(old)["memories"][0]["superseded_by"] == new
        assert lifecycle.pending_passes(s.context) == []


def test_an_update_whose_text_is_headed_done_closes_the_task_as_remember_would(store):
    """fu31 N6: `update --content "Done: …"` kept the task open, though `remember` of that text stores it done."""
    mid = store.remember("Rotate the webhook signing secret.", kind="task")["id"]
    new = store.update(mid, content="Done: rotated the webhook signing secret on Dec 4.")["id"]
    assert store.get(new)["memories"][0]["status"] == "done"
    again = store.update(new, content="Rotate the webhook signing secret again in March.")["id"]
    assert store.get(again)["memories"][0]["status"] == "done"     # no heading: the status stays what it was


@pytest.mark.parametrize("text, values", [
    ("The nightly export now runs at 04:30 UTC instead of 03:00 UTC.", [("03:00 UTC", "04:30 UTC")]),
    ("Standup moved from 09:30 to 10:00.", [("09:30", "10:00")]),
])
def test_a_time_keeps_its_colon_in_a_change(text, values):
    assert change_values(text) == values


@pytest.mark.model
@pytest.mark.parametrize("older, newer", [
    ("The nightly export runs at 03:00 UTC.", "The nightly export now runs at 04:30 UTC instead of 03:00 UTC."),
    ("Calls from the worker to PayFlux use an HTTP timeout of 30s.",
     "The worker's HTTP timeout for PayFlux calls is now 60 seconds instead of 30 seconds."),
    ("Calls from the worker to PayFlux use an HTTP timeout of 30s.", "worker 调用 PayFlux 的 HTTP 超时从 30 秒改为 60 秒。"),
    ("Calls from the worker to PayFlux use an HTTP timeout of 30 seconds.",
     "The worker's HTTP timeout for PayFlux calls is now 60s instead of 30s."),
])
def test_a_change_naming_the_old_value_with_its_unit_spelt_otherwise_supersedes_with_the_real_model(
        db_path, config, onnx_embedder, older, newer):
    """fu31 N1: "30s" against "30 seconds" / 30 秒, and a time whose colon cut the side in two, linked nothing."""
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        old = s.remember(older, kind="fact")["id"]
        s.remember("The API listens on port 8080 locally.", kind="fact")
        assert s.remember(newer, kind="fact")["supersedes"] == [old]
