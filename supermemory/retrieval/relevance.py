"""The calibrated relevance model: per-candidate evidence features and one logistic regression over them.

One small readable model replaces hand-set channel weights and word-list gates. Its inputs are what the
query itself shows about each channel: how much of the query the best lexical match covers, how far the
best cosine stands above this query's background, how Chinese the query is (bge-small reads Chinese as
unknown tokens). Its output is the probability that a candidate answers the query: the ranker orders by
its log-odds and returns nothing when no candidate reaches the threshold. The coefficients are data
(`relevance.json`), written by `bench/fit_relevance.py` from the six dev sets; pure functions, no I/O
beyond reading that file once.
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

COEFFICIENTS = Path(__file__).with_name("relevance.json")

# The model's inputs, in the order of the coefficient vector. Candidate-level features order the results of
# one query; query-level ones (best_coverage, top_margin, unknown_name) only move every candidate's
# probability together, which is what abstention needs.
FEATURES = ("coverage", "lexical", "lexical_rank", "cosine", "cosine_margin", "cosine_gap", "vector_rank",
            "lexical_evidence", "vector_evidence", "best_coverage", "top_margin", "cjk", "unknown_name")


@dataclass(frozen=True)
class QueryEvidence:
    """What the whole candidate set says about one query's channels."""

    background: float         # mean cosine at ranks 6–15: what "unrelated" scores for this query
    top_cosine: float | None
    best_coverage: float      # the best lexical hit's share of the query's IDF mass
    best_bm25: float          # the best (most negative) bm25, for normalising
    cjk: float                # share of CJK in the query: its cosines carry no meaning
    unknown_name: bool        # the query names something no memory mentions
    lexical_rank: dict        # candidate id → rank among lexical hits (0 = best)
    vector_rank: dict         # candidate id → rank by cosine


def background(cosines: Sequence[float | None], prior: float) -> float:
    """The query's background similarity: mean cosine at ranks 6–15 (what 'unrelated' scores).

    A relevant memory stands out from it; for an off-topic query everything sits near it.
    With fewer than 6 candidates the prior stands in for the missing ranks.
    """
    ranked = sorted((c for c in cosines if c is not None), reverse=True)
    tail = ranked[5:15]
    missing = 10 - len(tail)
    return (sum(tail) + prior * missing) / 10


def evidence(cands: Sequence, *, cjk: float, unknown_name: bool = False, prior: float = 0.5) -> QueryEvidence:
    """Query-level evidence from the candidates (objects with id, bm25, cosine, coverage)."""
    cosines = [c.cosine for c in cands]
    lexical = sorted((c for c in cands if c.bm25 is not None), key=lambda c: c.bm25)
    vector = sorted((c for c in cands if c.cosine is not None), key=lambda c: -c.cosine)
    return QueryEvidence(
        background=background(cosines, prior),
        top_cosine=vector[0].cosine if vector else None,
        best_coverage=max((c.coverage for c in lexical), default=0.0),
        best_bm25=lexical[0].bm25 if lexical else 0.0,
        cjk=max(0.0, min(1.0, cjk)), unknown_name=unknown_name,
        lexical_rank=_ranks(lexical, [c.bm25 for c in lexical]),
        vector_rank=_ranks(vector, [-c.cosine for c in vector]))


def _ranks(ordered: Sequence, keys: Sequence[float]) -> dict:
    """Rank of each candidate (already sorted by key): how many are strictly better; ties share a rank."""
    out, rank = {}, 0
    for i, (cand, key) in enumerate(zip(ordered, keys)):
        if i and key != keys[i - 1]:
            rank = i
        out[cand.id] = rank
    return out


def features(cand, ev: QueryEvidence) -> dict:
    """The model's inputs for one candidate (every value bounded, 0 when the channel has nothing)."""
    sees = 1.0 - ev.cjk                      # how much the cosines mean for this query
    lexical = (cand.bm25 / ev.best_bm25) if cand.bm25 is not None and ev.best_bm25 < 0 else (
        1.0 if cand.bm25 is not None else 0.0)
    lex_rank = ev.lexical_rank.get(cand.id)
    vec_rank = ev.vector_rank.get(cand.id)
    has_cos = cand.cosine is not None and ev.top_cosine is not None
    margin = (cand.cosine - ev.background) if has_cos else 0.0
    top_margin = (ev.top_cosine - ev.background) if ev.top_cosine is not None else 0.0
    return {
        "coverage": cand.coverage if cand.bm25 is not None else 0.0,
        "lexical": lexical,
        "lexical_rank": 1.0 / (1.0 + lex_rank) if lex_rank is not None else 0.0,
        "cosine": (cand.cosine if has_cos else 0.0) * sees,
        "cosine_margin": margin * sees,
        "cosine_gap": ((cand.cosine - ev.top_cosine) if has_cos else -0.5) * sees,
        "vector_rank": (1.0 / (1.0 + vec_rank) if vec_rank is not None else 0.0) * sees,
        "lexical_evidence": lexical * ev.best_coverage,
        "vector_evidence": margin * top_margin * sees * 10.0,
        "best_coverage": ev.best_coverage,
        "top_margin": top_margin * sees,
        "cjk": ev.cjk if cand.bm25 is not None else 0.0,   # its words are then the only evidence
        "unknown_name": 1.0 if ev.unknown_name else 0.0,
    }


@dataclass(frozen=True)
class Model:
    """Logistic regression: P(relevant) = σ(intercept + Σ weight·feature); `threshold` = "nothing relevant"."""

    intercept: float
    weights: dict
    threshold: float

    def logit(self, x: dict) -> float:
        return self.intercept + sum(self.weights.get(name, 0.0) * x.get(name, 0.0) for name in FEATURES)

    def contributions(self, x: dict) -> dict:
        return {name: self.weights.get(name, 0.0) * x.get(name, 0.0) for name in FEATURES if self.weights.get(name)}


def probability(logit: float) -> float:
    """σ(logit), safe for any float."""
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    z = math.exp(logit)
    return z / (1.0 + z)


@functools.cache
def shipped() -> Model:
    """The coefficients fitted by bench/fit_relevance.py (package data)."""
    data = json.loads(COEFFICIENTS.read_text(encoding="utf-8"))
    return Model(intercept=float(data["intercept"]), weights={k: float(v) for k, v in data["weights"].items()},
                 threshold=float(data["threshold"]))
