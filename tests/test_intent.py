"""Tests for retrieval/intent.py (kind / status / time words in a query) and the broad answers of recall."""
from __future__ import annotations

import copy
import datetime as dt

import pytest

from supermemory.config import Config
from supermemory.core import MemoryStore
from supermemory.retrieval import intent
from supermemory.settings import DEFAULTS, validate_settings
from supermemory.text import lexicons
from tests.conftest import FakeEmbedder

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


# Everyday wordings of the same questions (written for this test, not taken from any bench file): each names only a
# kind, a task status, a period or an overview, so each is answered by a listing.
@pytest.mark.parametrize("query, kinds, status, recent", [
    ("what do I still need to do", ("task",), "open", False),
    ("things we have not done yet", ("task",), "open", False),
    ("what's in progress right now", ("task",), "open", False),
    ("anything left on my plate", ("task",), "open", False),
    ("what did we agree on", ("decision",), None, False),
    ("which choices have we made so far", ("decision",), None, False),
    ("what conclusions did we reach", ("decision",), None, False),
    ("known issues or traps", ("gotcha",), None, False),
    ("common mistakes to avoid", ("gotcha",), None, False),
    ("lessons learned so far", ("gotcha",), None, False),
    ("anything important I should remember", ("gotcha", "decision", "preference"), None, False),
    ("what changed in the last few days", (), None, True),
    ("any updates", (), None, True),
    ("catch me up", (), None, True),
    ("where did we leave off", (), None, True),
    ("give me a summary of the project", (), None, True),
    ("bring me up to speed", (), None, True),
    ("有什么要做的", ("task",), "open", False),
    ("之前定了什么", ("decision",), None, False),
    ("需要避免哪些问题", ("gotcha",), None, False),
    ("进度怎么样", (), None, True),
    ("总结一下", (), None, True),
])
def test_everyday_wordings_of_broad_questions_are_listed(query, kinds, status, recent):
    got = intent.parse(query, NOW)
    assert got.only and got.active
    assert (got.kinds, got.status, got.soft_since) == (kinds, status, recent)


def test_a_possessive_keeps_its_time_word():
    got = intent.parse("show last week's memories", NOW)
    assert got.only and (got.since, got.until) == (local(2026, 5, 4), local(2026, 5, 11))
    assert intent.parse("this week’s decisions", NOW).kinds == ("decision",)


@pytest.mark.parametrize("query", [
    "issues with the redis connection pool",      # "issues", "status", "progress" beside a topic name no facet
    "what is the status of the billing migration",
    "progress bar flickers in the CLI",
    "数据库连接问题怎么排查",
    "is there a convention for that",             # vague, not broad: stays with the text match
])
def test_broad_words_beside_a_topic_do_not_make_a_listing(query):
    assert not intent.parse(query, NOW).only


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
        assert set(row.kinds) <= {"task", "decision", "gotcha", "preference", "note", "fact", "session"}


@pytest.mark.parametrize("query, topic", [
    ("gotchas about memcached", "about memcached"),
    ("decisions about the database this week", "about the database"),
    ("数据库相关的决定", "数据库相关的"),
])
def test_the_topic_is_the_query_without_the_words_a_filter_stands_for(query, topic):
    assert intent.parse(query, NOW).topic == topic


def test_describe_names_the_applied_facets():
    got = intent.parse("open tasks this week", NOW)
    assert got.describe().startswith("kind=task status=open since=")


# --- recall --------------------------------------------------------------------------------------


@pytest.fixture
def scenario(db_path, config):
    """The issue's store: a TODO task, a decision, a gotcha, a preference and a notes memory,
    written a day apart (oldest first), plus a done task and another project's task."""
    now = [NOW - 12 * DAY]
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj", clock=lambda: now[0])
    ids = {}
    for name, kind, text in (
            ("done", "task", "TODO: rename the settings module (finished last sprint)."),
            ("decision", "decision", "We use Postgres 15 for the ledger service; no MySQL."),
            ("gotcha", "gotcha", "The staging database is reset every night at 03:00."),
            ("preference", "preference", "The user wants short answers with the conclusion first."),
            ("notes", "note", "Meeting notes: the billing export moves to a background job."),
            ("task", "task", "TODO: add retries to the webhook sender.")):
        now[0] += DAY
        ids[name] = s.remember(text, kind=kind, status="done" if name == "done" else None)["id"]
    s.remember("TODO: translate the landing page.", kind="task", namespace="other", create_namespace=True)
    now[0] = NOW
    yield s, ids
    s.close()


