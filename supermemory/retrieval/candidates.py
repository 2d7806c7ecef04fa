"""Recall candidates: FTS5 bm25 top-N ∪ vector KNN top-N, each with every ranking feature filled in."""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from supermemory.errors import EmbeddingUnavailableError, ModelMismatchError
from supermemory.retrieval import ranking
from supermemory.retrieval.query import Query, lookup_tokens, match_terms
from supermemory.store import embedding, reads, search_index, supersession, windows
from supermemory.store.context import StoreContext
from supermemory.text import answer_types, asks, code_share, estimate_tokens, excerpt, fts_match

logger = logging.getLogger(__name__)
_WARNED: set[str] = set()   # the 'recall without vectors' reasons already logged by this process

# What recall reads from a memory's text, remembered per content hash: a long-lived server reads each text once.
_CODE_SHARES: dict[str, float] = {}            # content hash → text.code_share
_ANSWER_TYPES: dict[tuple, frozenset] = {}     # (content hash, title) → text.answer_types.held
_PER_TEXT_MAX = 200_000


def _remembered(cache: dict, key, read):
    value = cache.get(key)
    if value is None:
        if len(cache) >= _PER_TEXT_MAX:
            cache.clear()
        value = cache[key] = read()
    return value


def memory_code_share(rec: dict) -> float:
    """How much a memory's body reads as code (`text.code_share`), remembered by content hash."""
    return _remembered(_CODE_SHARES, rec["content_hash"], lambda: code_share(rec["body"]))


def memory_answer_types(rec: dict) -> frozenset:
    """Which answer types (a number, a time, a person) a memory's title and body could hold (`text.answer_types`),
    remembered by content hash and title."""
    return _remembered(_ANSWER_TYPES, (rec["content_hash"], rec["title"]),
                       lambda: answer_types.held(f"{rec['title']}\n{rec['body']}"))


INSTRUCTION_SAMPLE = 5   # the best lexical matches `instructed` reads


def pooled_cosine(cosines: list[float], softness: float) -> float:
    """One cosine for a memory from its chunks' cosines: the best, lowered by a soft mean over the rest.

    The best chunk alone favours long memories: the more chunks a memory has, the likelier one of them
    lands near any query by chance. Log-mean-exp at temperature `softness` is the best cosine for a
    one-chunk memory and for chunks that agree, and at most `softness * ln(n)` below it otherwise. Recall
    scales `ranking.chunk_softness` by the memory's code share: a question about a function describes all
    of it, while a question about a long prose text asks for one passage of it (bench/RESULTS.md)."""
    best = max(cosines)
    if softness <= 0 or len(cosines) == 1:
        return best
    return best + softness * math.log(sum(math.exp((c - best) / softness) for c in cosines) / len(cosines))


def instructed(ctx: StoreContext, cands: dict, records: dict) -> bool:
    """Whether the query is embedded with bge's retrieval instruction: yes, unless its best lexical matches
    read as source code (mean `text.code_share` of the top few at or above
    `embedder.query_instruction_code_below`). The instruction was trained for questions against passages;
    on the dev sets it lifts every prose kind and costs code search (bench/RESULTS.md)."""
    best = sorted((c for c in cands.values() if c.id in records), key=lambda c: c.bm25)[:INSTRUCTION_SAMPLE]
    share = sum(memory_code_share(records[c.id]) for c in best) / len(best) if best else 0.0
    return share < float(ctx.config.get("embedder.query_instruction_code_below"))


SESSION_SECONDS = 3600   # two memories written this close together, one right after the other, share a context


def same_conversation(question: dict, answer: dict) -> bool:
    """Whether two memories, one written right after the other, can be turns of one conversation: both within
    SESSION_SECONDS, of one kind and namespace, written by one platform, and neither a `session` digest.

    A digest quotes the user's requests (question marks and all) but is a summary, not a turn; a fact the CLI
    wrote five minutes after it answered nothing in it, yet inherited its words and outranked it."""
    return (question["kind"] == answer["kind"] != "session" and question["namespace"] == answer["namespace"]
            and question["platform"] == answer["platform"]
            and abs(question["created_at"] - answer["created_at"]) <= SESSION_SECONDS)


