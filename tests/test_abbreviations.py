"""fu25 q9: "when does the end-to-end test suite run" missed a note on "the e2e Playwright job". Developers spell common
words two ways (e2e / end-to-end, k8s / Kubernetes, db / database); a query's word also matches its other spelling
(`text.glossary.abbreviations`, `lexicons/abbreviations.txt`), standing in for it in coverage as a translation does."""
from __future__ import annotations

from supermemory.core import MemoryStore
from supermemory.retrieval.query import Query
from supermemory.text import index_text
from supermemory.text.glossary import abbreviations, cross_terms
from conftest import FakeEmbedder


def test_an_abbreviation_and_its_expansion_stand_for_each_other():
    table = abbreviations()
    assert ("end-to-end",) in table["e2e"] and ("e2e",) in table["end-to-end"]
    assert ("kubernet",) in table["k8s"] and ("k8s",) in table["kubernet"]
    assert ("pull", "request") in table["pr"] and "request" not in table    # a phrase is reached from its abbreviation
    assert ("product",) in table["prod"] and "product" not in table        # one way: "product" is a word of its own
    assert ("databas",) in cross_terms("which db do we use")["db"]


def test_a_query_covers_a_memory_that_spells_its_word_the_other_way():
    query = Query.analyse("when do the end-to-end tests run")
    tokens = set(index_text("The e2e Playwright tests run only on main, nightly.").split())
    idf = {t: 1.0 for t in query.terms}
    assert query.coverage(idf, tokens) == 1.0
    assert Query.analyse("when do the end-to-end tests run", glossary=False).coverage(idf, tokens) < 1.0


def test_recall_finds_the_note_written_with_the_abbreviation(db_path, config):
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="web") as s:
        note = s.remember("The e2e Playwright job runs only on main, after the deploy preview is up.", kind="fact")
        s.remember("Unit tests run on every push with vitest.", kind="fact")
        s.remember("The k8s cluster autoscaler keeps three nodes warm.", kind="fact")
        hits = s.recall("when does the end-to-end job run", relevance_threshold=0, touch=False)["results"]
        assert hits[0]["id"] == note["id"]
