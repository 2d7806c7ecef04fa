"""The ranker: relevance log-odds plus priors, the nothing-relevant gate, softmax attention, MMR, budget; pure.

The caller (retrieval/pipeline.py) fetches candidates and passes `now`; everything here is deterministic.

How the channels are weighted: not by fixed weights but by the relevance model (`relevance.py`), a
logistic regression over each candidate's lexical and dense evidence, read on the query's own scale, and
what the whole candidate set shows about the query, fitted on six dev sets by bench/fit_relevance.py.
Its probability is `relevance` in every explanation; a query whose best candidate stays below the
calibrated threshold gets nothing, and where cosines mean nothing (Chinese, no embedder) a hit needs a
word of the query. Importance, recency, recall count, pinned and stale (a live
`supersedes` link targets it, written by `remember`: `store/supersession.py`) are small priors added
to the log-odds; a successor among the candidates is lifted just above what it supersedes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from supermemory.retrieval import relevance
from supermemory.settings import DEFAULTS

PRIORS = ("importance", "recency", "reinforcement", "pinned", "superseded")
FEATURES = relevance.FEATURES + PRIORS


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
    code: float = 0.0                  # how much the memory reads as source code (text.code_share: 0 prose, 1 code)
    after_question: float = 0.0        # query IDF mass the question written just before it adds (candidates.py)
    answer_types: frozenset | None = None   # which answer types the query asks for it holds (None: not read)
    window_cosine: float | None = None  # its best two-sentence window's cosine, when higher than the text's (store/windows.py)


_R = DEFAULTS["ranking"]          # the shipped settings: RankConfig() is what users run


def shipped_threshold(configured) -> float:
    """`ranking.relevance_threshold`: "auto" = the fitted one, a number, 0 = never return nothing."""
    return relevance.shipped().threshold if configured == "auto" else float(configured)


@dataclass(frozen=True)
class RankConfig:
    """Every knob of the ranker, defaulting to `settings.DEFAULTS['ranking']` (per-query inputs
    default to "nothing known about the query")."""

    weights: dict = field(default_factory=lambda: dict(_R["weights"]))   # the priors, in log-odds
    temperature: float = _R["temperature"]
    half_life_days: float = _R["half_life_days"]
    mmr_lambda: float = _R["mmr_lambda"]
    threshold: float = field(default_factory=lambda: shipped_threshold(_R["relevance_threshold"]))
    vector_floor: float = _R["vector_floor"]          # a cosine floor the user asked for (0 = none)
    relevance_floor: float = _R["relevance_floor"]    # a hit needs at least this relevance (0 = none)
    relative_cutoff: float = _R["relative_cutoff"]
    cjk_share: float = 0.0             # share of CJK characters in the query (set per query)
    use_cosine: bool = True            # False: the embedder's cosines carry no meaning (hash provider)
    background_prior: float = 0.5      # background cosine assumed when there are too few candidates
    unknown_names: tuple = ()          # the query's names when no memory mentions any of them (per query)
    content_terms: int = relevance.FEW_TERMS   # how many content words the query has (per query; unknown: not short)
    query_code: bool = True            # the query spells code (per query; unknown: its words count for code memories)
    answer_types: frozenset = frozenset()   # what the query asks for: a number, a time, a person (per query)
    pooled_coverage: float = 0.0       # the query's IDF mass found anywhere among the candidates (per query)
    uncalibrated_cosines: bool = False  # an embedder the model was not fitted on, whose cosines mean something
    query_gate: bool = True            # False: no nothing-relevant gate at all (recall(gates=False))
    model: relevance.Model | None = None   # None: the shipped coefficients
    baseline: str = ""                 # "lexical" / "vector": order by bm25 or cosine alone (bench --mode)

    @classmethod
    def from_settings(cls, settings: dict, **overrides) -> "RankConfig":
        known = {k: v for k, v in settings.items() if k in cls.__dataclass_fields__}
        if "relevance_threshold" in settings:
            known["threshold"] = shipped_threshold(settings["relevance_threshold"])
        known.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**known)


@dataclass
class Ranked:
    """A selected (or gated) candidate with its explanation."""

    candidate: Candidate
    features: dict
    names: tuple                       # the features whose shares make up the score, in order
    shares: list                       # their shares (the same order): what `contributions` holds by name
    score: float
    attention: float = 0.0
    gated: str | None = None           # why it was dropped, None when kept
    extra_tokens: int = 0              # what its passage adds to the page; dropped first when over budget
    _contributions: dict | None = field(default=None, repr=False, compare=False)

    @property
    def contributions(self) -> dict:
        """Each feature's share of the score (they add up to it), made when first read: a recall ranks about 120
        candidates and explains ten (building them all was about 0.25 ms of a 7 ms warm recall at 10k)."""
        if self._contributions is None:
            self._contributions = dict(zip(self.names, self.shares))
        return self._contributions


def recency(age_days: float, half_life_days: float) -> float:
    """Exponential decay: 1.0 now, 0.5 after one half-life."""
    if half_life_days <= 0:
        return 0.0
    return math.exp(-math.log(2) * max(0.0, age_days) / half_life_days)


def reinforcement(recall_count: int) -> float:
    """`log(1 + times recalled)`, scaled so ten recalls give 1.0."""
    return min(1.0, math.log1p(max(0, recall_count)) / math.log1p(10))




def query_evidence(cands: Sequence[Candidate], cfg: RankConfig) -> relevance.QueryEvidence:
    """What the candidate set and the per-query inputs say about this query's channels (the one place the
    ranker's settings become the relevance model's query evidence; bench/fit_relevance.py reads it too)."""
    return relevance.evidence(cands, cjk=cfg.cjk_share if cfg.use_cosine else 1.0,
                              unknown_name=bool(cfg.unknown_names), prior=cfg.background_prior,
                              pooled_coverage=cfg.pooled_coverage, content_terms=cfg.content_terms,
                              has_cosines=cfg.use_cosine, query_code=cfg.query_code,
                              answer_types=cfg.answer_types)


def score_candidates(cands: Sequence[Candidate], cfg: RankConfig,
                     cosine_fn: Callable | None = None) -> list[Ranked]:
    """Features, contributions and the score of every candidate (no gating).

    The score is the relevance model's log-odds (`relevance.py`: the channels weighted by the evidence
    this query shows) plus small priors (importance, recency, recall count, pinned, stale); `relevance`
    is the model's probability before the priors, for the best hit, and that times its odds against the
    best for every other (`_hit_relevance`).
    """
    model = cfg.model or relevance.shipped()
    ev = query_evidence(cands, cfg)
    names = ("intercept",) + model.names + PRIORS
    priors = cfg.weights
    prior_weights = tuple(priors.get(name, 0.0) for name in PRIORS)
    out, logits = [], []
    for cand in cands:
        features = relevance.features(cand, ev)
        shares = model.shares(features)
        logit = model.intercept + sum(shares)
        features["importance"] = max(0.0, min(1.0, cand.importance)) * max(0.0, min(1.0, cand.confidence)) - 0.5
        features["recency"] = recency(cand.age_days, cfg.half_life_days)
        features["reinforcement"] = reinforcement(cand.recall_count)
        features["pinned"] = 1.0 if cand.pinned else 0.0
        features["superseded"] = 0.0
        # each feature's share of the log-odds, then the priors'
        shares.insert(0, model.intercept)
        shares += [w * features[name] for w, name in zip(prior_weights, PRIORS)]
        used = names
        if cfg.baseline:   # one channel alone, as it ranks by itself
            own = (relevance.bm25_share(cand, ev) if cfg.baseline == "lexical"
                   else cand.cosine if cand.cosine is not None else -1.0)
            used, shares = (cfg.baseline,), [own]
        logits.append(logit)
        features["cosine"] = cand.cosine    # the raw cosine, for reading (the model reads it through the above)
        if cand.window_cosine is not None:   # `cosine` was moved toward it (`ranking.window_share`)
            features["window_cosine"] = cand.window_cosine
        features["background"] = ev.background
        out.append(Ranked(cand, features, used, shares, sum(shares)))
    _hit_relevance(out, logits)
    stale = {c.id: c.superseded_by for c in cands if c.superseded_by is not None}
    for item in out:
        if item.candidate.id in stale:   # demoted, never hidden: the contributions still add up to the score
            item.features["superseded"] = 1.0
            item.features["superseded_by"] = stale[item.candidate.id]
            item.contributions["superseded"] = priors.get("superseded", 0.0)
            item.score += item.contributions["superseded"]
    _lift_revisions(out, stale)
    return out


def _hit_relevance(scored: list[Ranked], logits: list[float]) -> None:
    """Each hit's `relevance` from its model log-odds (`logits`, in the order of `scored`): the best hit's
    probability (calibrated: the chance the query has its answer in the top five), scaled for every other hit
    by exp(its log-odds - the best's), its odds against the best one. The query-level evidence is the same for
    every candidate of a query, so it cancels there: filler listed under a clear answer reads near 0, not
    near the answer's 0.99, and only hits relevant on their own get passages and count as recalled."""
    if not scored:
        return
    best = max(logits)
    top = relevance.probability(best)
    for item, logit in zip(scored, logits):
        item.features["relevance"] = top * math.exp(logit - best)


def _lift_revisions(scored: list[Ranked], stale: dict[int, int]) -> None:
    """A revising memory answers whatever the memory it revises answers, with the current facts:
    it scores at least a little above that memory's unpenalised score (`supersedes` contribution), and
    its relevance is at least that memory's (an agent trusting the figure must not take the stale one).
    """
    by_id = {r.candidate.id: r for r in scored}
    for old_id, new_id in stale.items():
        old, new = by_id[old_id], by_id.get(new_id)
        if new is None:   # the successor is not among this query's candidates
            continue
        new.features["relevance"] = max(new.features["relevance"], old.features["relevance"])
        unpenalised = old.score - old.contributions.get("superseded", 0.0)
        lift = max(0.0, unpenalised + 0.01 - new.score)
        if lift > new.contributions.get("supersedes", 0.0):
            new.score += lift - new.contributions.get("supersedes", 0.0)
            new.contributions["supersedes"] = lift
            new.features["supersedes"] = old_id


def query_has_evidence(ranked: list[Ranked], cfg: RankConfig) -> tuple[bool, str]:
    """Query-level gate: is any candidate likely enough to be relevant (the calibrated threshold)?"""
    threshold = cfg.threshold
    if threshold <= 0 or not ranked:
        return True, ""
    best = max(ranked, key=lambda r: r.features["relevance"])
    p = best.features["relevance"]
    if p >= threshold:
        return True, ""
    return False, (f"nothing relevant: best relevance {p:.3f} < threshold {threshold:.3f} (best cosine "
                   f"{_fmt(best.candidate.cosine)} vs background {best.features['background']:.3f}, best lexical "
                   f"coverage {max(r.candidate.coverage for r in ranked):.2f})")


def _fmt(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "n/a"


def gate(ranked: list[Ranked], cfg: RankConfig) -> None:
    """The query gate (nothing relevant), the per-hit relevance floor, the optional cosine floor a user set."""
    ok, reason = query_has_evidence(ranked, cfg) if cfg.query_gate else (True, "")
    if not ok:
        for item in ranked:
            item.gated = reason
        return
    for item in ranked:
        p = item.features["relevance"]
        unread = cfg.uncalibrated_cosines and item.candidate.bm25 is None   # found by cosines the model cannot weigh
        if (cfg.relevance_floor > 0 and item.features["blind"] >= 1.0 and item.candidate.bm25 is None
                and not cfg.uncalibrated_cosines):
            item.gated = "no evidence: no word of the query, and its cosine means nothing here (Chinese or no embedder)"
        elif p < cfg.relevance_floor and item.features.get("supersedes") is None and not unread:
            item.gated = f"below the relevance floor: {p:.4f} < {cfg.relevance_floor}"
    if cfg.vector_floor <= 0 or not cfg.use_cosine:
        return
    for item in ranked:
        cand = item.candidate
        if item.gated:
            continue
        revises_a_hit = item.features.get("supersedes") is not None   # as relevant as what it revises
        if cand.cosine is not None and cand.cosine < cfg.vector_floor and cand.bm25 is None and not revises_a_hit:
            item.gated = f"below floor: cosine {cand.cosine:.3f} < {cfg.vector_floor} and no lexical match"


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

    relevance is the attention relative to the best one; each pick is penalised by its highest
    similarity to what is already selected.
    """
    pool = sorted(items, key=lambda r: r.score, reverse=True)
    if lam <= 0 or len(pool) <= 1:
        return pool[:limit]
    hi = max(pool[0].attention, 1e-12)
    chosen: list[Ranked] = []
    max_sim = [0.0] * len(pool)
    remaining = list(range(len(pool)))
    while remaining and len(chosen) < limit:
        best_index = max(remaining, key=lambda i: (1 - lam) * pool[i].attention / hi - lam * max_sim[i])
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
    """Keep results in order until the token budget is spent (the first always fits). A hit whose
    `extra_tokens` (its passage) do not fit keeps its line without them (`extra_tokens` set to 0)."""
    if not max_tokens or max_tokens <= 0:
        return items
    kept, used = [], 0
    for item in items:
        if used + item.candidate.tokens + item.extra_tokens > max_tokens:
            item.extra_tokens = 0
        if kept and used + item.candidate.tokens > max_tokens:
            item.gated = f"token budget {max_tokens} spent"
            continue
        kept.append(item)
        used += item.candidate.tokens + item.extra_tokens
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
