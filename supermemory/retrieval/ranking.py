"""Features, gates, softmax attention, MMR and the token budget: pure functions, no I/O.

The caller (core.py) fetches candidates and passes `now`; everything here is deterministic.

How the blend adapts: the lexical weight is scaled by how much of the query's IDF mass the
best lexical candidate actually covers (no lexical evidence → the dense signal decides), and
the vector weight is scaled down by the share of CJK in the query, because bge-small has no
CJK vocabulary and its cosines for Chinese text carry no meaning. A memory a live `supersedes` link
targets (written by `remember`, `store/supersession.py`) has its score multiplied by
`superseded_factor`, and its successor, when also a candidate, is lifted just above it; per-query
inputs that need the database come in through RankConfig.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from supermemory.settings import DEFAULTS

FEATURES = ("lexical", "vector", "importance", "recency", "reinforcement", "pinned", "superseded")


@dataclass
class Candidate:
    """One memory competing for a place in the results."""

    id: int
    bm25: float | None = None          # FTS5 bm25() (lower is better), None = no lexical match
    cosine: float | None = None        # cosine similarity to the query, None = no vector
    coverage: float = 0.0              # share of the query's IDF mass this memory matches (0..1)
    importance: float = 0.5
    confidence: float = 1.0
    pinned: bool = False
    age_days: float = 0.0              # since last write or recall
    recall_count: int = 0
    tokens: int = 0
    vector: object | None = None       # the memory's own vector, for MMR similarity
    terms: frozenset = frozenset()     # token set, MMR similarity when vectors are missing
    superseded_by: int | None = None   # the live memory whose `supersedes` link targets this one (from store/)


_R = DEFAULTS["ranking"]          # the shipped settings: RankConfig() is what users run
CALIBRATED_FLOORS = {"onnx": 0.6, "hash": 0.35}   # cosine floors per provider for vector_floor "auto"


@dataclass(frozen=True)
class RankConfig:
    """Every knob of the ranker, defaulting to `settings.DEFAULTS['ranking']` (per-query inputs
    default to "nothing known about the query"); `vector_floor` "auto" is bge-small's calibrated floor."""

    weights: dict = field(default_factory=lambda: dict(_R["weights"]))
    adaptive_lexical: bool = _R["adaptive_lexical"]
    temperature: float = _R["temperature"]
    half_life_days: float = _R["half_life_days"]
    mmr_lambda: float = _R["mmr_lambda"]
    vector_floor: float = CALIBRATED_FLOORS["onnx"] if _R["vector_floor"] == "auto" else _R["vector_floor"]
    lexical_floor: float = _R["lexical_floor"]        # coverage a lexical hit needs to bypass the cosine floor
    relative_cutoff: float = _R["relative_cutoff"]
    cjk_share: float = 0.0             # share of CJK characters in the query (set per query)
    vector_base: float = _R["vector_base"]            # cosine mapped to 0 by the vector feature (-1: background)
    coverage_mix: float = _R["coverage_mix"]          # how much the lexical feature depends on query coverage
    vector_margin: float = _R["vector_margin"]        # query gate: best cosine must beat the background by this
    query_coverage: float = _R["query_coverage"]      # query gate: …or the best lexical hit must cover this share
    confident_cosine: float = _R["confident_cosine"]  # query gate: …or one cosine is at least this high
    query_coverage_cjk: float = _R["query_coverage_cjk"]  # query gate coverage for all-CJK queries
    background_prior: float = 0.5      # background cosine assumed when there are too few candidates
    unknown_names: tuple = ()          # the query's names when no memory mentions any of them (per query)
    unknown_name_coverage: float = _R["unknown_name_coverage"]  # lexical coverage such a query needs (0 disables)
    vague_words: tuple = ()            # the query's words when it names nothing specific (per query)
    query_gate: bool = True            # False: no query-level gate at all (recall(gates=False))
    vague_gate: bool = _R["vague_gate"]               # query gate: a vague query needs a confident cosine
    disjoint_gate: bool = _R["disjoint_gate"]         # a query sharing no word with any candidate needs one too
    superseded_factor: float = _R["superseded_factor"]  # score multiplier of a superseded memory (1 = off)

    @classmethod
    def from_settings(cls, settings: dict, **overrides) -> "RankConfig":
        known = {k: v for k, v in settings.items() if k in cls.__dataclass_fields__}
        known.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**known)


