"""A broad question of time alone ("what changed last month", "what did I work on last month") lists the session
digests of the period first, the other kinds after them, instead of saying that no memory matches.

Also what a fresh-user run (session 19) found unanswered: the sessions themselves ("what did we do last session",
上次会话做了什么) as a kind the intent reader names, the Chinese "what changed this week" answered as the English one,
a note when a kind word is set aside, and "what's next" read as open work rather than as part of an identifier."""
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


def remember_session(s: MemoryStore, session_id: str = "s1",
                     requests: tuple = ("refactor the billing exporter", "add retries to the webhook sender")) -> str:
    """A session memory as capture writes it (the digest's title and body); returns its id."""
    digest = SessionDigest(platform="claude-code", session_id=session_id, cwd="/work/proj")
    digest.requests = list(requests)
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


FRIDAY = dt.datetime(2026, 12, 4, 16, 0).timestamp()     # a Friday afternoon, local time
HOUR = 3600.0


@pytest.fixture
def worked_today(store_at):
    """Two sessions of this morning, then nine memories of other kinds written after them (more than a page of 8)."""
    s, now = store_at
    now[0] = FRIDAY - 8 * HOUR
    older = remember_session(s, "s1", ["fix the VAT rate of the Austrian invoices"])
    now[0] = FRIDAY - 7 * HOUR
    newer = remember_session(s, "s2", ["rename the CSV exporter package"])
    others = []
    for i in range(9):
        now[0] = FRIDAY - (6 - i * 0.5) * HOUR
        kind = ("decision", "gotcha", "note")[i % 3]
        others.append(s.remember(f"Ledger fact number {i}: the exporter writes file {i} of the batch.",
                                 kind=kind)["id"])
    now[0] = FRIDAY - 30 * 86400
    task = s.remember("Add rate limiting to the invoice send endpoint.", kind="task", status="open")["id"]
    now[0] = FRIDAY
    return s, {"older": older, "newer": newer, "others": others, "task": task}


@pytest.mark.parametrize("query", ["what did we do last session", "last session", "summary of the previous session",
                                   "show me the previous sessions", "what happened in the last few sessions",
                                   "上次会话做了什么", "之前的会话"])
def test_a_question_about_the_last_sessions_lists_the_session_digests_newest_first(worked_today, query):
    s, ids = worked_today
    result = s.recall(query)
    assert [r["id"] for r in result["results"]] == [ids["newer"], ids["older"]], query
    assert result["note"].startswith("broad query: kind=session")


def test_the_sessions_are_a_kind_the_intent_reader_names_alone_only():
    found = intent.parse("what did we do last session", FRIDAY)
    assert found.only and found.kinds == ("session",) and found.status is None
    assert not intent.parse("session cookie expiry in the auth service", FRIDAY).active   # a topic, not the digests
    assert not intent.parse("last session timeout of the api gateway", FRIDAY).only


@pytest.mark.parametrize("query", ["what did we work on today", "what did we change this week", "今天做了什么"])
def test_what_was_worked_on_in_a_period_lists_its_session_digests_first(worked_today, query):
    """The digests are the record of the period's work: listed after the other kinds, a busy day's facts cut them."""
    s, ids = worked_today
    result = s.recall(query)
    got = [r["id"] for r in result["results"]]
    assert got[:2] == [ids["newer"], ids["older"]] and len(got) == 8, query
    assert got[2:] == ids["others"][::-1][:6]              # the other kinds fill the rest, newest first
    assert "sessions first" in result["note"]


@pytest.mark.parametrize("query", ["本周改了什么", "这周改了什么", "这周我们改了哪些东西？", "这周修改了哪些东西"])
def test_the_chinese_question_of_what_changed_this_week_answers_as_the_english_one(worked_today, query):
    s, _ = worked_today
    english = [r["id"] for r in s.recall("what did we change this week")["results"]]
    result = s.recall(query)
    assert english and [r["id"] for r in result["results"]] == english, query
    assert result["note"].startswith("broad query: all kinds") and " since=" in result["note"]


@pytest.mark.parametrize("query", ["what's next", "what's next?", "what should we do next", "下一步做什么",
                                   "接下来要做什么"])
def test_what_is_next_lists_the_open_tasks_not_a_memory_naming_next_js(store_at, query):
    s, now = store_at
    s.remember("Frontend is SvelteKit with adapter-node; we chose it over Next.js for smaller bundles.",
               kind="decision")
    task = s.remember("Add rate limiting to the invoice send endpoint.", kind="task", status="open")["id"]
    s.remember("Upgrade Postgres to 16.", kind="task", status="done")
    result = s.recall(query)
    assert [r["id"] for r in result["results"]] == [task], query
    assert result["note"].startswith("broad query: kind=task status=open")


def test_next_beside_a_topic_is_still_a_topic():
    assert not intent.parse("what's next for the Next.js build", FRIDAY).only
    assert not intent.parse("next release date of the mobile app", FRIDAY).only


@pytest.mark.model
def test_an_answer_of_another_kind_says_the_kind_word_was_set_aside(db_path, config, onnx_embedder):
    """Found by a fresh-user run: "关于数据库的决定" was answered by two gotchas and said nothing of the decision filter
    it had dropped."""
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        fridays = s.remember("Never run database migrations on Fridays.", kind="preference")["id"]
        s.remember("We use MongoDB 7 for the catalog service because documents are schemaless.", kind="decision")
        s.remember("Package manager for the web app is npm.", kind="decision")
        result = s.recall("decisions about migrations on Fridays")
        assert result["results"][0]["id"] == fridays
        assert result["note"].startswith("kind=decision set aside")
        applied = s.recall("decisions about the catalog database")          # the filter applied: its own note
        assert applied["note"] == "intent filter: kind=decision"
