"""A broad question of time alone ("what changed last month", "what did I work on last month") lists the session
digests of the period first, the other kinds after them, instead of saying that no memory matches."""
from __future__ import annotations

import datetime as dt

import pytest

from supermemory.core import MemoryStore
from supermemory.render import render_recall
from supermemory.retrieval import intent
from supermemory.transcripts.digest import SessionDigest, render_digest
from tests.conftest import FakeEmbedder

NOW = dt.datetime(2026, 12, 3, 12, 0).timestamp()


def local(*args) -> float:
    return dt.datetime(*args).timestamp()


@pytest.fixture
def store_at(db_path, config):
    now = [NOW]
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj", clock=lambda: now[0])
    yield s, now
    s.close()


def remember_session(s: MemoryStore) -> str:
    """A session memory as capture writes it (the digest's title and body); returns its id."""
    digest = SessionDigest(platform="claude-code", session_id="s1", cwd="/work/proj")
    digest.requests = ["refactor the billing exporter", "add retries to the webhook sender"]
    title, body = render_digest(digest)
    return s.remember(body, title=title, kind="session")["id"]


@pytest.mark.parametrize("query", ["what changed last month", "what did I work on last month", "last month",
                                   "上个月做了什么", "上个月干了什么"])
def test_a_question_of_time_alone_lists_the_session_of_that_period(store_at, query):
    s, now = store_at
    now[0] = local(2026, 11, 20, 15)
    session = remember_session(s)
    now[0] = NOW
    result = s.recall(query)
    assert [r["id"] for r in result["results"]] == [session]
    assert "no memory matches" not in result["note"] and "sessions first" in result["note"]
    text = render_recall(result)
    assert f"[{session} session]" in text and "refactor the billing exporter" in text   # its requests, not its header


def test_sessions_come_before_the_other_kinds_which_fill_the_room_they_leave(store_at):
    s, now = store_at
    now[0] = local(2026, 11, 10, 9)
    session = remember_session(s)                                                          # older than the decision
    now[0] = local(2026, 11, 25, 9)
    decision = s.remember("The ledger service uses Postgres 15.", kind="decision")["id"]
    now[0] = NOW
    assert [r["id"] for r in s.recall("what changed last month")["results"]] == [session, decision]
    assert [r["id"] for r in s.recall("what changed last month", limit=1)["results"]] == [session]


def test_a_question_naming_a_kind_or_status_lists_no_sessions(store_at):
    s, now = store_at
    now[0] = local(2026, 11, 20, 15)
    remember_session(s)
    now[0] = NOW
    for query in ("decisions last month", "open tasks last month"):
        result = s.recall(query)
        assert result["results"] == [] and "no memory matches" in result["note"]
        assert "sessions" not in result["note"]


def test_an_empty_period_still_says_no_memory_matches(store_at):
    s, now = store_at
    now[0] = local(2026, 10, 5, 9)
    remember_session(s)
    now[0] = NOW
    assert "no memory matches" in s.recall("what did I work on last month")["note"]


@pytest.mark.parametrize("query", ["what did I work on last month", "what have I been working on this week",
                                   "上个月做过什么", "本周的工作"])
def test_asking_what_was_worked_on_in_a_period_is_a_question_of_time_alone(query):
    found = intent.parse(query, NOW)
    assert found.only and not found.kinds and found.since is not None


def test_work_beside_a_topic_is_still_a_topic():
    assert not intent.parse("work on the billing exporter last month", NOW).only
