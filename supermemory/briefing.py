"""What an agent reads without asking: the SessionStart briefing's and the MEMORY.md index's data (the shells render it)."""
from __future__ import annotations

from collections import Counter

from supermemory import rules
from supermemory.config import ALL_NAMESPACES
from supermemory.retrieval import pipeline
from supermemory.store import capture_state
from supermemory.store import namespaces as nsm
from supermemory.store import reads
from supermemory.store import records as rec_
from supermemory.store.context import StoreContext
from supermemory.transcripts.digest import headline


_COMPACT = "compact"   # the SessionStart source after a compaction: the last sessions lead the briefing


def briefing(ctx: StoreContext, *, query: str | None = None, max_tokens: int | None = None,
             namespace: str | None = None, platform: str | None = None, source: str | None = None,
             session_id: str | None = None) -> dict:
    """The session-start hand-off's memories by section and its token budget; `render_briefing.briefing_view` turns
    it into text, sections in the order of the dict (the order the budget serves them): pinned rules, what is
    relevant to `query` (the caller asked for it: before the standing sections, which leave its memories out),
    open tasks, decisions, preferences, gotchas, recent changes, last sessions; after a compaction
    (`source` 'compact') the last sessions come right after the pinned rules: the agent gets back what it was
    doing. Never loads the embedding model. A session's summary is its digest's headline
    (`transcripts.digest.headline`: the standing instructions the user set in it and its open ends, else its
    requests; the instructions first, so that a line cut short keeps them).

    :param platform: the agent it is for ('claude-code', 'codex'): imported rules from the file
        that agent loads by itself (CLAUDE.md, AGENTS.md) are left out; the other file's stay.
    :param source: why the session starts, as the SessionStart hook says it ('startup', 'resume', 'clear',
        'compact'); None for a briefing asked for.
    :param session_id: the session starting (the SessionStart payload's); after a compaction its digest leads
        the last sessions, even when a parallel session was captured since.
    """
    budget = rec_.integer(max_tokens if max_tokens is not None else int(ctx.config.get("briefing.max_tokens")),
                          "max_tokens", 50, 100_000)
    namespaces = nsm.for_read(ctx, namespace)
    own = rules.OWN_FILE.get(platform or "")
    without = [rules.file_tag(own)] if own else []
    standing = reads.briefing_sections(ctx, namespaces, recent_days=float(ctx.config.get("briefing.recent_days")),
                                       without_tags=without)
    if source == _COMPACT and session_id:
        standing["sessions"] = _compacted_first(ctx, standing["sessions"], session_id, namespaces)
    relevant = []
    if query:
        found = pipeline.recall(ctx, query, namespace=namespace, limit=8, lexical_only=True, touch=False,
                                origin="briefing")
        own_place = {item["id"] for key in ("pinned", "sessions") for item in standing[key]}
        relevant = [r for r in found["results"]
                    if r["id"] not in own_place and not set(without) & set(r.get("tags") or [])]
    for item in [*standing["sessions"], *relevant]:   # what it left open (else asked), not its platform header
        if item.get("kind") == "session":
            item["summary"] = headline(item.get("body") or "", standing_first=True,
                                       requests=bool(item.get("compacted"))) or item["summary"]
    asked = {r["id"] for r in relevant}
    order = ["pinned", *(["sessions"] if source == _COMPACT else []), "relevant",
             *(key for key in standing if key not in ("pinned", "sessions")),
             *([] if source == _COMPACT else ["sessions"])]
    sections = {key: relevant if key == "relevant" else [i for i in standing[key] if i["id"] not in asked]
                for key in order}
    out = {"sections": sections, "budget": budget, "namespaces": namespaces or [ALL_NAMESPACES],
           "pinned_total": reads.pinned_count(ctx, namespaces, without_tags=without)}
    if own and not any(sections.values()):   # say why it is empty when the agent's own file holds the memories
        left_out = reads.list_memories(ctx, namespace=namespace, tags=without, limit=1)["total"]
        if left_out:
            out["left_out"] = {"file": own, "memories": left_out}
    return out


def _compacted_first(ctx: StoreContext, sessions: list[dict], session_id: str,
                     namespaces: list[str] | None) -> list[dict]:
    """The last sessions with the digest of `session_id` (the one just compacted) first, as many as before (the
    oldest dropped when it was not among them)."""
    memory_id = capture_state.session_memory_of(ctx, session_id)
    if memory_id is None:
        return sessions
    own = [s for s in sessions if s["id"] == rec_.format_id(memory_id)]
    if not own:
        record = ctx.fetch(memory_id)
        if record is None or (namespaces is not None and record["namespace"] not in namespaces) or (
                record["expires_at"] is not None and record["expires_at"] <= ctx.clock()):
            return sessions
        own = [rec_.public(record)]
    # marked: its line is shown longer, with its requests (fresh-user run fu37 D9: its open ends were cut at ~40
    # characters and what it was doing left out, the one session an agent just compacted needs whole)
    own = [{**own[0], "compacted": True}]
    return (own + [s for s in sessions if s["id"] != own[0]["id"]])[:max(len(sessions), 1)]


def memory_index(ctx: StoreContext, *, max_lines: int = 200, namespace: str | None = None) -> dict:
    """A MEMORY.md-style index's items: pinned and preference/gotcha first; `max_lines` lines in all, so when
    some are left out, one fewer item, for the "…and K more" line that says so, except that one line is
    always a memory (with `max_lines` 1 there is no room for that line: `more` still counts them).
    `left_out` counts the ones left out by kind (a superseded one as "superseded"), most first."""
    max_lines = rec_.integer(max_lines, "max_lines", 1, 100_000)
    items = reads.index_items(ctx, namespace)
    shown = items if len(items) <= max_lines else items[:max(1, max_lines - 1)]
    left_out = Counter("superseded" if item.get("superseded_by") else item["kind"] for item in items[len(shown):])
    return {"items": shown, "total": len(items), "more": len(items) - len(shown), "max_lines": max_lines,
            "left_out": dict(left_out.most_common())}