def result_ids(result) -> list[str]:
    return [r["id"] for r in result["results"]]


@pytest.mark.parametrize("query, expected", [
    ("what changed recently", {"decision", "gotcha", "preference", "notes", "task"}),
    ("show me the notes", {"notes"}),
    ("anything I should know before I start", {"decision", "gotcha", "preference"}),
    ("最近有什么变化", {"decision", "gotcha", "preference", "notes", "task"}),
])
def test_broad_queries_return_the_matching_memories(scenario, query, expected):
    s, ids = scenario
    result = s.recall(query)
    assert expected <= {name for name, mid in ids.items() if mid in result_ids(result)}
    assert result["note"].startswith("broad query:")


def test_the_todo_list_question_returns_the_open_task_first(scenario):
    s, ids = scenario
    result = s.recall("what's left on my todo list")
    assert result_ids(result) == [ids["task"]]          # not the done one, not another namespace's
    assert result["note"] == "broad query: kind=task status=open, newest first"
    assert all(r["relevance"] is None and r["score"] is None for r in result["results"])


def test_a_listing_is_newest_first_and_respects_limit_and_budget(scenario):
    s, ids = scenario
    result = s.recall("what changed recently", limit=3)
    assert result_ids(result) == [ids["task"], ids["notes"], ids["preference"]]
    assert len(s.recall("what changed recently", max_tokens=1)["results"]) == 1


def test_a_broad_query_respects_namespaces(scenario):
    s, ids = scenario
    assert ids["task"] not in result_ids(s.recall("open tasks", namespace="other"))
    assert len(s.recall("open tasks", namespace="*")["results"]) == 2


def test_explain_shows_the_intent_and_the_reason_of_each_listed_memory(scenario):
    s, _ = scenario
    result = s.recall("show me the notes", explain=True)
    assert result["intent"]["kinds"] == ["note"] and result["intent"]["applied"] == "listing"
    assert result["results"][0]["reason"] == "broad query: kind=note"


def test_time_words_filter_by_the_store_clock(scenario):
    s, ids = scenario
    # The memories were written 11..6 days before NOW (Wednesday 05-13): none of them today.
    assert s.recall("what changed today")["results"] == []
    assert "no memory matches" in s.recall("what changed today")["note"]
    last_week = {name for name, mid in ids.items() if mid in result_ids(s.recall("what changed last week"))}
    assert last_week == {"gotcha", "preference", "notes", "task"}   # 05-04 .. 05-07 (the week of Mon 05-04)


def test_recently_widens_to_the_newest_when_nothing_is_recent(db_path, config):
    now = [NOW - 90 * DAY]
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", clock=lambda: now[0]) as s:
        old = s.remember("The deploy needs a manual approval.", kind="decision")["id"]
        now[0] = NOW
        result = s.recall("latest decisions")
    assert result_ids(result) == [old] and "nothing recent" in result["note"]


def test_a_broad_query_over_matching_memories_is_never_empty(scenario):
    s, _ = scenario
    for query in ("what's still open?", "gotchas", "what did we decide", "my preferences", "待办事项",
                  "有哪些决定", "any notes", "what's new"):
        assert s.recall(query)["results"], query


def test_a_topic_with_intent_words_filters_by_kind(scenario):
    s, ids = scenario
    result = s.recall("decisions about postgres", explain=True)
    assert result_ids(result) == [ids["decision"]] and result["intent"]["applied"] == "filter"
    assert result["note"] == "intent filter: kind=decision"


def test_the_filtered_recall_keeps_the_nothing_relevant_gate(scenario):
    # Found by a fresh-user run: "decisions about the sentry setup" in a store that never mentions sentry listed
    # its unrelated decisions (relevance 0.018 and 0.004), and "... this week" every memory of the week.
    s, ids = scenario
    for query in ("decisions about the sentry setup", "gotchas about the terraform state",
                  "who is the on-call engineer this week"):
        result = s.recall(query, explain=True)
        assert result["results"] == [] and result["intent"]["applied"].startswith("none"), query
    result = s.recall("decisions about postgres", explain=True)
    assert result_ids(result) == [ids["decision"]] and result["query"] == "decisions about postgres"
    s.config.settings["ranking"]["relevance_threshold"] = 1.0     # nothing is that certain: nothing comes back
    assert s.recall("decisions about postgres")["results"] == []
    assert result_ids(s.recall("decisions about postgres", relevance_threshold=0)) == [ids["decision"]]
    assert result_ids(s.recall("decisions about postgres", gates=False)) == [ids["decision"]]