def after_question(query: Query, idf: dict, records: dict, term_sets: dict,
                   coverage: dict) -> dict[int, float]:
    """Per candidate: the query IDF mass that the memory written just before it adds to its own coverage, when
    that memory asks a question and this one does not (an answer to it), both turns of one conversation
    (`same_conversation`).

    In a conversation an answer ("the staging one, since Tuesday") often names little of what a later query
    asks about it ("which database did the billing service move to?"); the question it answers ("which
    database is billing on now?") names the rest. Only candidates count as that previous memory: their
    tokens are at hand.
    """
    at = {(rec["root_id"] or memory_id): memory_id for memory_id, rec in records.items()}
    out = {}
    for memory_id, rec in records.items():
        before = at.get((rec["root_id"] or memory_id) - 1)
        if before is None or not same_conversation(records[before], rec):
            continue
        if not asks(records[before]["body"]) or asks(rec["body"]):
            continue
        both = term_sets.get(memory_id, set()) | term_sets.get(before, set())
        gain = query.coverage(idf, both) - coverage[memory_id]
        if gain > 0:
            out[memory_id] = gain
    return out


@dataclass
class Gathered:
    """What the ranker and the result page need from the store, for one query."""

    candidates: list[ranking.Candidate]
    records: dict[int, dict]
    query_vec: Any = None
    vector_error: str | None = None
    doc_freq: dict | None = None
    pooled_coverage: float = 0.0     # the query's IDF mass found anywhere among the candidates' tokens
    instructed: bool | None = None   # the query was embedded with the retrieval instruction (None: not embedded)
    best_chunk: dict = field(default_factory=dict)   # memory id → seq of its best-matching chunk (bm25)


def passages(ctx: StoreContext, query: Query, found: Gathered, memory_ids: list[int]) -> dict[int, dict]:
    """The chunk of each long hit (more than one chunk) that best answers the query: its best BM25 chunk
    (`gather` saw it), else (a hit found by meaning alone) its chunk of highest cosine; its text is the
    `excerpt` around the query's rarest word there (~100 tokens a long hit adds to the page, not a chunk's 260). {memory_id: {"chunk", "chunks",
    "text"}}. A long memory's title and first sentence rarely say where in it the answer is; this does,
    without its whole body."""
    import numpy as np

    counts = {m: n for m, n in search_index.chunk_counts(ctx, memory_ids).items() if n > 1}
    if not counts:
        return {}
    best = {m: found.best_chunk[m] for m in counts if m in found.best_chunk}
    if found.query_vec is not None:
        for memory_id in (m for m in counts if m not in best):
            scored = [(float(np.dot(vec, found.query_vec)), seq) for seq, vec in search_index.chunk_vectors_by_seq(
                ctx, memory_id)]
            if scored:
                best[memory_id] = max(scored)[1]
    return {m: {"chunk": seq + 1, "chunks": counts[m], "text": excerpt(search_index.chunk_text(ctx, m, seq), query.text)}
            for m, seq in best.items()}


