"""Broad questions ("anything open?", "decisions on the cache layer"): recall by kind, task status and time.

`retrieval.intent` reads the facets; this module answers with them. A query made only of intent
words is answered by listing the matching memories newest first (through `store.reads`, so
namespaces, expiry and the read filters are the same as everywhere), within `limit` and the token
budget; one a newer memory supersedes comes after the current ones, marked (`superseded_by`), as recall
demotes it, and a question of time alone ("what did I work on last month") lists the session digests of the
period first, the other kinds after them; one naming the sessions ("what did we do last session", 上次会话) lists the
digests alone. A query with a topic as well gets the facets as a filter on the normal recall, kept only when that
recall finds something; otherwise the plain recall answers, so it is never worse, and its `note` says the kind,
status or period words were set aside.
`pipeline.recall` calls `answer` in one marked place and hands it the plain recall as a function.
"""
from __future__ import annotations

import functools
import time
from typing import Callable

from supermemory.config import ALL_NAMESPACES, KINDS
from supermemory.retrieval import intent as intent_
from supermemory.retrieval import ranking
from supermemory.errors import SupermemoryError
from supermemory.store import embedding, reads, search_log
from supermemory.store.context import StoreContext
from supermemory.store.records import parse_id, public
from supermemory.text import estimate_tokens
from supermemory.transcripts.digest import OPEN_ENDS_HEADING, headline

LISTED_KINDS = tuple(k for k in KINDS if k != "session")   # the kinds a question of time alone lists after the digests
MAX_PAGE = 1000   # the longest page `reads.list_memories` reads


def enabled(ctx: StoreContext, flag: bool | None) -> bool:
    """The per-call switch, else the `recall.intent` setting."""
    return bool(ctx.config.get("recall.intent")) if flag is None else bool(flag)


def answer(ctx: StoreContext, text: str, *, now: float, namespace: str | None, namespaces: list[str] | None,
           limit: int, max_tokens: int | None, explain: bool, touch: bool, origin: str, started: float,
           plain: Callable[..., dict]) -> dict | None:
    """The answer to a broad query, or None when the query names no kind, status or time.

    :param plain: the normal recall, of `text` or of the query given first, taking extra read filters
        (`kinds`, `status`, `since`, `until`) and other recall arguments (`touch`, `relevance_threshold`)
        as keywords.
    :param namespaces: what `namespace` resolved to (for the page and the search log).
    """
    found = intent_.parse(text, now)
    if not found.active:
        return None
    if found.only:
        return listing(ctx, text, found, namespace=namespace, namespaces=namespaces, limit=limit,
                       max_tokens=max_tokens, explain=explain, touch=touch, origin=origin, started=started, trace=False)
    # The filter stands for the intent words: the filtered recall ranks the memories of that kind, status or
    # period by the topic alone. Its nothing-relevant gate passes when the topic has an answer among them, or
    # when the question as asked has one of them among its answers (a one-word topic alone reads weaker than the
    # whole question, which the short-query evidence holds against it); then the filtered recall lists by topic
    # without the gate. When the question's answers are all of another kind, status or period, they are the
    # answer (a fresh-user run: "decisions about migrations on Fridays" listed two unrelated decisions at relevance
    # 0.03 and left out the preference that answers it), provided what it names besides its intent words finds
    # something ("open tasks about helm" found a memory on OpenSearch through "open"). When it has none, the
    # store has no answer, and a question naming a kind and a subject the store never mentions lists none of that
    # kind's unrelated memories (bench/RESULTS.md).
    filters = dict(kinds=list(found.kinds) or None, status=found.status, since=found.since, until=found.until)
    result = plain(found.topic or text, **filters)
    if not result["results"]:
        asked = plain()
        if not asked["results"]:
            if explain:
                asked["intent"] = {**found.as_dict(), "applied": "none (nothing relevant to the question)"}
            return asked
        # Its answers: the hit it leads with and every hit relevant on its own, not the filler listed below them.
        relevant = ranking.shipped_threshold("auto")
        answers = {asked["results"][0]["id"]} | {r["id"] for r in asked["results"]
                                                if r["relevance"] is not None and r["relevance"] >= relevant}
        result = plain(found.topic or text, **filters, relevance_threshold=0)
        if not answers & {r["id"] for r in result["results"]}:
            # The question as asked ranks its answers (its intent words help the order); the rest only vouches.
            topical = plain(found.rest) if found.rest else {**asked, "results": []}
            answer = asked if topical["results"] else {**topical, "query": text}
            if explain:
                answer["intent"] = {**found.as_dict(), "applied": "none (the question's answers are of another kind)"
                                    if topical["results"] else "none (nothing relevant to the topic)"}
            return _set_aside(answer, found)
    elif not (found.since or found.until):
        # The filtered recall ranks that kind's memories by the topic alone, and a weak one passes its gate. When the
        # question as asked is answered more surely by memories none of which is of that kind or status, and the
        # filtered best is not among them, it is an unrelated memory of that kind (fresh-user run fu25 D6: "what did
        # we decide about the staging database being read-only" listed an order-transaction decision at 0.42; a note
        # answered it at 0.99). A filtered best as sure as the plain answer stands (a gotcha asked for by its topic).
        asked = plain()
        relevant = ranking.shipped_threshold("auto")
        answers = [r for i, r in enumerate(asked["results"])
                   if i == 0 or (r["relevance"] is not None and r["relevance"] >= relevant)]
        best = result["results"][0]
        if (answers and best["id"] not in {r["id"] for r in answers} and not any(_of(r, found) for r in answers)
                and (answers[0]["relevance"] or 0.0) > (best["relevance"] or 0.0)):
            if explain:
                asked["intent"] = {**found.as_dict(), "applied": "none (the question's answers are of another kind)"}
            return _set_aside(asked, found)
    applied = bool(result["results"])
    if applied:
        result["query"] = text
        result["note"] = "intent filter: " + found.describe()
    else:
        result = _set_aside(plain(), found)
    if explain:
        result["intent"] = {**found.as_dict(), "applied": "filter" if applied else "none (the filtered recall was empty)"}
    return result


