"""The briefing's budget goes first to what the agent needs at that moment (fresh-user run, session 17): the session
a compaction just captured, what a `query` asked for, and a long pinned rule shown as far as the budget allows,
marked where it is cut."""
from __future__ import annotations

import re

import pytest

from supermemory import hooks
from supermemory.config import load_config
from supermemory.core import MemoryStore
from supermemory.embed import HashProvider
from supermemory.render_briefing import briefing_view
from supermemory.text import estimate_tokens
from supermemory.transcripts import SessionDigest, render_digest


def fill(store: MemoryStore, n: int = 14) -> None:
    """A store of about 30 memories: as many gotchas as decisions, each a full line of the briefing."""
    store.remember("Never run database migrations on Fridays.", kind="preference")
    for i in range(1, n + 1):
        store.remember(f"Gotcha {i}: the legacy importer module_{i} drops rows whose created_at is NULL; "
                       "backfill created_at before running it.", kind="gotcha")
        store.remember(f"Decision {i}: service_{i} exposes metrics on /metrics and is scraped every 15 seconds "
                       "by Prometheus.", kind="decision")


def capture_session(store: MemoryStore) -> str:
    """A session digest as the PreCompact hook writes it; returns its id."""
    title, body = render_digest(SessionDigest(
        platform="claude-code", cwd="/work/shop", git_branch="main", model="claude-sonnet-4-5",
        started_at="2026-12-04T05:01:00Z", requests=["The checkout tests are flaky on CI, can you figure out why?"],
        open_ends=["Mock the Stripe client in test_refunds.py"], turns=1))
    return store.remember(body, title=title, kind="session")["id"]


def sections_of(text: str) -> list[str]:
    return re.findall(r"^## (.+)$", text, flags=re.M)


def section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0] if f"## {title}\n" in text else ""


# --- the session a compaction just captured -------------------------------------------------------------------

def test_after_compaction_the_last_session_leads_the_briefing_within_its_budget(store):
    """After PreCompact captured the session, the SessionStart(compact) briefing of a 30-memory store ended with
    "(…5 more not shown…)" and no session: "Last sessions" was last, so the 900-token budget always cut it; the
    compact briefing was the startup one byte for byte."""
    store.remember("Never force-push to main.", kind="preference", pinned=True)
    fill(store)
    session = capture_session(store)
    compact = briefing_view(store.briefing(max_tokens=900, source="compact"))
    assert compact["tokens"] <= 900 and sum(compact["not_shown"].values()) > 0, compact["text"]
    assert sections_of(compact["text"])[:2] == ["Pinned rules", "Last sessions"], compact["text"]
    line = section(compact["text"], "Last sessions").splitlines()[0]
    assert line.startswith(f"- [{session} session]") and "Mock the Stripe client in test_refunds.py" in line, line
    startup = briefing_view(store.briefing(max_tokens=900, source="startup"))
    assert startup["text"] != compact["text"]


@pytest.mark.parametrize("budget", [150, 300, 900])
def test_at_startup_the_last_session_keeps_a_share_of_the_budget_at_the_end(store, budget):
    """At startup the last session stays the last section, but room is kept for it (cut to fit when the budget is
    small) instead of the gotchas before it taking all."""
    fill(store)
    session = capture_session(store)
    view = briefing_view(store.briefing(max_tokens=budget))
    assert view["tokens"] <= budget and estimate_tokens(view["text"]) <= view["tokens"], view
    assert sections_of(view["text"])[-1] == "Last sessions" and view["items"]["sessions"] == [session], view["text"]
    if budget >= 900:
        assert "Mock the Stripe client in test_refunds.py" in section(view["text"], "Last sessions")


def test_the_session_start_hook_hands_its_source_to_the_briefing(tmp_path, isolated_home, monkeypatch):
    """The hook passed no `source`, so a compaction's briefing could not differ from a startup's."""
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    cwd = tmp_path / "shop"
    cwd.mkdir()
    with MemoryStore(isolated_home / "memory.db", config=load_config(), embedder=HashProvider(),
                     namespace="shop") as store:
        fill(store)
        session = capture_session(store)
    contexts = {source: hooks.session_start({"cwd": str(cwd), "source": source})["hookSpecificOutput"][
        "additionalContext"] for source in ("startup", "compact")}
    assert sections_of(contexts["compact"])[0] == "Last sessions", contexts["compact"]
    assert sections_of(contexts["startup"])[-1] == "Last sessions", contexts["startup"]
    assert all(f"[{session} session]" in text for text in contexts.values())


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


# --- a long pinned rule ----------------------------------------------------------------------------------------

RULE = "RULE: " + " ".join(f"Step {i}: always verify the migration checksum before deploy." for i in range(600))


def test_a_long_pinned_rule_shows_more_of_its_text_and_says_where_the_rest_is(store):
    """A 36,000-character pinned rule showed only "RULE: Step 0: always verify … before deploy." with no sign of
    more, in a briefing of 677 characters of its 900-token budget."""
    rule = store.remember(RULE, kind="preference", pinned=True, title="Deploy checklist")["id"]
    short = store.remember("Never force-push to main.", kind="preference", pinned=True)["id"]
    store.remember("We use MongoDB 7 for the catalog service.", kind="decision")
    view = briefing_view(store.briefing(max_tokens=900))
    line = next(line for line in view["text"].splitlines() if line.startswith(f"- [{rule} "))
    assert "Step 20:" in line and line.endswith(f"… (memory_get {rule} for the rest)"), line
    assert view["tokens"] <= 900 and view["tokens"] > 800, view   # the room left went to the rule
    assert f"[{short} preference] Never force-push to main." in view["text"]
    assert "memory_get " + short not in view["text"] and "MongoDB 7" in view["text"]


@pytest.mark.parametrize("budget", [50, 80, 200])
def test_a_long_pinned_rule_is_marked_cut_at_any_budget_and_the_budget_holds(store, budget):
    rule = store.remember(RULE, kind="preference", pinned=True, title="Deploy checklist")["id"]
    for i in range(8):
        store.remember(f"Decision {i}: service_{i} exposes metrics on /metrics.", kind="decision")
    capture_session(store)
    view = briefing_view(store.briefing(max_tokens=budget, source="compact"))
    assert view["tokens"] <= budget and estimate_tokens(view["text"]) <= view["tokens"], view
    line = next(line for line in view["text"].splitlines() if line.startswith(f"- [{rule} "))
    # At the least budget allowed the note itself does not fit: the '…' says the text goes on.
    assert line.endswith(f"(memory_get {rule} for the rest)" if budget > 50 else "…"), line


@pytest.mark.parametrize("budget", [60, 300, 900, 3000])
def test_a_pinned_rule_that_superseded_another_grows_too_and_keeps_its_was_line(budget):
    rule = {"id": "M9", "kind": "preference", "title": "Deploy checklist", "summary": "RULE: Step 0: verify.",
            "body": RULE, "was": ["Deploy whenever the tests pass."]}
    decisions = [{"id": f"M{i}", "kind": "decision", "title": "", "summary": f"Decision {i}: use tool {i}."}
                 for i in range(1, 4)]
    view = briefing_view({"sections": {"pinned": [rule], "decisions": decisions}, "budget": budget,
                          "namespaces": ["shop"]})
    assert view["tokens"] <= budget and estimate_tokens(view["text"]) <= view["tokens"], view
    if budget >= 300:
        assert view["tokens"] >= budget - 12 and "  was: Deploy whenever the tests pass." in view["text"], view
        assert "(memory_get M9 for the rest)\n  was:" in view["text"] and view["items"]["decisions"] == ["M1", "M2", "M3"]
