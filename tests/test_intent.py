"""Tests for retrieval/intent.py (kind / status / time words in a query) and the broad answers of recall."""
from __future__ import annotations

import datetime as dt

import pytest

from supermemory.retrieval import intent
from supermemory.text import lexicons

# A Wednesday noon, local time (periods are local, as `timeparse` reads "today").
NOW = dt.datetime(2026, 5, 13, 12, 0).timestamp()
DAY = 86400


def local(*args) -> float:
    return dt.datetime(*args).timestamp()


@pytest.mark.parametrize("query, kinds, status, only", [
    ("what's on my todo list", ("task",), "open", True),
    ("open tasks", ("task",), "open", True),
    ("what is still open?", ("task",), "open", True),
    ("which tasks are finished", ("task",), "done", True),
    ("anything we abandoned", ("task",), "dropped", True),
    ("what did we decide", ("decision",), None, True),
    ("past decisions", ("decision",), None, True),
    ("known pitfalls", ("gotcha",), None, True),
    ("list the gotchas", ("gotcha",), None, True),
    ("my preferences", ("preference",), None, True),
    ("show me the notes", ("note",), None, True),
    ("what should I keep in mind", ("gotcha", "decision", "preference"), None, True),
    ("decisions about the database", ("decision",), None, False),
    ("todo items for the billing service", ("task",), "open", False),
    ("待办", ("task",), "open", True),
    ("还有哪些任务没做完", ("task",), "open", True),
    ("已经完成的任务", ("task",), "done", True),
    ("我们定下了哪些决策", ("decision",), None, True),
    ("有哪些坑", ("gotcha",), None, True),
    ("我的偏好", ("preference",), None, True),
    ("看看笔记", ("note",), None, True),
    ("数据库相关的决定", ("decision",), None, False),
])
def test_parse_reads_kind_and_status_words_in_english_and_chinese(query, kinds, status, only):
    got = intent.parse(query, NOW)
    assert (got.kinds, got.status, got.only) == (kinds, status, only)


@pytest.mark.parametrize("query, since, until, soft", [
    ("what happened today", local(2026, 5, 13), None, False),
    ("what changed yesterday", local(2026, 5, 12), local(2026, 5, 13), False),
    ("decisions this week", local(2026, 5, 11), None, False),
    ("decisions last week", local(2026, 5, 4), local(2026, 5, 11), False),
    ("notes from this month", local(2026, 5, 1), None, False),
    ("what did we decide last month", local(2026, 4, 1), local(2026, 5, 1), False),
    ("what changed recently", NOW - intent.RECENT_DAYS * DAY, None, True),
    ("今天", local(2026, 5, 13), None, False),
    ("本周的决策", local(2026, 5, 11), None, False),
    ("上周", local(2026, 5, 4), local(2026, 5, 11), False),
    ("上个月的决定", local(2026, 4, 1), local(2026, 5, 1), False),
    ("最近有什么变化", NOW - intent.RECENT_DAYS * DAY, None, True),
])
def test_parse_turns_time_words_into_a_period_relative_to_now(query, since, until, soft):
    got = intent.parse(query, NOW)
    assert (got.since, got.until, got.soft_since) == (since, until, soft)
    assert got.active


@pytest.mark.parametrize("query", [
    "how do I open the trace viewer",          # "open" beside a topic is not a task status
    "is the retry task idempotent",            # "task" beside a topic is not the task kind
    "对账任务失败会重试几次",
    "should a new endpoint still use offsets",  # "new", "still": no period without a kind
    "how do I configure the reverse proxy",
    "",
])
def test_parse_finds_no_intent_in_topical_questions(query):
    got = intent.parse(query, NOW)
    assert not got.active and not got.only


def test_every_lexicon_row_parses_and_has_a_provenance():
    assert lexicons.provenance("intent_words")
    rows = intent.entries()
    assert len(rows) == len(lexicons.table("intent_words"))
    for row in rows:
        assert set(row.kinds) <= {"task", "decision", "gotcha", "preference", "note", "fact"}


def test_describe_names_the_applied_facets():
    got = intent.parse("open tasks this week", NOW)
    assert got.describe().startswith("kind=task status=open since=")
