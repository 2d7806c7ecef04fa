"""Recall, top to bottom: check the arguments, analyse the query, gather candidates, rank, page, log."""
from __future__ import annotations

import time
from typing import Any, Sequence

from supermemory.config import ALL_NAMESPACES
from supermemory.retrieval import broad, ranking
from supermemory.retrieval.candidates import Gathered, gather, passages
from supermemory.retrieval.query import Query
from supermemory.store import embedding, reads, search_index, search_log
from supermemory.store import namespaces as nsm
from supermemory.store import records as rec_
from supermemory.store.context import StoreContext
from supermemory.store.records import format_id, public
from supermemory.text import estimate_tokens


def dot(a, b) -> float:
    """The ranker's cosine of two L2-normalised vectors."""
    import numpy as np

    return float(np.dot(a, b))


def analyse(ctx: StoreContext, text: str) -> Query:
    return Query.analyse(text, glossary=bool(ctx.config.get("ranking.glossary")))


def query_context(ctx: StoreContext, query: Query, doc_freq: dict | None = None) -> dict:
    """Per-query ranker inputs that need the store (document frequencies) or the model's vocabulary."""
    if doc_freq is None and (query.names or query.lead):
        doc_freq = search_index.doc_frequencies(ctx, query.name_lookup)

    def vocabulary():
        from supermemory.embed import vocabulary_words

        return vocabulary_words(ctx.config.model_dir)
    return query.ranker_context(doc_freq or {}, vocabulary)


def rank_config(ctx: StoreContext, query: Query, *, min_similarity: float | None = None,
                relative_cutoff: float | None = None, has_vectors: bool = True, doc_freq: dict | None = None,
                gates: bool = True, threshold: float | None = None,
                pooled_coverage: float = 0.0) -> ranking.RankConfig:
    """The ranker settings for one query: config file values plus per-call overrides.

    The relevance model was fitted on bge-small's cosines: with another embedder (or none) only the
    lexical evidence counts, as for a Chinese query; another embedder's cosines still mean something,
    so its vector-only hits are not turned away for want of a word of the query.
    """
    settings = ctx.config.section("ranking")
    calibrated = embedding.provider_id(ctx) == "onnx"
    extra: dict = {"use_cosine": has_vectors and calibrated, "pooled_coverage": pooled_coverage,
                   "uncalibrated_cosines": has_vectors and not calibrated and embedding.semantic(ctx)}
    if min_similarity is not None:
        extra["vector_floor"] = min_similarity
    if threshold is not None:
        extra["threshold"] = threshold
    if not gates:
        relative_cutoff = 0.0
        extra.update(vector_floor=0.0, relevance_floor=0.0, query_gate=False)
    return ranking.RankConfig.from_settings(settings, relative_cutoff=relative_cutoff,
                                            **query_context(ctx, query, doc_freq), **extra)


def candidates(ctx: StoreContext, text: str, *, namespace: str | None = None, n_cand: int = 60,
               channels: Sequence[str] = ("lexical", "vector")) -> tuple[Query, Gathered]:
    """The analysed query and its unranked candidates (for tuning the ranker on gathered candidates)."""
    query = analyse(ctx, text)
    now = ctx.clock()
    where, params = reads.filters(now=now)
    return query, gather(ctx, query, nsm.for_read(ctx, namespace), where, params, n_cand=n_cand,
                         channels=channels, now=now)


