"""Broad questions read by their meaning (retrieval.broad.by_meaning, intent.from_meaning): a question whose words name
no kind or task status, and whose text match finds nothing, lists the memories of the facet its vector sits nearest."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.retrieval import intent
from supermemory.text import lexicons


def near(**cosines) -> dict:
    names = {"open": "kind:task status:open", "done": "kind:task status:done", "decision": "kind:decision",
             "gotcha": "kind:gotcha", "overview": "overview"}
    return {names[k]: v for k, v in cosines.items()}


def test_the_nearest_facet_decides_when_it_is_near_enough_and_clearly_nearest():
    got = intent.from_meaning(near(decision=0.80, open=0.70, overview=0.65))
    assert (got.kinds, got.status, got.only, got.by_meaning) == (("decision",), None, True, True)
    got = intent.from_meaning(near(open=0.79, done=0.70))
    assert (got.kinds, got.status) == (("task",), "open")


@pytest.mark.parametrize("cosines", [
    near(decision=intent.MEANING_THRESHOLD - 0.01, open=0.5),                   # not near enough
    near(open=0.80, done=0.80 - intent.MEANING_MARGIN / 2),                       # open or done: too close to call
    near(overview=0.85, decision=0.70),                                           # an overview lists nothing
    {},
])
def test_no_facet_when_the_question_is_far_ambiguous_or_an_overview(cosines):
    assert intent.from_meaning(cosines) is None


def test_every_prototype_row_parses_and_the_file_says_where_it_comes_from():
    assert lexicons.provenance("intent_prototypes")
    facets = {f for f, _ in intent.prototypes()}
    assert {"kind:task status:open", "kind:task status:done", "kind:decision", "kind:gotcha", "kind:preference",
            "overview"} <= facets


@pytest.fixture
def project(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        ids = {
            "open": s.remember("Add pagination to the invoices endpoint before the partner launch.", kind="task",
                               status="open")["id"],
            "done": s.remember("Upgrade Postgres from 14 to 16 in staging.", kind="task", status="done")["id"],
            "decision": s.remember("We chose ruff over flake8 for linting; its config lives in pyproject.toml.",
                                   kind="decision")["id"],
            "gotcha": s.remember("pytest-xdist breaks the fixtures that share the local redis; run the integration "
                                 "tests with -n 0.", kind="gotcha")["id"],
        }
        yield s, ids


@pytest.mark.model
@pytest.mark.parametrize("question, facet", [
    ("the things we ruled on", "decision"),
    ("which things have we got finished", "done"),
])
def test_a_broad_question_in_other_words_lists_its_facet(project, question, facet):
    s, ids = project
    assert s.recall(question, intent=False)["results"] == []        # the words alone find nothing
    result = s.recall(question, explain=True)
    assert [r["id"] for r in result["results"]] == [ids[facet]]
    assert result["note"].startswith("broad query (read by meaning)") and result["intent"]["by_meaning"]


@pytest.mark.model
@pytest.mark.parametrize("question", [
    "how do we configure kafka consumer groups",        # off topic
    "what is the capital of France",
    "what work is still hanging around unfinished",     # open or done: too close to call
    "decisions about the sentry setup",                 # names a kind and a subject the store never mentions
])
def test_questions_that_are_not_broad_or_not_clear_stay_empty(project, question):
    s, _ = project
    assert s.recall(question)["results"] == []


@pytest.mark.model
def test_without_the_calibrated_embedder_nothing_is_read_by_meaning(project, monkeypatch):
    """The bounds are on bge-small's cosines: another embedder's scale would read them wrong."""
    from supermemory.store import embedding

    s, ids = project
    assert [r["id"] for r in s.recall("the things we ruled on")["results"]] == [ids["decision"]]
    monkeypatch.setattr(embedding, "provider_id", lambda ctx: "openai")
    assert s.recall("the things we ruled on")["results"] == []


@pytest.fixture
def mixed(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        ids = {"mongo": s.remember("We use MongoDB 7 for the catalog service because documents are schemaless.",
                                   kind="decision")["id"],
               "fridays": s.remember("Never run database migrations on Fridays.", kind="preference")["id"],
               "npm": s.remember("Package manager for the web app is npm.", kind="decision")["id"]}
        yield s, ids


@pytest.mark.model
def test_a_kind_with_a_topic_whose_answer_is_of_another_kind_gets_that_answer(mixed):
    """Found by a fresh-user run: "decisions about migrations on Fridays" listed the unrelated decisions (relevance
    0.03) and left out the preference that answers it."""
    s, ids = mixed
    result = s.recall("decisions about migrations on Fridays", explain=True)
    assert result["results"][0]["id"] == ids["fridays"]
    from supermemory.retrieval.relevance import shipped

    assert all(r["relevance"] < shipped().threshold for r in result["results"][1:])
    assert result["intent"]["applied"].startswith("none") and "intent filter" not in (result.get("note") or "")
    result = s.recall("decisions about the catalog database")        # the filter still applies where it answers
    assert result["results"][0]["id"] == ids["mongo"] and result["note"] == "intent filter: kind=decision"


@pytest.mark.model
def test_a_kind_with_a_topic_the_store_never_mentions_stays_empty_when_only_the_intent_words_match(
        db_path, config, onnx_embedder):
    """Found by a fresh-user run: "open tasks about helm" answered with a decision on OpenSearch (relevance 0.74):
    the question's own "open" matched the identifier's part, and its answers were of another kind."""
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        s.remember("Search uses OpenSearch 2.11 for product search.", kind="decision")
        s.remember("Background jobs run as Celery tasks on redis.", kind="decision")
        s.remember("Add pagination to the invoices endpoint.", kind="task", status="open")
        for question in ("open tasks about helm", "open tasks about kubernetes"):
            result = s.recall(question, explain=True)
            assert result["results"] == [] and result["query"] == question, question
            assert result["intent"]["applied"] == "none (nothing relevant to the topic)"


@pytest.mark.model
@pytest.mark.parametrize("question", ["decisions about migrations on Fridays", "decisions about sentry",
                                      "open tasks", "the things we ruled on", "which database for the catalog"])
def test_one_recall_is_one_search_logged_under_the_question_asked(mixed, question):
    """A broad question reads the store up to three times before it answers; the search log and the recall counters
    see the answer once (they counted every look-up, under sub-queries the agent never sent)."""
    s, _ = mixed
    before = s.conn.execute("SELECT count(*) FROM search_log").fetchone()[0]
    result = s.recall(question)
    rows = s.conn.execute("SELECT query, hits FROM search_log ORDER BY id DESC LIMIT 2").fetchall()
    assert s.conn.execute("SELECT count(*) FROM search_log").fetchone()[0] == before + 1
    assert tuple(rows[0]) == (question, len(result["results"]))
    counted = s.conn.execute("SELECT coalesce(sum(recall_count), 0) FROM memories").fetchone()[0]
    assert counted <= len(result["results"])
