"""Fresh-user test fu20, D2 and D7–D9: a `supersedes` link that closes a cycle is refused and `health` reports one
already stored; failed queries are shown short and counted once; namespace arguments that are paths follow one
rule; small wording fixes (the `?;` of the create-namespace hint, `update` says what it wrote, unquoted recall
words, the scope `stats` counts, `get` of a found and a missing id)."""
from __future__ import annotations

import json

import pytest

from supermemory import cli
from supermemory.errors import InvalidInputError
from supermemory.render import render_health
from tests.test_mcp_server import call


# --- D2: supersedes cycles ---------------------------------------------------------------------------------------

def _logging_pair(store):
    old = store.remember("Logging uses logrus with the JSON formatter; every request logs request_id.", kind="fact")
    new = store.remember("We moved from logrus to log/slog (standard library) for structured logging.",
                         kind="decision")
    return old["id"], new["id"]


def test_a_supersedes_link_that_closes_a_cycle_is_refused_naming_the_link_and_how_to_reverse_it(store):
    old, new = _logging_pair(store)
    store.link(new, old, relation="supersedes")
    with pytest.raises(InvalidInputError) as caught:
        store.link(old, new, relation="supersedes")
    message = str(caught.value)
    assert f"{new} already supersedes {old}" in message and "cycle" in message
    assert f"supermemory unlink {new} {old} --relation supersedes" in message
    assert store.health()["supersedes_cycles"] == []           # nothing was written
    store.link(new, old, relation="supersedes", weight=0.5)     # the same direction again: fine (weight updated)
    store.link(old, new, relation="related")                    # another relation: no cycle


def test_a_longer_supersedes_cycle_is_refused_too_through_mcp(store):
    a = store.remember("Invoices are rendered to PDF with gofpdf.")["id"]
    b = store.remember("Integration tests share one Postgres container.")["id"]
    c = store.remember("State management uses Zustand in the dashboard.")["id"]
    store.link(c, b, relation="supersedes")
    store.link(b, a, relation="supersedes")
    answer = call(store, "memory_link", {"src": a, "dst": c, "relation": "supersedes"})["result"]
    assert answer["isError"] is True
    text = answer["content"][0]["text"]
    assert f"{c} already supersedes {a} (through {b})" in text and f"unlink {b} {a} --relation supersedes" in text


def test_health_reports_a_supersedes_cycle_already_in_the_store_and_how_to_break_it(store):
    old, new = _logging_pair(store)
    ids = [int(old[1:]), int(new[1:])]
    with store.context.txn():   # a store written before `link` refused cycles
        for src, dst in (ids, ids[::-1]):
            store.context.conn.execute("INSERT OR IGNORE INTO links(src, dst, relation, weight, created_at) "
                                       "VALUES (?, ?, 'supersedes', 1.0, 0)", (src, dst))
    health = store.health()
    assert health["clean"] is False
    assert [c["ids"] for c in health["supersedes_cycles"]] == [[old, new]]
    text = render_health(health)
    assert "supersedes cycles" in text and "needs attention" in text
    assert f"`supermemory unlink {old} {new} --relation supersedes`" in text
    assert f"`supermemory unlink {new} {old} --relation supersedes`" in text
    store.unlink(old, new, relation="supersedes")
    assert store.health()["supersedes_cycles"] == []


# --- D7: failed queries shown short, each once ---------------------------------------------------------------------

def test_stats_shows_a_long_failed_query_cut_short_and_once_with_how_many_times(store):
    from supermemory.render import render_stats

    store.remember("Invoices are rendered to PDF with gofpdf.")
    for _ in range(2):
        store.recall("x" * 9999)
    store.recall("zzqv nothing matches this")
    text = render_stats(store.stats())
    failed = [line for line in text.splitlines() if "no result:" in line]
    assert len(failed) == 2 and max(len(line) for line in failed) < 200
    assert failed[1].strip() == "no result: " + "x" * 120 + "…(9,999 characters)  (2×)"
    assert failed[0].strip() == "no result: zzqv nothing matches this"


def test_the_no_result_answer_does_not_echo_a_long_query_whole(store):
    store.remember("Invoices are rendered to PDF with gofpdf.")
    answer = call(store, "memory_recall", {"query": "x" * 9999})["result"]
    text = answer["content"][0]["text"]
    assert "No relevant memories for '" + "x" * 120 + "…(9,999 characters)'." in text and len(text) < 1000


def test_the_ui_health_page_gets_the_failed_queries_short_and_counted(store):
    from supermemory.ui import api

    store.remember("Invoices are rendered to PDF with gofpdf.")
    for _ in range(3):
        store.recall("y" * 5000)
    failed = api.health(store, {})["recall"]["recent_empty_queries"]
    assert failed == [{"query": "y" * 120 + "…(5,000 characters)", "times": 3}]