def recall(ctx: StoreContext, text: str, *, limit: int | None = None, namespace: str | None = None,
           kinds: Sequence[str] | None = None, tags: Sequence[str] | None = None,
           since: Any = None, until: Any = None, platform: str | None = None,
           max_tokens: int | None = None, explain: bool = False, explain_all: bool = False,
           min_similarity: float | None = None, relative_cutoff: float | None = None,
           gates: bool = True, touch: bool = True, lexical_only: bool = False, origin: str = "",
           channels: Sequence[str] = ("lexical", "vector"), status: str | None = None,
           intent: bool | None = None, relevance_threshold: float | None = None, trace: bool = True) -> dict:
    """Find the memories that answer `text`: hybrid candidates → ranker → gates → budget.

    :param relevance_threshold: nothing comes back when no candidate's relevance reaches it (0 = off);
        None: `ranking.relevance_threshold`.

    :param status: only tasks of this status (open, done, dropped).
    :param intent: read kind / status / time words in the query (`retrieval/broad.py`); None: the
        `recall.intent` setting.
    :param touch: count the hits as recalled and log the search; False (`recall --no-touch`, the page's searches, the
        briefing, bench runs): neither, so the recall stays out of `stats` and the Health figures.
    :param trace: count the hits as recalled (with `touch`) and write the search log; False for the look-ups a broad
        question makes before it answers (it traces the page it returns, once).

    Raises:
        InvalidInputError: bad arguments. NamespaceError: a namespace that does not exist.
    """
    started = time.perf_counter()
    text = rec_.clean_text(text, "query", max_chars=10_000)
    limit = rec_.integer(limit if limit is not None else int(ctx.config.get("recall.default_limit")), "limit", 1,
                         int(ctx.config.get("recall.max_limit")))
    max_tokens = rec_.integer(max_tokens if max_tokens is not None else int(ctx.config.get("recall.max_tokens")),
                              "max_tokens", 1, 1_000_000)
    for name, value in (("min_similarity", min_similarity), ("relative_cutoff", relative_cutoff),
                        ("relevance_threshold", relevance_threshold)):
        if value is not None:
            rec_.number(value, name, 0, 1)
    now = ctx.clock()
    namespaces = nsm.for_read(ctx, namespace, must_exist=True)
    # --- broad questions (issue #16 item 3): kind / status / time words, answered in retrieval/broad.py ---
    broad_on = broad.enabled(ctx, intent) and not (kinds or tags or since or until or platform or status)
    if broad_on:
        def plain(query: str = text, **overrides) -> dict:
            return recall(ctx, query, **{**dict(
                limit=limit, namespace=namespace, max_tokens=max_tokens, explain=explain, explain_all=explain_all,
                min_similarity=min_similarity, relative_cutoff=relative_cutoff, gates=gates, touch=False,
                lexical_only=lexical_only, origin=origin, channels=channels, intent=False,
                relevance_threshold=relevance_threshold, trace=False), **overrides})
        answered = broad.answer(ctx, text, now=now, namespace=namespace, namespaces=namespaces, limit=limit,
                                max_tokens=max_tokens, explain=explain or explain_all, touch=touch, origin=origin,
                                started=started, plain=plain)
        if answered is not None:
            if trace:
                _trace(ctx, {**answered, "query": text}, namespaces=namespaces, origin=origin, touch=touch)
            return answered
    # --- end broad questions ---
    where, params = reads.filters(kinds=kinds, tags=tags, since=since, until=until, platform=platform,
                                  status=status, now=now)
    query = analyse(ctx, text)
    n_cand = max(limit * 3, int(ctx.config.get("ranking.candidates")))
    found = gather(ctx, query, namespaces, where, params, n_cand=n_cand, channels=channels,
                   lexical_only=lexical_only, filtered=bool(kinds or tags or since or until or platform or status), now=now)
    selected, dropped, best = [], [], {}
    if found.candidates:
        cfg = rank_config(ctx, query, min_similarity=min_similarity, relative_cutoff=relative_cutoff,
                          has_vectors=found.query_vec is not None, doc_freq=found.doc_freq, gates=gates,
                          threshold=relevance_threshold, pooled_coverage=found.pooled_coverage)
        selected, dropped = ranking.rank(found.candidates, cfg, limit=limit,
                                         cosine_fn=dot if found.query_vec is not None else None)
        best = _passages(ctx, query, found, selected)
        kept = ranking.budget(selected, max_tokens)
        dropped += [item for item in selected if item.gated is not None]
        best = {item.candidate.id: best[item.candidate.id] for item in kept if item.extra_tokens}
        selected = kept
    if broad_on and not selected and found.query_vec is not None:
        # --- broad questions, read by meaning: nothing relevant and no intent words (retrieval/broad.py) ---
        guessed = broad.by_meaning(ctx, text)
        if guessed is not None:
            listed = broad.listing(ctx, text, guessed, namespace=namespace, namespaces=namespaces, limit=limit,
                                   max_tokens=max_tokens, explain=explain or explain_all, touch=touch, origin=origin,
                                   started=started, trace=trace)
            if listed["results"]:
                return listed
    return _page(ctx, query, namespaces, found, selected, dropped, best, started=started, touch=touch,
                 explain=explain or explain_all, explain_all=explain_all, origin=origin, trace=trace)


