"""fu24 D16: "who is Lena?" came back empty although a memory names Lena: the short-query input (`few_terms`) held one
content word against it. A question about a name alone is about that name, so it counts as a full query when some
memory holds the name; a name no memory holds still gets nothing."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.retrieval.query import Query
from supermemory.retrieval.relevance import FEW_TERMS
from supermemory.text import asked_name

NOTES = [
    ("Deploys", "Staging deploys from main on every merge; production needs a manual approval from Ingrid."),
    ("Terraform owner", "Tomasz owns the Terraform modules; ask him before changing any module."),
    ("Redis", "Redis max memory is 2 GB with allkeys-lru eviction."),
    ("Python", "The services run Python 3.12; pin it in .python-version."),
    ("Commits", "Use conventional commits (feat:, fix:, chore:) for every merge request."),
    ("Exports", "The nightly export runs at 03:15 UTC and writes parquet files to the warehouse bucket."),
    ("API", "The api service is FastAPI behind nginx; the health check is /livez."),
    ("Feature flags", "Feature flags live in Unleash; clean up a flag within two weeks of full rollout."),
    ("发布", "发布到生产环境之前要找周宁确认变更单。"),
]
# A store of a working project's size: the question's one word must stand out among many notes.
SERVICES = ("billing", "search", "auth", "mailer", "reports", "uploads", "webhooks", "scheduler")
TOOLS = ("Postgres 16", "Sentry", "Grafana", "k6 load tests", "Celery beat", "S3 lifecycle rules")
FILLER = [(f"{svc} {tool}", f"The {svc} service relies on {tool}; its settings live in infra/{svc}/{i}.yaml.")
          for i, (svc, tool) in enumerate((svc, tool) for svc in SERVICES for tool in TOOLS)]


def test_asked_name_reads_a_question_about_a_name_alone():
    assert asked_name("who is Ingrid?") == "Ingrid"
    assert asked_name("What does Tomasz do?") == "Tomasz"
    assert asked_name("tell me about Ingrid Berg") == "Ingrid Berg"
    assert asked_name("周宁是谁？") == "周宁"
    assert asked_name("谁是周宁") == "周宁"
    for other in ("who is the DBA?", "who is on call this week?", "What does Tomasz do before a release?",
                  "Who is Tomasz a fan of?", "how do I test it", "Ingrid"):
        assert asked_name(other) is None, other


def test_a_known_name_makes_the_question_a_full_query_and_an_unknown_one_does_not():
    query = Query.analyse("who is Ingrid?")
    assert query.content_terms < FEW_TERMS
    assert query.ranker_context({"ingrid": 1}, set)["content_terms"] == FEW_TERMS
    assert query.ranker_context({"ingrid": 0}, set)["content_terms"] == query.content_terms
    chinese = Query.analyse("周宁是谁？")
    assert chinese.ranker_context({"周宁": 1}, set)["content_terms"] == FEW_TERMS


@pytest.mark.model
def test_who_is_a_person_a_memory_names_finds_that_memory(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="acme") as s:
        ids = {title: s.remember(body, title=title, kind="fact")["id"] for title, body in NOTES + FILLER}
        for question, title in (("who is Ingrid?", "Deploys"), ("What does Tomasz do?", "Terraform owner")):
            hits = s.recall(question, touch=False)["results"]
            assert hits and hits[0]["id"] == ids[title], (question, hits)
        assert s.recall("who is Priyanka?", touch=False)["results"] == []
