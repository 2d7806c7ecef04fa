"""The calibrated relevance model: per-candidate evidence features and one logistic regression over them.

One small readable model replaces hand-set channel weights and word-list gates. Its candidate inputs say
how strongly each channel points at this memory, on the query's own scale (bm25 share of the best hit,
cosine above the query's background, and each channel's z-score among the candidates, so a channel whose
best hit stands out speaks louder than a flat one); its query inputs say how answerable the query looks
(how much of it the best lexical hit and all candidates together cover, how high the best cosine sits and
how far above the background, how much of it the embedder cannot read, a name no memory mentions, how few
content words it has). The background's own level is left out on purpose: it says what kind of text the
store holds (code and science sit high for bge-small), not whether this query has an answer, and a small
store or a filtered recall pads it with a prior. The ranker orders by the log-odds; the best hit's
probability is the chance the query has its answer in the top five, and a query whose best hit stays below
the threshold gets nothing. The coefficients are data (`relevance.json`), written by `bench/fit_relevance.py`
from the dev sets (bench/devsets.py); pure functions, no I/O beyond reading that file once.
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
# one query. Each channel is read on two scales: against the best hit (bm25 share, cosine above background)
# and against the query's own spread (z-score within the candidates: a channel whose best hit stands far
# above the rest speaks loudly, a flat one barely). The lexical features come twice, for the part of the
# query the embedder can read and for the part it cannot (Chinese, or any query when cosines carry no
# meaning): then words are the only evidence and need weights of their own. The embedder reads Chinese badly,
# not blind: its cosine ranks a Chinese project's notes above chance, so a blind query keeps a small say for it
# (`blind_cosine_z`, `blind_top_cosine`), and `blind` lets such a query sit on its own scale: the Chinese coding
# notes of bench/agent_notes.jsonl lost a third of their answers to the threshold when English set it for both
# (bench/RESULTS.md, "Chinese questions calibrated"). A memory that reads as source
# code (`text.code_share`) gets its own say in the main channels (`code_*`): a question's words reach code
# through identifiers and boilerplate many functions share, so there the words mean less and the meaning
# more than in prose, and one set of weights for both served neither. `after_question` reads conversation
# structure: the query words an answer lacks may sit in the question written just before it (prose only).
# Query-level features move every candidate's probability together, which is what abstention needs; they
# never change the order. `lacks_answer_type` reads the question's form: one asking "how many", "when" or "who" is
# answered only by a memory holding a number, a time or a person (text/answer_types.py). `few_terms` reads the
# query's length: a match of one or two content words ("how does it work") says little, whatever it covers, so
# such a query needs stronger evidence to get an answer.
CANDIDATE_FEATURES = ("coverage", "lexical", "lexical_rank", "lexical_z", "lexical_evidence",
                      "cosine_margin", "cosine_z", "vector_rank", "vector_evidence",
                      "blind_coverage", "blind_lexical", "blind_rank",
                      "code", "code_coverage", "code_lexical_z", "code_cosine_z", "after_question", "blind_cosine_z",
                      "lacks_answer_type")
QUERY_FEATURES = ("best_coverage", "pooled_coverage", "top_margin", "top_cosine", "blind", "blind_pooled",
                  "blind_top_cosine", "unknown_name", "few_terms", "short_pool", "short_pooled", "short_top_cosine")
FEATURES = CANDIDATE_FEATURES + QUERY_FEATURES
FEW_TERMS = 3   # a query of fewer content words than this is short: `few_terms` is 2/3 for one word, 1/3 for two
# The candidate pool a store of many memories fills (`ranking.candidates`). A smaller pool (a new user's store,
# a project namespace of a few memories) covers less of any query and offers fewer chances of a high cosine, so
# `pooled_coverage` and `top_cosine` read lower there for the same question: `short_pool` (how far the pool is
# from full) and its products with them let the fit (bench/small_stores.py) read them on that scale.
FULL_POOL = 60


@dataclass(frozen=True)
class QueryEvidence:
    """What the whole candidate set says about one query's channels."""

    background: float         # mean cosine at ranks 6–15: what "unrelated" scores for this query
    top_cosine: float | None
    best_coverage: float      # the best lexical hit's share of the query's IDF mass
    pooled_coverage: float    # share of the query's IDF mass found anywhere among the candidates
    best_bm25: float          # the best (most negative) bm25, for normalising
    blind: float              # share of the query the embedder cannot read: its cosines carry no meaning
    unknown_name: bool        # the query names something no memory mentions
    lexical_rank: dict        # candidate id → rank among lexical hits (0 = best)
    vector_rank: dict         # candidate id → rank by cosine
    lexical_spread: tuple     # (mean, standard deviation) of -bm25 over the lexical hits
    cosine_spread: tuple      # (mean, standard deviation) of the cosines
    content_terms: int = FEW_TERMS   # how many content words the query has (`Query.content_terms`)
    query_code: bool = True   # the query spells code (`Query.spells_code`): its words speak for code memories too
    answer_types: frozenset = frozenset()   # what the question asks for: a number, a time, a person (text.answer_types)
    short_pool: float = 0.0   # 1 - candidates / FULL_POOL, at least 0 (0 without cosines: a lexical pool is no store size)

    @functools.cached_property
    def query_features(self) -> dict:
        """The model inputs every candidate of this query shares, worked out once (a recall reads a hundred)."""
        return _query_features(self)


