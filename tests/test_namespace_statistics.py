"""Recall in one namespace reads the word statistics (document frequencies, chunk count) of the namespaces it
searches only: another project's memories never change which words count as rare here, so through coverage and IDF
they can neither raise nor lower a result's relevance (nor give away, through a score, what the other project
holds). FTS5's bm25 still counts the whole table; on this store it orders the hits alike either way."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from tests.conftest import FakeEmbedder

BILLING = ["Invoices are rendered to PDF with gofpdf in internal/pdf.",
           "Database migrations are managed with goose; never edit an applied one.",
           "Stripe webhooks are verified with the signing secret.",
           "Logging uses log/slog with the JSON handler."]
OTHER = [f"The dashboard invoice table shows invoice {i} with its PDF preview and webhook log." for i in range(40)]
QUERIES = ["how are invoices rendered to PDF", "which logging library", "webhook signing secret"]


def _scores(store, ns):
    out = []
    for q in QUERIES:
        result = store.recall(q, namespace=ns, gates=False, touch=False, explain=True)
        out.append([(h["id"], round(h["relevance"], 6), round(h["features"]["coverage"], 6))
                    for h in result["results"]])
    return out


@pytest.mark.parametrize("other_first", [False, True])
def test_another_namespaces_memories_do_not_change_recall_here(tmp_path, config, other_first):
    alone = MemoryStore(tmp_path / "alone.db", config=config, embedder=FakeEmbedder(), namespace="billing")
    shared = MemoryStore(tmp_path / "shared.db", config=config, embedder=FakeEmbedder(), namespace="billing")
    try:
        if other_first:
            for text in OTHER:
                shared.remember(text, namespace="dashboard", create_namespace=True)
        for text in BILLING:
            alone.remember(text)
            shared.remember(text)
        if not other_first:
            for text in OTHER:
                shared.remember(text, namespace="dashboard", create_namespace=True)
        ids_alone = [[hit[0] for hit in q] for q in _scores(alone, "billing")]
        renumber = {}   # ids differ when the other project wrote first: compare by position in the billing list
        for i, (a, b) in enumerate(zip(alone.list()["items"][::-1], shared.list()["items"][::-1])):
            renumber[b["id"]] = a["id"]
        got = [[(renumber.get(i, i), r, c) for i, r, c in q] for q in _scores(shared, "billing")]
        assert got == _scores(alone, "billing") and all(ids_alone)
        everywhere = shared.recall(QUERIES[0], namespace="*", gates=False, touch=False, explain=True)
        assert any(h["namespace"] == "dashboard" for h in everywhere["results"])   # '*' reads them all, as before
    finally:
        alone.close()
        shared.close()


def test_document_frequencies_per_namespace_match_a_count_of_their_memories(store):
    """Counted among the namespaces read, or among the others and subtracted when those hold fewer chunks."""
    from supermemory.retrieval import pipeline
    from supermemory.retrieval.query import lookup_tokens
    from supermemory.store import search_index

    for text in BILLING:
        store.remember(text, namespace="billing", create_namespace=True)
    for text in OTHER[:12]:
        store.remember(text, namespace="dashboard", create_namespace=True)
    ctx = store.context
    tokens = lookup_tokens(pipeline.analyse(ctx, "invoice PDF webhook logging signing"))
    everywhere = search_index.doc_frequencies(ctx, tokens)
    for read in (["billing"], ["dashboard"], ["dashboard", "global"], ["billing", "dashboard"], ["nowhere"]):
        counted = search_index.doc_frequencies(ctx, tokens, read)
        rows = [set(t.split()) for ns in read
                for (t,) in ctx.q("SELECT f.tokens FROM fts f JOIN chunks c ON c.id = f.rowid JOIN memories m "
                                  "ON m.id = c.memory_id WHERE m.namespace = ?", (ns,))]
        assert counted == {t: n for t in tokens if (n := sum(t in r for r in rows))}, read
        assert all(counted.get(t, 0) <= everywhere.get(t, 0) for t in tokens)
    assert search_index.live_chunk_count(ctx, ["billing"]) == len(BILLING)