@dataclass
class Ranked:
    """A selected (or gated) candidate with its explanation."""

    candidate: Candidate
    features: dict
    contributions: dict
    score: float
    attention: float = 0.0
    gated: str | None = None           # why it was dropped, None when kept


def recency(age_days: float, half_life_days: float) -> float:
    """Exponential decay: 1.0 now, 0.5 after one half-life."""
    if half_life_days <= 0:
        return 0.0
    return math.exp(-math.log(2) * max(0.0, age_days) / half_life_days)


def reinforcement(recall_count: int) -> float:
    """`log(1 + times recalled)`, scaled so ten recalls give 1.0."""
    return min(1.0, math.log1p(max(0, recall_count)) / math.log1p(10))


def normalise_bm25(values: Sequence[float | None]) -> list[float]:
    """Map bm25 (lower is better) to 0..1 within the candidate set; no match → 0."""
    present = [-v for v in values if v is not None]
    if not present:
        return [0.0 for _ in values]
    best = max(present)
    if best <= 0:
        return [1.0 if v is not None else 0.0 for v in values]
    return [(-v / best) if v is not None else 0.0 for v in values]


def effective_weights(cfg: RankConfig, lexical_evidence: float) -> dict:
    """Per-query weights: lexical scaled by its evidence, vector scaled down for CJK queries."""
    weights = dict(cfg.weights)
    if cfg.adaptive_lexical:
        weights["lexical"] = weights.get("lexical", 0.0) * (0.25 + 0.75 * max(0.0, min(1.0, lexical_evidence)))
    weights["vector"] = weights.get("vector", 0.0) * (1.0 - 0.9 * max(0.0, min(1.0, cfg.cjk_share)))
    return weights


def _vector_feature(cosine: float | None, floor: float) -> float:
    """Cosine rescaled so the calibrated floor maps to 0 and 1.0 stays 1.0."""
    if cosine is None:
        return 0.0
    base = min(floor, 0.95) if floor > 0 else 0.0
    return max(0.0, (cosine - base) / (1.0 - base)) if base else max(0.0, cosine)


def score_candidates(cands: Sequence[Candidate], cfg: RankConfig,
                     cosine_fn: Callable | None = None) -> list[Ranked]:
    """Features, weighted contributions and the score of every candidate (no gating)."""
    lex = normalise_bm25([c.bm25 for c in cands])
    evidence = max((c.coverage for c in cands if c.bm25 is not None), default=0.0)
    weights = effective_weights(cfg, evidence)
    if cfg.vector_base < 0:   # adaptive: this query's own background similarity maps to 0
        floor_for_scale = background([c.cosine for c in cands], cfg.background_prior)
    else:
        floor_for_scale = cfg.vector_base or cfg.vector_floor * 0.75
    out = []
    for cand, lexical in zip(cands, lex):
        features = {
            "lexical": lexical * (1.0 - cfg.coverage_mix + cfg.coverage_mix * cand.coverage),
            "vector": _vector_feature(cand.cosine, floor_for_scale),
            "importance": max(0.0, min(1.0, cand.importance)) * max(0.0, min(1.0, cand.confidence)),
            "recency": recency(cand.age_days, cfg.half_life_days),
            "reinforcement": reinforcement(cand.recall_count),
            "pinned": 1.0 if cand.pinned else 0.0,
            "superseded": 0.0,
        }
        contributions = {name: weights.get(name, 0.0) * value for name, value in features.items()}
        features["cosine"] = cand.cosine
        features["coverage"] = cand.coverage
        out.append(Ranked(cand, features, contributions, sum(contributions.values())))
    stale = {c.id: c.superseded_by for c in cands if c.superseded_by is not None}
    for item in out:
        if item.candidate.id in stale:   # demoted, never hidden: the contributions still add up to the score
            item.features["superseded"] = 1.0
            item.features["superseded_by"] = stale[item.candidate.id]
            item.contributions["superseded"] = item.score * (cfg.superseded_factor - 1.0)
            item.score += item.contributions["superseded"]
    _lift_revisions(out, stale)
    return out


def _lift_revisions(scored: list[Ranked], stale: dict[int, int]) -> None:
    """A revising memory answers whatever the memory it revises answers, with the current facts:
    it scores at least a little above that memory's unpenalised score (`supersedes` contribution).
    """
    by_id = {r.candidate.id: r for r in scored}
    for old_id, new_id in stale.items():
        old, new = by_id[old_id], by_id.get(new_id)
        if new is None:   # the successor is not among this query's candidates
            continue
        unpenalised = old.score - old.contributions.get("superseded", 0.0)
        lift = max(0.0, unpenalised + 0.01 - new.score)
        if lift > new.contributions.get("supersedes", 0.0):
            new.score += lift - new.contributions.get("supersedes", 0.0)
            new.contributions["supersedes"] = lift
            new.features["supersedes"] = old_id