def background(cosines: Sequence[float | None], prior: float) -> float:
    """The query's background similarity: mean cosine at ranks 6–15 (what 'unrelated' scores).

    A relevant memory stands out from it; for an off-topic query everything sits near it.
    With fewer than 6 candidates the prior stands in for the missing ranks.
    """
    ranked = sorted((c for c in cosines if c is not None), reverse=True)
    tail = ranked[5:15]
    missing = 10 - len(tail)
    return (sum(tail) + prior * missing) / 10


def spread(values: Sequence[float], pad: float, *, at_least: int = 10) -> tuple:
    """(mean, standard deviation) of a channel's scores, padded with `pad` up to `at_least` values.

    A small store has few candidates: their spread alone would make a 0.01 difference in cosine look
    like several deviations. The padding stands in for the unrelated memories a larger store would add
    (as the background prior does for the background), and is too small to matter once there are enough.
    """
    padded = list(values) + [pad] * max(0, at_least - len(values))
    mean = sum(padded) / len(padded)
    return (mean, math.sqrt(sum((v - mean) ** 2 for v in padded) / len(padded)))


def zscore(value: float, spread_: tuple) -> float:
    """How many deviations `value` stands above its channel's mean, bounded to [-3, 6] and scaled by 1/3."""
    mean, sd = spread_
    if sd <= 0:
        return 0.0
    return max(-3.0, min(6.0, (value - mean) / sd)) / 3.0


def evidence(cands: Sequence, *, cjk: float, unknown_name: bool = False, prior: float = 0.5,
             pooled_coverage: float = 0.0, content_terms: int = FEW_TERMS, has_cosines: bool = True,
             query_code: bool = True, answer_types: frozenset = frozenset()) -> QueryEvidence:
    """Query-level evidence from the candidates (objects with id, bm25, cosine, coverage).

    :param cjk: share of the query the embedder cannot read (1.0 when the cosines mean nothing).
    :param pooled_coverage: the query's IDF mass found in the union of the candidates' tokens (never less
        than the best single candidate's).
    :param content_terms: how many content words the query has (unknown: `FEW_TERMS`, "not short").
    :param query_code: the query spells an identifier or a code-like token (unknown: yes, words count everywhere).
    :param answer_types: the kinds of answer the query asks for (`text.answer_types.asked`).
    """
    cosines = [c.cosine for c in cands]
    lexical = sorted((c for c in cands if c.bm25 is not None), key=lambda c: c.bm25)
    vector = sorted((c for c in cands if c.cosine is not None), key=lambda c: -c.cosine)
    best_coverage = max((c.coverage for c in lexical), default=0.0)
    return QueryEvidence(
        background=background(cosines, prior),
        top_cosine=vector[0].cosine if vector else None,
        best_coverage=best_coverage,
        pooled_coverage=max(best_coverage, pooled_coverage),
        best_bm25=lexical[0].bm25 if lexical else 0.0,
        blind=max(0.0, min(1.0, cjk)), unknown_name=unknown_name,
        lexical_rank=_ranks(lexical, [c.bm25 for c in lexical]),
        vector_rank=_ranks(vector, [-c.cosine for c in vector]),
        lexical_spread=spread([-c.bm25 for c in lexical], 0.0),     # no match: bm25 0
        cosine_spread=spread([c.cosine for c in vector], prior), content_terms=content_terms, query_code=query_code,
        answer_types=frozenset(answer_types),
        short_pool=max(0.0, 1.0 - len(cands) / FULL_POOL) if has_cosines and vector else 0.0)


def _ranks(ordered: Sequence, keys: Sequence[float]) -> dict:
    """Rank of each candidate (already sorted by key): how many are strictly better; ties share a rank."""
    out, rank = {}, 0
    for i, (cand, key) in enumerate(zip(ordered, keys)):
        if i and key != keys[i - 1]:
            rank = i
        out[cand.id] = rank
    return out


def bm25_share(cand, ev: QueryEvidence) -> float:
    """The candidate's bm25 as a share of the best hit's (1.0 for the best, 0 without a lexical match)."""
    if cand.bm25 is None:
        return 0.0
    return cand.bm25 / ev.best_bm25 if ev.best_bm25 < 0 else 1.0


