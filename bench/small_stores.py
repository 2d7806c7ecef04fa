#!/usr/bin/env python3
"""Small stores: dev-set questions asked of a namespace holding only a few memories, as a new user's store is.

The relevance model reads the candidate pool (how much of the query the pooled candidates cover, the best
cosine among them); a store of a few dozen memories fills a much smaller pool than the dev stores, so a
model fitted on those alone silenced about a fifth of the answerable questions a small store was asked
(bench/RESULTS.md, "Small stores"). Each question here gets a scope of its own holding its answers and
k - |answers| other memories of the scope it came from (k cycles through SIZES), and each negative (cases
negatives, the chat sets' cross-scope negatives) k memories of the scope it is asked in. Built from the
shared data at run time (never written into the repository), seeded by `seed`.
"""
from __future__ import annotations

import random

SIZES = (3, 5, 10, 20, 40)
SOURCES = ("cases", "locomo-dev", "longmemeval-dev", "scifact-train", "codesearch-dev", "cmrc2018")
POSITIVES, NEGATIVES = 60, 40      # per source set


def build(load, *, seed: int = 7) -> tuple[list[dict], list[dict]]:
    """(docs, queries) in the shared format; `load(name)` gives a source set's (docs, queries)."""
    rng = random.Random(seed)
    docs_out, queries_out, n = [], [], 0
    for name in SOURCES:
        docs, queries = load(name)
        by_id = {d["id"]: d for d in docs}
        by_scope: dict = {}
        for doc in docs:
            by_scope.setdefault((doc.get("meta") or {}).get("scope"), []).append(doc["id"])
        positives = [q for q in queries if q.get("relevant")]
        negatives = [q for q in queries if not q.get("relevant")]
        picked = rng.sample(positives, min(POSITIVES, len(positives))) + \
            rng.sample(negatives, min(NEGATIVES, len(negatives)))
        for q in picked:
            k = SIZES[n % len(SIZES)]
            n += 1
            answers = [r for r in q.get("relevant", []) if r in by_id]
            source_scope = (q.get("meta") or {}).get("scope")
            pool = [i for i in by_scope.get(source_scope, list(by_id)) if i not in answers]
            held = answers + rng.sample(pool, min(len(pool), max(0, k - len(answers))))
            scope = f"small-{n}"
            for doc_id in held:
                doc = dict(by_id[doc_id])
                doc["id"] = f"{scope}:{doc_id}"
                doc["meta"] = {**(doc.get("meta") or {}), "scope": scope}
                docs_out.append(doc)
            queries_out.append({"id": f"{name}:{q['id']}", "query": q["query"],
                                "relevant": [f"{scope}:{a}" for a in answers],
                                "meta": {"scope": scope, "source": name, "size": k,
                                         "category_name": "small-store" if answers else "small-store-negative"}})
    return docs_out, queries_out