def _passages(ctx: StoreContext, query: Query, found: Gathered, selected) -> dict[int, dict]:
    """The passages of the long hits relevant on their own, each counted in its hit's `extra_tokens` for the
    budget (a passage that does not fit is left out, the hit kept). A filler hit (under the fitted threshold)
    stays a one-line pointer: a passage costs ~100 tokens a line, spent where the ranker believes the answer is."""
    relevant = ranking.shipped_threshold("auto")
    best = passages(ctx, query, found, [item.candidate.id for item in selected
                                        if item.features["relevance"] >= relevant])
    for item in selected:
        if item.candidate.id in best:
            item.extra_tokens = estimate_tokens(best[item.candidate.id]["text"])
    return best


def _features(item: ranking.Ranked) -> dict:
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in item.features.items()}


def _page(ctx: StoreContext, query: Query, namespaces, found: Gathered, selected, dropped, best: dict, *, started: float,
          touch: bool, explain: bool, explain_all: bool, origin: str, trace: bool = True) -> dict:
    """The result page (with explanations when asked), after the recall is counted and logged; `best` holds
    the passages (`_passages`)."""
    text = query.text
    results = []
    for item in selected:
        out = public(found.records[item.candidate.id])
        if item.candidate.superseded_by is not None:   # a live `supersedes` link: a newer memory holds the current fact
            out["superseded_by"] = format_id(item.candidate.superseded_by)
        if item.candidate.id in best:
            out["passage"] = best[item.candidate.id]
        out["score"] = round(item.score, 6)
        out["relevance"] = round(item.features["relevance"], 4)
        out["attention"] = round(item.attention, 6)
        if explain:
            out["features"] = _features(item)
            for key in ("superseded_by", "supersedes"):
                if key in out["features"]:
                    out["features"][key] = format_id(out["features"][key])
            out["contributions"] = {k: round(v, 4) for k, v in item.contributions.items()}
        results.append(out)
    latency = (time.perf_counter() - started) * 1000
    out = {"query": text, "namespaces": namespaces or [ALL_NAMESPACES], "results": results,
           "candidates": len(found.candidates), "relevant_from": ranking.shipped_threshold("auto"),
           "latency_ms": round(latency, 2),
           "tokens": sum(estimate_tokens(r["title"]) + estimate_tokens(r["summary"])
                         + estimate_tokens(r.get("passage", {}).get("text", "")) for r in results)}
    if explain:
        out["query_embedding"] = ("none" if found.instructed is None
                                  else "with the retrieval instruction" if found.instructed else "plain")
    if found.vector_error:
        out["warning"] = "vector search unavailable: " + found.vector_error
    if not results and dropped and all(d.gated == dropped[0].gated for d in dropped):
        out["note"] = dropped[0].gated   # the query gate turned every candidate away: say why
    if explain_all:
        out["dropped"] = [{"id": format_id(d.candidate.id), "title": found.records[d.candidate.id]["title"],
                           "reason": d.gated, "score": round(d.score, 4), "features": _features(d)}
                          for d in dropped]
    if trace:
        _trace(ctx, out, namespaces=namespaces, origin=origin, touch=touch)
    return out


def _trace(ctx: StoreContext, page: dict, *, namespaces, origin: str, touch: bool) -> None:
    """Count and log a ranked page. Only a hit relevant on its own counts as recalled: the filler below the fitted
    threshold would otherwise gain reinforcement from every recall that lists it and climb the next query's ranking."""
    search_log.trace_page(ctx, page, query=page["query"], namespaces=namespaces, origin=origin, touch=touch,
                          counted_from=ranking.shipped_threshold("auto"))