def lacks_answer(cand, ev: QueryEvidence) -> bool:
    """The query asks for a number, a time or a person and the memory holds none of what it asks for."""
    held = getattr(cand, "answer_types", None)
    return bool(ev.answer_types) and held is not None and not ev.answer_types & held


def features(cand, ev: QueryEvidence) -> dict:
    """The model's inputs for one candidate (every value bounded, 0 when the channel has nothing);
    `cand` has id, bm25, cosine, coverage and code (how much it reads as source code)."""
    sees, blind = 1.0 - ev.blind, ev.blind
    code = cand.code                          # text.code_share: already in [0, 1]
    # A query in plain words matches a function's identifiers and boilerplate by chance: its words speak for a
    # memory only as far as the memory is prose, unless the query itself spells code (`Query.spells_code`).
    say = sees if ev.query_code else sees * (1.0 - code)
    hit = cand.bm25 is not None
    lexical = bm25_share(cand, ev)
    coverage = cand.coverage if hit else 0.0
    lex_rank = ev.lexical_rank.get(cand.id)
    lex_rank = 1.0 / (1.0 + lex_rank) if lex_rank is not None else 0.0
    vec_rank = ev.vector_rank.get(cand.id)
    has_cos = cand.cosine is not None and ev.top_cosine is not None
    margin = (cand.cosine - ev.background) if has_cos else 0.0
    lexical_z = zscore(-cand.bm25, ev.lexical_spread) * say if hit else 0.0
    raw_cosine_z = zscore(cand.cosine, ev.cosine_spread) if has_cos else 0.0
    cosine_z = raw_cosine_z * sees
    return {
        "coverage": coverage * say,
        "lexical": lexical * say,
        "lexical_rank": lex_rank * say,
        "lexical_z": lexical_z,
        "lexical_evidence": lexical * ev.best_coverage * say,
        "cosine_margin": margin * sees,
        "cosine_z": cosine_z,
        "vector_rank": (1.0 / (1.0 + vec_rank) if vec_rank is not None else 0.0) * sees,
        "vector_evidence": margin * _top_margin(ev) * sees * 10.0,
        "blind_coverage": coverage * blind,
        "blind_lexical": lexical * coverage * blind,
        "blind_rank": lex_rank * coverage * blind,
        "blind_cosine_z": raw_cosine_z * blind,
        "code": code * sees,
        "code_coverage": coverage * code * say,
        "code_lexical_z": lexical_z * code,
        "code_cosine_z": cosine_z * code,
        "after_question": cand.after_question * (1.0 - code) * sees,
        "lacks_answer_type": sees if lacks_answer(cand, ev) else 0.0,
        "words_say": say,           # not a model input: how much the query's words speak for this memory
        **ev.query_features,
    }


def _top_margin(ev: QueryEvidence) -> float:
    """How far the best cosine stands above the query's background (0 without cosines)."""
    return (ev.top_cosine - ev.background) if ev.top_cosine is not None else 0.0


def _query_features(ev: QueryEvidence) -> dict:
    """The inputs that are the same for every candidate of a query (`QueryEvidence.query_features`)."""
    sees, blind = 1.0 - ev.blind, ev.blind
    return {
        "best_coverage": ev.best_coverage,
        "pooled_coverage": ev.pooled_coverage,
        "top_margin": _top_margin(ev) * sees,
        "top_cosine": (ev.top_cosine or 0.0) * sees,
        "blind_pooled": blind * ev.pooled_coverage,
        "blind_top_cosine": blind * (ev.top_cosine or 0.0),
        "blind": blind,
        "unknown_name": 1.0 if ev.unknown_name else 0.0,
        "few_terms": max(0, FEW_TERMS - ev.content_terms) / FEW_TERMS,
        "short_pool": ev.short_pool,
        "short_pooled": ev.short_pool * ev.pooled_coverage,
        "short_top_cosine": ev.short_pool * (ev.top_cosine or 0.0) * sees,
    }


@dataclass(frozen=True)
class Model:
    """Logistic regression: P(relevant) = σ(intercept + Σ weight·feature); `threshold` = "nothing relevant"."""

    intercept: float
    weights: dict
    threshold: float

    @functools.cached_property
    def _active(self) -> tuple:
        """(feature, weight) of every feature with a weight: the only ones a score needs."""
        return tuple((name, self.weights[name]) for name in FEATURES if self.weights.get(name))

    @functools.cached_property
    def names(self) -> tuple:
        """The features `shares` gives, in its order."""
        return tuple(name for name, _weight in self._active)

    def logit(self, x: dict) -> float:
        return self.intercept + sum(self.shares(x))

    def shares(self, x: dict) -> list:
        """Each weighted feature's share of the log-odds (the intercept aside), in the order of `names`."""
        return [weight * x[name] for name, weight in self._active]


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