def _of(hit: dict, found: intent_.Intent) -> bool:
    """Is a hit of the kind and task status the question names?"""
    return (not found.kinds or hit["kind"] in found.kinds) and (not found.status or hit.get("status") == found.status)


def _set_aside(result: dict, found: intent_.Intent) -> dict:
    """`result`, a recall that answers without the facets the question's words named, with a `note` saying so: hits
    of another kind must not read as the kind asked for (a fresh-user run: "关于数据库的决定" was answered by two
    gotchas without a word)."""
    if result["results"]:
        said = found.describe() + " set aside: no such memory answers, the plain recall does"
        result["note"] = said + (" · " + result["note"] if result.get("note") else "")
    return result


def by_meaning(ctx: StoreContext, text: str) -> intent_.Intent | None:
    """The kind or task status a question asks for, read from its meaning when its words named none and the text match
    found nothing (`intent.from_meaning`); None without the calibrated embedder (another one, or feature hashing,
    puts its cosines on another scale)."""
    if embedding.provider_id(ctx) != "onnx":
        return None
    try:
        embedder = embedding.embedder(ctx)
    except SupermemoryError:
        return None
    facets, vectors = _prototype_vectors(embedder)
    cosines = vectors @ embedder.embed_query(text)
    nearest: dict[str, float] = {}
    for facet, cosine in zip(facets, cosines.tolist()):
        nearest[facet] = max(nearest.get(facet, -1.0), cosine)
    return intent_.from_meaning(nearest)


@functools.lru_cache(maxsize=4)
def _prototype_vectors(embedder) -> tuple[tuple[str, ...], "object"]:
    """The prototype questions' facets and vectors (embedded as queries are), once per embedder."""
    rows = intent_.prototypes()
    return tuple(facet for facet, _ in rows), embedder.embed_batch([question for _, question in rows])


def _reason(found: intent_.Intent, widened: bool) -> str:
    """What the listing applied, e.g. "broad query: kind=task status=open"."""
    from supermemory.timeparse import iso

    parts = ["kind=" + ",".join(found.kinds) if found.kinds else "all kinds" + (" (sessions first)" if _with_sessions(found)
                                                                             else "")]
    if found.status:
        parts.append("status=" + found.status)
    if widened:
        parts.append("(nothing recent: the newest)")
    elif found.since is not None:
        parts.append(("recent, since=" if found.soft_since else "since=") + str(iso(found.since)))
    if found.until is not None:
        parts.append("until=" + str(iso(found.until)))
    return "broad query" + (" (read by meaning)" if found.by_meaning else "") + ": " + " ".join(parts)


def _with_sessions(found: intent_.Intent) -> bool:
    """Whether session digests lead the listing: a question that names only a period asks what was done then,
    and the digests are the record of that; one naming a kind or a task status asks for those memories only.

    They come first, not after the other kinds: one digest is the record of a whole session (its requests, the files
    it edited, the commands it ran, what it left open), while a decision or a gotcha remembered that day is one fact
    of that work, which the session's digest usually names too. Listed after them, the digests were cut at the default
    page of 8 by any busy day's facts (a fresh-user run: "what did we work on today" left out both of the day's
    digests), so the answer to "what did we work on" lost the one memory that says it; first, they take at most the
    page, and the period's other memories fill what they leave.
    """
    return not found.kinds and not found.status