def gather(ctx: StoreContext, query: Query, namespaces: list[str] | None, where: str, params: list, *,
           n_cand: int, channels: Sequence[str] = ("lexical", "vector"), lexical_only: bool = False,
           filtered: bool = False, now: float) -> Gathered:
    """Candidates for `query` among live memories in `namespaces` passing `where` (a `reads.filters` clause).

    :param channels: ("lexical",), ("vector",) or both (the baselines use one).
    :param lexical_only: never load the embedding model (hooks).
    :param filtered: a filter narrows the rows, so more lexical rows are read before the cut.
    """
    total = search_index.live_chunk_count(ctx, namespaces) or 1
    looked_up = lookup_tokens(query)
    doc_freq = search_index.doc_frequencies(ctx, looked_up, namespaces)
    unseen = query.unseen_agent_noun_bases(doc_freq)
    if unseen:   # a doer noun no memory holds (most queries have none): its base's frequency, then its reading
        bases = sorted(set(unseen.values()) - set(looked_up))
        doc_freq = {**doc_freq, **search_index.doc_frequencies(ctx, bases, namespaces)} if bases else doc_freq
        query = query.with_agent_noun_bases(doc_freq)
    idf = query.idf(doc_freq, total)
    cands: dict[int, ranking.Candidate] = {}
    term_sets: dict[int, set] = {}
    best_chunk: dict[int, int] = {}
    if query.terms and "lexical" in channels:
        ns_match = ""
        if not search_index.covers_all(ctx, namespaces):   # else the condition costs a scan and drops nothing
            ns_match = "ns : (" + " OR ".join('"ns_' + n + '"' for n in namespaces) + ") AND "
        terms = match_terms(query, doc_freq, total, float(ctx.config.get("ranking.match_max_df")))
        match = ns_match + "tokens : (" + fts_match(terms) + ")"
        for memory_id, bm25, tokens, seq in search_index.lexical_hits(ctx, match, namespaces, where, params,
                                                                       n_cand * (4 if filtered else 1)):
            cand = cands.get(memory_id)
            if cand is None or bm25 < (cand.bm25 or 0):
                cands[memory_id] = ranking.Candidate(id=memory_id, bm25=bm25)
                best_chunk[memory_id] = seq
            term_sets.setdefault(memory_id, set()).update(tokens.split())
    records = reads.live_records(ctx, list(cands), namespaces, where, params)   # the lexical candidates
    looked = set(cands)
    query_vec, vector_error, with_instruction = None, None, None
    if not lexical_only and "vector" in channels:
        with_instruction = instructed(ctx, cands, records)
        try:
            query_vec = embedding.embedder(ctx).embed_query(query.embedded, instructed=with_instruction)
        except (EmbeddingUnavailableError, ModelMismatchError) as exc:
            vector_error = str(exc)
            if vector_error not in _WARNED:   # once per process: a broad query recalls up to three times, and
                _WARNED.add(vector_error)     # every result carries the reason anyway (`vector_error`)
                logger.warning("recall without vectors: %s", exc)
    if query_vec is not None and not query_vec.any():  # e.g. a query of punctuation only
        query_vec = None
    if query_vec is not None:
        for memory_id, _cos in search_index.vector_search(ctx, query_vec, namespaces, n_cand, live_chunks=total):
            cands.setdefault(memory_id, ranking.Candidate(id=memory_id))
    if query_vec is None:
        with_instruction = None
    if not cands:
        return Gathered([], {}, query_vec, vector_error, doc_freq, instructed=with_instruction)
    found_by_vector = [i for i in cands if i not in looked]
    if found_by_vector:
        records.update(reads.live_records(ctx, found_by_vector, namespaces, where, params))
        records = dict(sorted(records.items()))      # one order, however the candidates came
    for memory_id, tokens in search_index.chunk_tokens(ctx, [i for i in records if i not in term_sets]):
        term_sets.setdefault(memory_id, set()).update(tokens.split())
    vectors: dict[int, Any] = {}
    chunk_cosines: dict[int, list[float]] = {}
    softness = float(ctx.config.get("ranking.chunk_softness"))
    if query_vec is not None:
        import numpy as np

        for memory_id, vec in search_index.live_chunk_vectors(ctx, list(records), namespaces):
            cos = float(np.dot(vec, query_vec))
            cand = cands[memory_id]
            chunk_cosines.setdefault(memory_id, []).append(cos)
            if cand.cosine is None or cos > cand.cosine:
                cand.cosine = cos
                vectors[memory_id] = vec
    pooled = query.coverage(idf, frozenset().union(*(term_sets.get(i, ()) for i in records)))
    successors = supersession.successors(ctx, list(records))   # live `supersedes` links (demoted, not hidden)
    coverage = {memory_id: query.coverage(idf, term_sets.get(memory_id, set())) for memory_id in records}
    answers = after_question(query, idf, records, term_sets, coverage)
    final = []
    for memory_id, rec in records.items():
        cand = cands[memory_id]
        tset = term_sets.get(memory_id, set())
        cand.coverage = coverage[memory_id]
        cand.after_question = answers.get(memory_id, 0.0)
        cand.importance = rec["importance"]
        cand.confidence = rec["confidence"]
        cand.pinned = bool(rec["pinned"])
        # How new the fact is. Being recalled is `reinforcement`'s to count: read into recency too, a recall lifted its
        # hits by up to both priors, and of two questions asked in a row the second could lead with another memory
        # than the first (fresh-user run fu25 D7).
        cand.age_days = max(0.0, (now - rec["updated_at"]) / 86400)
        cand.recall_count = rec["recall_count"]
        cand.tokens = estimate_tokens(rec["title"]) + estimate_tokens(rec["summary"]) + 12
        cand.vector = vectors.get(memory_id)
        cand.terms = frozenset(tset)
        cand.superseded_by = successors.get(memory_id)
        cand.code = memory_code_share(rec) if query_vec is not None else 0.0   # read only beside cosines
        if query.answer_types:      # read only for a question asking for a number, a time or a person
            cand.answer_types = memory_answer_types(rec) & query.answer_types
        if len(chunk_cosines.get(memory_id, ())) > 1:   # a long function: its chunks read together (pooled_cosine)
            cand.cosine = pooled_cosine(chunk_cosines[memory_id], softness * cand.code)
        final.append(cand)
    share = float(ctx.config.get("ranking.window_share"))
    if query_vec is not None and share > 0:
        # A memory's cosine moves `share` of the way to its best two-sentence window's when that is higher: a fact
        # said in passing in a long text matches by meaning too (bench/RESULTS.md, "Two-sentence windows").
        for memory_id, best in windows.best_cosines(ctx, [c.id for c in final if c.cosine is not None],
                                                    query_vec).items():
            cand = cands[memory_id]
            if best > cand.cosine:
                cand.window_cosine = best
                cand.cosine += share * (best - cand.cosine)
    return Gathered(final, records, query_vec, vector_error, doc_freq, pooled, with_instruction, best_chunk)