def test_a_topic_weaker_than_its_question_is_listed_when_the_question_has_an_answer(scenario, monkeypatch):
    # "decisions about the database": the topic alone ("database", one word) reads under the threshold among the
    # decisions, the whole question passes it; the filter then lists the decisions by topic.
    from supermemory.retrieval import broad

    s, ids = scenario
    calls = []

    def answer(*args, plain, **kwargs):
        def watched(query=None, **overrides):
            calls.append((query, overrides.get("relevance_threshold", "default")))
            if query is None:                                # the whole question: this decision answers it
                return {"results": [{"id": ids["decision"], "relevance": 0.9}]}
            if overrides.get("relevance_threshold") is None:
                return {"results": []}                       # the topic alone: under the threshold
            return plain(query, **overrides)
        return original(*args, plain=watched, **kwargs)

    original = broad.answer
    monkeypatch.setattr(broad, "answer", answer)
    result = s.recall("decisions about postgres", explain=True)
    assert result_ids(result) == [ids["decision"]] and result["intent"]["applied"] == "filter"
    assert [threshold for _, threshold in calls] == ["default", "default", 0]


def test_a_topic_whose_filtered_recall_is_empty_falls_back_to_plain_recall(scenario):
    s, ids = scenario
    plain = s.recall("staging database reset", intent=False)
    result = s.recall("decisions about the staging database reset", explain=True)
    assert ids["gotcha"] in result_ids(plain) and ids["gotcha"] in result_ids(result)
    assert result["intent"]["applied"].startswith("none")


def test_explicit_filters_switch_intent_off(scenario):
    s, ids = scenario
    result = s.recall("open tasks", kinds=["decision"])
    assert "broad query" not in (result.get("note") or "")


def test_the_off_switch_gives_plain_recall(scenario, db_path, tmp_path):
    s, _ = scenario
    assert "broad query" not in (s.recall("show me the notes", intent=False).get("note") or "")
    settings = copy.deepcopy(DEFAULTS)
    settings["recall"]["intent"] = False
    off = MemoryStore(db_path, config=Config(home=tmp_path / "smhome", settings=settings), embedder=FakeEmbedder(),
                      namespace="proj")
    try:
        assert "broad query" not in (off.recall("show me the notes").get("note") or "")
    finally:
        off.close()


def test_the_setting_is_validated():
    assert validate_settings({"recall": {"intent": "maybe"}})
    assert not validate_settings({"recall": {"intent": False}})


def test_on_call_is_a_topic_not_a_call_we_made(db_path, config):
    """"call" is a decision only in a query of intent words ("what calls did we make this week"); "who is on call
    this week?" asks about the rota (fresh-user run fu24, D2: it listed the week's decisions and not the rota)."""
    assert intent.parse("what calls did we make this week", NOW).kinds == ("decision",)
    rota = intent.parse("who is on call this week?", NOW)
    assert not rota.only and rota.kinds == () and "on call" in rota.topic
    now = [NOW]
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj", clock=lambda: now[0])
    s.remember("We decided to keep one shared Postgres cluster for both services", kind="decision")
    oncall = s.remember("On-call rotates weekly; this week it is Tomasz, escalate to Dana", kind="fact")["id"]
    hits = [h["id"] for h in s.recall("who is on call this week?", touch=False)["results"]]
    assert hits and hits[0] == oncall


@pytest.mark.parametrize("query, kinds", [
    ("有哪些坑需要注意", ("gotcha",)),                       # fu29 D5: 需要注意 added decisions and preferences
    ("需要注意什么", ("gotcha", "decision", "preference")),   # alone it still asks for all three
    ("any gotchas and decisions?", ("gotcha", "decision")),   # two narrow kinds add up
])
def test_a_phrase_of_several_kinds_gives_way_to_a_narrower_one_it_holds(query, kinds):
    assert intent.parse(query, 1_800_000_000).kinds == kinds


@pytest.mark.parametrize("query", ["what are the user's preferences?", "用户有哪些偏好"])
def test_the_user_an_agent_works_for_is_a_filler_of_broad_questions(query):
    """fu31 N5: "the user's" made the question a topic search, and a Chinese preference came back at 0.02."""
    got = intent.parse(query, NOW)
    assert got.kinds == ("preference",) and got.only


def test_user_as_a_topic_word_keeps_the_rest_of_the_question_a_topic():
    got = intent.parse("user login preferences page", NOW)
    assert not got.only and "login" in got.topic