def _page(ctx: StoreContext, found: intent_.Intent, since: float | None, *, namespace: str | None,
          limit: int) -> dict:
    """The first `limit` memories of the facets, current ones first and then those a newer memory supersedes
    (`superseded_by`; demoted as recall demotes them, never hidden), each group newest first; for a question of
    time alone, the session digests of the period before them, newest first (`_with_sessions`); for open tasks, after them the recent
    session digests (of the last `briefing.recent_days`, the briefing's "recent") whose open ends are listed (a
    to-do the user said in a session is open work too), newest first.

    A page holding superseded memories is read again, longer by as many, so that a current memory just past
    the first `limit` is not left out for an outdated one.
    """
    kinds = list(found.kinds) or list(LISTED_KINDS)
    first, total = [], 0
    if _with_sessions(found):
        sessions = reads.list_memories(ctx, namespace=namespace, kinds=["session"], since=since, until=found.until,
                                       limit=limit, order="recent")
        first, total = sessions["items"], sessions["total"]
        limit -= len(first)
        if limit <= 0:
            page = reads.list_memories(ctx, namespace=namespace, kinds=kinds, since=since, until=found.until, limit=1,
                                       order="recent")
            return {"items": first, "total": total + page["total"]}
    wanted = limit
    while True:
        page = reads.list_memories(ctx, namespace=namespace, kinds=kinds, status=found.status, since=since,
                                   until=found.until, limit=wanted, order="recent")
        stale = sum(1 for item in page["items"] if item["superseded_by"])
        if not page["truncated"] or wanted >= min(limit + stale, MAX_PAGE):
            break
        wanted = min(limit + stale, MAX_PAGE)
    items = first + sorted(page["items"], key=lambda item: item["superseded_by"] is not None)[:limit]
    total += page["total"]
    if found.status == "open" and len(items) < limit:
        recent = ctx.clock() - float(ctx.config.get("briefing.recent_days")) * 86400
        sessions = reads.list_memories(ctx, namespace=namespace, kinds=["session"], until=found.until,
                                       since=recent if since is None else max(since, recent), limit=MAX_PAGE,
                                       order="recent", count=False)["items"]
        held = [item for item in sessions if not item["superseded_by"] and headline(
            (ctx.fetch(parse_id(item["id"])) or {}).get("body") or "").startswith(OPEN_ENDS_HEADING)]
        items += held[:limit - len(items)]
        total += len(held)
    return {"items": items, "total": total}


def listing(ctx: StoreContext, text: str, found: intent_.Intent, *, namespace: str | None,
            namespaces: list[str] | None, limit: int, max_tokens: int | None, explain: bool, touch: bool,
            origin: str, started: float, trace: bool = True) -> dict:
    """The memories matching the facets, newest first (a soft "recently" window is widened when empty), sessions
    first for a question of time alone; `trace`: count and log it here (False: the caller traces the page it returns)."""
    page = _page(ctx, found, found.since, namespace=namespace, limit=limit)
    widened = False
    if not page["items"] and found.soft_since:
        page = _page(ctx, found, None, namespace=namespace, limit=limit)
        widened = True
    reason = _reason(found, widened)
    results, used = [], 0
    for item in page["items"]:
        rec = ctx.fetch(parse_id(item["id"]))
        if rec is None:
            continue
        out = public(rec)
        out.update(score=None, attention=None, relevance=None, superseded_by=item["superseded_by"])
        if rec["kind"] == "session":   # what it left open (else asked), as the briefing shows a session
            out["summary"] = headline(rec["body"] or "") or out["summary"]
        cost = estimate_tokens(out["title"]) + estimate_tokens(out["summary"]) + 12
        if max_tokens and results and used + cost > max_tokens:
            break
        used += cost
        if explain:
            out["reason"] = reason
        results.append(out)
    latency = (time.perf_counter() - started) * 1000
    out = {"query": text, "namespaces": namespaces or [ALL_NAMESPACES], "results": results,
           "candidates": page["total"], "latency_ms": round(latency, 2),
           "tokens": sum(estimate_tokens(r["title"]) + estimate_tokens(r["summary"]) for r in results),
           "note": (f"{reason}, newest first" + (", superseded ones last" if any(r["superseded_by"] for r in results)
                                                 else "")) if results else f"{reason}: no memory matches"}
    if explain:
        out["intent"] = {**found.as_dict(), "applied": "listing", "widened": widened}
    if trace:   # every listed memory counts as recalled: the question asked for exactly these
        search_log.trace_page(ctx, out, query=text, namespaces=namespaces, origin=origin, touch=touch)
    return out