def background(cosines: Sequence[float | None], prior: float) -> float:
    """The query's background similarity: mean cosine at ranks 6–15 (what 'unrelated' scores).

    A relevant memory stands out from it; for an off-topic query everything sits near it.
    With fewer than 6 candidates the prior stands in for the missing ranks.
    """
    ranked = sorted((c for c in cosines if c is not None), reverse=True)
    tail = ranked[5:15]
    missing = 10 - len(tail)
    return (sum(tail) + prior * missing) / 10


def query_has_evidence(ranked: list[Ranked], cfg: RankConfig, bg: float | None = None) -> tuple[bool, str]:
    """Query-level gate: does anything here stand out from this query's background at all?

    Off-topic queries still get candidates (every memory has some cosine, common words match),
    but none of them rises above the crowd: the best cosine sits near the background, and the
    best lexical hit covers little of the query's IDF mass. Some queries are held to more than
    standing out (`strict` below): then only a near-certain cosine passes, or, for names no memory
    mentions, most of the query's words.
    """
    cosines = [r.candidate.cosine for r in ranked]
    vector_meaningful = cfg.cjk_share < 0.5
    top = max((c for c in cosines if c is not None), default=None)
    top_text = f"{top:.3f}" if top is not None else "n/a"
    confident = vector_meaningful and top is not None and top >= cfg.confident_cosine
    coverage = max((r.candidate.coverage for r in ranked if r.candidate.bm25 is not None), default=0.0)
    needed = cfg.query_coverage * (1 - cfg.cjk_share) + cfg.query_coverage_cjk * cfg.cjk_share
    strict, words_suffice = "", False
    if cfg.vague_words and cfg.vague_gate:
        # Its words match only by being common ("test", "project"): whatever came back would be
        # the memories that share them, not an answer.
        strict = f"the query names nothing specific ({' '.join(cfg.vague_words)}) — say what it is about"
    elif cfg.disjoint_gate and ranked and max(r.candidate.coverage for r in ranked) <= 0:
        # Not one of its words is in any memory near it ("shard the elasticsearch cluster"): a
        # cosine that merely stands out is what bge-small gives any English sentence.
        strict = "no memory shares a word with the query"
    elif cfg.unknown_names and cfg.unknown_name_coverage > 0:
        # About something no memory mentions ("Azure", "Kubernetes"): most of its words must match.
        strict = f"no memory mentions {', '.join(cfg.unknown_names)}"
        needed = max(needed, cfg.unknown_name_coverage)
        words_suffice = True
    if strict:
        if confident or (words_suffice and coverage >= needed):
            return True, ""
        words = f", best lexical coverage {coverage:.2f} (needs {needed:.2f})" if words_suffice else ""
        return False, f"{strict}: best cosine {top_text} (needs {cfg.confident_cosine}){words}"
    if cfg.vector_margin <= 0 and cfg.query_coverage <= 0:
        return True, ""
    bg = background(cosines, cfg.background_prior) if bg is None else bg
    if vector_meaningful and top is not None and (top - bg >= cfg.vector_margin or confident):
        return True, ""
    if coverage >= needed:
        return True, ""
    return False, (f"no evidence for this query: best cosine {top_text} vs background {bg:.3f} (needs +"
                   f"{cfg.vector_margin}), best lexical coverage {coverage:.2f} (needs {needed:.2f})")


def gate(ranked: list[Ranked], cfg: RankConfig) -> None:
    """Query gate, then the per-candidate floor: a lexical hit with enough query coverage, or a
    cosine ≥ floor (cosines are ignored for CJK queries: bge-small has no CJK vocabulary).
    """
    bg = background([r.candidate.cosine for r in ranked], cfg.background_prior)
    for item in ranked:
        item.features["background"] = bg
    ok, reason = query_has_evidence(ranked, cfg, bg) if cfg.query_gate else (True, "")
    if not ok:
        for item in ranked:
            item.gated = reason
        return
    if cfg.vector_floor <= 0 and cfg.lexical_floor <= 0:
        return
    vector_meaningful = cfg.cjk_share < 0.5
    passes = {}
    for item in ranked:
        cand = item.candidate
        passes[cand.id] = ((cand.bm25 is not None and cand.coverage >= cfg.lexical_floor)
                           or (vector_meaningful and cand.cosine is not None and cand.cosine >= cfg.vector_floor))
    for item in ranked:
        cand = item.candidate
        # A revision of a memory that passed the floor is as relevant as that memory.
        if not passes[cand.id] and not passes.get(item.features.get("supersedes")):
            cos = f"{cand.cosine:.3f}" if cand.cosine is not None else "n/a"
            item.gated = (f"below floor: cosine {cos} < {cfg.vector_floor} and lexical coverage "
                          f"{cand.coverage:.2f} < {cfg.lexical_floor}")


