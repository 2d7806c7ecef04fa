"""The briefing's budget goes first to what the agent needs at that moment (fresh-user run, session 17): what a
`query` asked for."""
from __future__ import annotations

import re

from supermemory.core import MemoryStore
from supermemory.render import briefing_view


def fill(store: MemoryStore, n: int = 14) -> None:
    """A store of about 30 memories: as many gotchas as decisions, each a full line of the briefing."""
    store.remember("Never run database migrations on Fridays.", kind="preference")
    for i in range(1, n + 1):
        store.remember(f"Gotcha {i}: the legacy importer module_{i} drops rows whose created_at is NULL; "
                       "backfill created_at before running it.", kind="gotcha")
        store.remember(f"Decision {i}: service_{i} exposes metrics on /metrics and is scraped every 15 seconds "
                       "by Prometheus.", kind="decision")


def sections_of(text: str) -> list[str]:
    return re.findall(r"^## (.+)$", text, flags=re.M)


# --- briefing --query --------------------------------------------------------------------------------------------

def test_a_briefing_query_shows_its_relevant_memories_first_at_the_default_budget(store):
    """`briefing --query "refund webhook tests"` in a store of ~40 memories showed pinned, tasks, decisions,
    preferences and gotchas, but no "Relevant to this session": it came after them and the budget cut it."""
    pinned = store.remember("Feature flags live in LaunchDarkly; do not add new env-var flags.", kind="decision",
                            pinned=True)["id"]
    for i in range(1, 6):
        store.remember(f"Open task {i}: upgrade the dependency number {i} of the billing service to its next major.",
                       kind="task")
    fill(store, 16)
    wanted = store.remember("Write integration tests for the refund webhook handler (RefundWebhookView) including "
                            "signature verification failures.", kind="gotcha")["id"]
    view = briefing_view(store.briefing(query="refund webhook tests"))
    assert view["tokens"] <= 900 and sum(view["not_shown"].values()) > 0, view["text"]
    assert sections_of(view["text"])[:3] == ["Pinned rules", "Relevant to this session", "Open tasks"], view["text"]
    assert view["items"]["pinned"] == [pinned] and view["items"]["relevant"] == [wanted], view["text"]
    assert view["text"].count(f"[{wanted} ") == 1   # not again under Gotchas


def test_a_memory_relevant_to_the_query_is_listed_even_when_its_own_section_is_cut(store):
    """The relevant section left out every memory of the standing sections, shown or not: a gotcha the query
    matched, 21st of its kind, was in neither part of the text."""
    for i in range(20):
        store.remember(f"Gotcha {i}: importer module_{i} drops NULL rows; backfill before running it.", kind="gotcha")
    wanted = store.remember("Gotcha: the refund webhook signature check fails when the clock skews.",
                            kind="gotcha")["id"]
    view = briefing_view(store.briefing(query="refund webhook signature", max_tokens=120))
    assert view["items"]["relevant"] == [wanted] and view["tokens"] <= 120, view["text"]
