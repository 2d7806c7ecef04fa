"""Fresh-user run fu32 D11: in a store of many pinned rules a rule pinned today reaches the briefing, and a
briefing that leaves pinned rules out says how many and where they are listed."""
from __future__ import annotations

import json

import pytest

from supermemory.core import MemoryStore
from supermemory.render_briefing import briefing_view
from tests.conftest import FakeEmbedder
from tests.test_mcp_server import call, ok

DAY = 86400.0


@pytest.fixture
def pinned_store(db_path, config):
    """Forty rules pinned 60 days ago (importance 0.8), then the clock at today."""
    now = [1_700_000_000.0 - 60 * DAY]
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj", clock=lambda: now[0])
    for n in range(40):
        s.remember(f"Rule {n}: the service number {n} keeps its own deploy window and on-call rota.", kind="preference",
                   pinned=True, importance=0.8)
    now[0] += 60 * DAY
    yield s
    s.close()


def test_a_rule_pinned_today_leads_the_pinned_rules_of_a_store_with_many(pinned_store):
    new = pinned_store.remember("Never deploy the flibbertigibbet service on Fridays.", kind="preference", pinned=True)
    view = briefing_view(pinned_store.briefing())
    assert view["items"]["pinned"][0] == new["id"]
    assert "flibbertigibbet" in view["text"]


def test_the_briefing_says_how_many_pinned_rules_it_leaves_out_and_where_they_are(pinned_store):
    view = briefing_view(pinned_store.briefing(max_tokens=300))
    shown = len(view["items"]["pinned"])
    assert 0 < shown < 40
    assert view["not_shown"]["pinned"] == 40 - shown
    assert f"{40 - shown} pinned rules not shown: memory_list with pinned: true (supermemory list --pinned) lists them all" in view["text"]
    assert view["tokens"] <= 300
    roomy = briefing_view(pinned_store.briefing(max_tokens=20_000))   # 20 listed at most: the other 20 are named
    assert len(roomy["items"]["pinned"]) == 20 and "20 pinned rules not shown" in roomy["text"]
    assert "more not shown" not in roomy["text"]


def test_a_briefing_that_shows_every_pin_says_nothing_about_pins(store):
    store.remember("Always run the linters before pushing.", kind="preference", pinned=True)
    assert "pinned rule" not in briefing_view(store.briefing())["text"]


def test_list_filters_pinned_rules_over_mcp(pinned_store):
    pinned_store.remember("An unpinned note about the release train.")
    assert pinned_store.list(pinned=True)["total"] == 40
    page = ok(pinned_store, "memory_list", {"pinned": True, "limit": 5})["structuredContent"]
    assert page["total"] == 40 and len(page["memories"]) == 5 and all(m["pinned"] for m in page["memories"])
    assert ok(pinned_store, "memory_list", {"pinned": False})["structuredContent"]["total"] == 1
    refused = call(pinned_store, "memory_list", {"pinned": "yes"})
    assert "pinned" in json.dumps(refused)


def test_list_pinned_in_the_cli(tmp_path):
    import os
    from pathlib import Path

    from tests.helpers.common import run_cli

    env = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY")}
    env.update(SUPERMEMORY_HOME=str(tmp_path / "home"), SUPERMEMORY_EMBED_PROVIDER="hash",
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    run_cli(["remember", "Never force-push to main.", "--pin"], env)
    run_cli(["remember", "The release train leaves on Tuesdays."], env)
    listed = json.loads(run_cli(["list", "--pinned", "--json"], env).stdout)
    assert [m["title"] for m in listed["items"]] == ["Never force-push to main."]


def test_today_notes_show_under_recent_changes_when_twenty_new_pins_came_after_them(store):
    """fu33 D2: the twenty newest memories were fetched before those the pinned section lists were left out."""
    notes = [store.remember(f"Session note {n}: worked on the importer module part {n}.")["id"] for n in range(3)]
    for n in range(20):
        store.remember(f"Rule {n}: always run linter{n} on module{n}.", kind="preference", pinned=True)
    view = briefing_view(store.briefing())
    assert set(notes) <= set(view["items"]["recent"])