def softmax(scores: Sequence[float], temperature: float) -> list[float]:
    """Attention weights: softmax(score / τ), numerically stable."""
    if not scores:
        return []
    tau = max(1e-6, temperature)
    top = max(scores)
    exps = [math.exp((s - top) / tau) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def _similarity(a: Candidate, b: Candidate, cosine_fn: Callable | None) -> float:
    if cosine_fn is not None and a.vector is not None and b.vector is not None:
        return float(cosine_fn(a.vector, b.vector))
    if a.terms and b.terms:
        return len(a.terms & b.terms) / len(a.terms | b.terms)
    return 0.0


def mmr_select(items: list[Ranked], *, limit: int, lam: float,
               cosine_fn: Callable | None = None) -> list[Ranked]:
    """Maximal marginal relevance over attention-ordered items; `lam` = 0 keeps score order.

    relevance is the score relative to the best one; each pick is penalised by its highest
    similarity to what is already selected.
    """
    pool = sorted(items, key=lambda r: r.score, reverse=True)
    if lam <= 0 or len(pool) <= 1:
        return pool[:limit]
    hi = pool[0].score if pool[0].score > 0 else 1.0
    chosen: list[Ranked] = []
    max_sim = [0.0] * len(pool)
    remaining = list(range(len(pool)))
    while remaining and len(chosen) < limit:
        best_index = max(remaining, key=lambda i: (1 - lam) * pool[i].score / hi - lam * max_sim[i])
        remaining.remove(best_index)
        picked = pool[best_index]
        chosen.append(picked)
        for i in remaining:
            max_sim[i] = max(max_sim[i], _similarity(pool[i].candidate, picked.candidate, cosine_fn))
    return chosen


def relative_cut(items: list[Ranked], cutoff: float) -> list[Ranked]:
    """Drop hits whose attention is below `cutoff` × the best attention (0 disables)."""
    if cutoff <= 0 or not items:
        return items
    best = max(r.attention for r in items)
    kept = []
    for item in items:
        if item.attention < cutoff * best:
            item.gated = f"relative cutoff: attention {item.attention:.4f} < {cutoff} x best {best:.4f}"
        else:
            kept.append(item)
    return kept


def budget(items: list[Ranked], max_tokens: int | None) -> list[Ranked]:
    """Keep results in order until the token budget is spent (the first always fits)."""
    if not max_tokens or max_tokens <= 0:
        return items
    kept, used = [], 0
    for item in items:
        if kept and used + item.candidate.tokens > max_tokens:
            item.gated = f"token budget {max_tokens} spent"
            continue
        kept.append(item)
        used += item.candidate.tokens
    return kept


def rank(cands: Sequence[Candidate], cfg: RankConfig, *, limit: int, max_tokens: int | None = None,
         cosine_fn: Callable | None = None) -> tuple[list[Ranked], list[Ranked]]:
    """The whole pipeline: features → gates → softmax → relative cut → MMR → budget.

    Returns (selected in order, dropped with a `gated` reason).
    """
    scored = score_candidates(cands, cfg, cosine_fn)
    gate(scored, cfg)
    kept = [r for r in scored if r.gated is None]
    for item, alpha in zip(kept, softmax([r.score for r in kept], cfg.temperature)):
        item.attention = alpha
    kept = relative_cut(kept, cfg.relative_cutoff)
    selected = mmr_select(kept, limit=limit, lam=cfg.mmr_lambda, cosine_fn=cosine_fn)
    chosen_ids = {id(r) for r in selected}
    for item in kept:
        if id(item) not in chosen_ids and item.gated is None:
            item.gated = "not selected (limit / diversity)"
    selected = budget(selected, max_tokens)
    dropped = [r for r in scored if r.gated is not None]
    return selected, dropped
