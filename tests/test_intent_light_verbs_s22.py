"""Tests for the light verbs of retrieval/intent.py: "make" in "what decisions did we make this week" asks for the kind
(a fresh-user run, fu22 D2: it matched `make deploy-prod` in one decision), while a verb with an object of its own
("how we make releases") stays a topic."""
from __future__ import annotations

import datetime as dt

import pytest

from supermemory.retrieval import intent
from supermemory.text import lexicons

NOW = dt.datetime(2026, 12, 4, 12, 0).timestamp()   # a Friday noon, local time
KINDS = {"task", "decision", "gotcha", "preference", "note", "fact", "session"}


@pytest.mark.parametrize("query, kinds", [
    ("what decisions did we make this week", ("decision",)),
    ("what decisions did we take this week", ("decision",)),
    ("did we make any decisions this week", ("decision",)),
    ("what decisions were taken last week", ("decision",)),
    ("what decisions did we come to", ("decision",)),
    ("did we come to a decision", ("decision",)),
    ("做出了哪些决定", ("decision",)),
    ("what tasks did I add yesterday", ("task",)),
    ("which tasks did we create this week", ("task",)),
    ("what tasks have I added", ("task",)),
    ("这周加了哪些任务", ("task",)),
    ("添加了哪些任务", ("task",)),
    ("what notes did I write today", ("note",)),
    ("notes I wrote", ("note",)),
    ("what notes have we taken", ("note",)),
    ("写了哪些笔记", ("note",)),
    ("what preferences did I set", ("preference",)),
    ("which preferences have I stated", ("preference",)),
    ("设置了哪些偏好", ("preference",)),
    ("gotchas we ran into last week", ("gotcha",)),
    ("遇到了哪些坑", ("gotcha",)),
    ("踩了哪些坑", ("gotcha",)),
])
def test_a_light_verb_of_the_kind_word_leaves_the_question_pure(query, kinds):
    got = intent.parse(query, NOW)
    assert (got.kinds, got.only) == (kinds, True)


@pytest.mark.parametrize("query, topic", [
    ("what decisions did we make about the cache layer", "what did we about the cache layer"),
    ("which open tasks did we add for the billing service", "which did we for the billing service"),
    ("关于缓存做了哪些决定", "关于缓存 哪些"),
])
def test_a_light_verb_beside_a_topic_is_taken_out_of_the_topic(query, topic):
    got = intent.parse(query, NOW)
    assert not got.only and got.topic == topic


@pytest.mark.parametrize("governed, own_object, verb, topic", [
    # The same verb as the verb of the kind word, and with an object of its own (a topic, kept; tasks and notes name
    # their kind only in a question of intent words alone, so beside a topic there is no filter and no topic).
    ("what decisions did we make", "decisions about how we make releases", "make", "about how we make releases"),
    ("what decisions did we make", "decisions that make the build slow", "make", "that make the build slow"),
    ("what tasks did I add", "tasks to add retries to the webhook sender", "add", ""),
    ("what notes did I write", "notes on how to write migrations", "write", ""),
    ("这周加了哪些任务", "这周加了缓存的任务", "加了", "加了缓存的任务"),
])
def test_a_light_verb_with_an_object_of_its_own_stays_a_topic(governed, own_object, verb, topic):
    assert intent.parse(governed, NOW).only
    got = intent.parse(own_object, NOW)
    assert not got.only and verb not in got.words and got.topic == topic


@pytest.mark.parametrize("query", [
    "how do we make the docker image smaller",   # no kind word at all: no intent
    "add pagination to the invoices endpoint",
    "we took the cache out of the request path",
])
def test_a_light_verb_without_a_kind_word_is_plain_text(query):
    assert intent.parse("what decisions did we take", NOW).only     # the same verbs govern a kind word
    got = intent.parse(query, NOW)
    assert not got.active and not got.only and got.words == ()


def test_a_light_verb_without_a_kind_word_keeps_a_period_question_topical():
    assert intent.parse("what decisions did we make this week", NOW).only
    got = intent.parse("what did we make this week", NOW)
    assert not got.only and got.topic == "what did we make" and got.kinds == ()


def test_light_verb_rows_name_known_kinds_and_no_facet_of_their_own():
    verbs = [row for row in intent.entries() if row.light]
    assert {"make", "take", "taken", "reach", "come to", "add", "wrote", "set", "hit", "run into", "加了"} <= {
        row.phrase for row in verbs}
    for row in verbs:
        assert set(row.light) <= KINDS and not (row.kinds or row.status or row.time)
    assert all(row.light for row in intent.entries() if row.verb)


def test_a_light_verb_row_that_names_a_facet_is_refused(monkeypatch):
    intent.entries.cache_clear()
    monkeypatch.setattr(lexicons, "table", lambda name: (("make", "light:decision kind:task", "verb"),))
    try:
        with pytest.raises(ValueError, match="light verb"):
            intent.entries()
    finally:
        intent.entries.cache_clear()


# --- recall --------------------------------------------------------------------------------------


def test_what_decisions_did_we_make_lists_the_decisions_not_a_memory_mentioning_make(store):
    decisions = [store.remember(text, kind="decision")["id"] for text in (
        "Deploys go through staging first, then `make deploy-prod` ships them to production.",
        "Background jobs moved from Celery to RQ.",
        "API responses use snake_case keys everywhere.",
        "Feature flags live in the database, not LaunchDarkly.")]
    note = store.remember("Run `make lint` and `make test` before every push.", kind="note")["id"]
    for query in ("what decisions did we make this week", "what decisions did we take this week"):
        result = store.recall(query)
        ids = [r["id"] for r in result["results"]]
        assert set(ids) == set(decisions) and note not in ids, query
        assert result["note"].startswith("broad query:"), query
    assert decisions[0] in [r["id"] for r in store.recall("how do we make deploy-prod")["results"]]
