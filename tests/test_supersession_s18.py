"""`supersedes` links for a change said as "switched … from A to B", "dropped A in favour of B", "A is replaced by B",
and none for a memory that already says B (found by a fresh-user run, session 17)."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.text import revision_marker
from supermemory.text.traits import change_values

SEARCH_OLD = ("Search uses OpenSearch 2.11 with the icu_analyzer for product names; Elasticsearch was rejected due to "
              "licensing.")
SEARCH_MOVE = ("Search was migrated from OpenSearch to Meilisearch in December; OpenSearch 2.11 is replaced by "
               "Meilisearch 1.6.")


@pytest.mark.parametrize("text", [
    "Switched the web app package manager from npm to pnpm.",
    "Dropped webpack in favour of Vite for frontend bundling.",
])
def test_switching_from_a_to_b_and_dropping_a_in_favour_of_b_announce_a_change(text):
    assert revision_marker(text) == "strong"


@pytest.mark.parametrize("text, values", [
    ("Switched the web app package manager from npm to pnpm.", [("npm", "pnpm")]),
    ("Dropped webpack in favour of Vite for frontend bundling.", [("webpack", "Vite")]),
    (SEARCH_MOVE, [("OpenSearch", "Meilisearch"), ("OpenSearch 2.11", "Meilisearch 1.6")]),
    ("OpenSearch was replaced by Meilisearch for product search.", [("OpenSearch", "Meilisearch")]),
    ("We replaced black with ruff format, line length 100.", [("black", "ruff format")]),
    ("Uploads now go to S3 instead of the local uploads/ folder.", [("the local uploads/ folder", "S3")]),
    ("We moved off Mailgun; email goes through Postmark.", [("Mailgun", "")]),
    ("缓存已经从 Memcached 换成了 Redis。", [("Memcached", "Redis")]),
    ("The proxy is nginx.", []),
])
def test_change_values_reads_what_a_change_replaced_and_what_replaced_it(text, values):
    assert change_values(text) == values


@pytest.mark.model
@pytest.mark.parametrize("older, newer, linked", [
    ("Package manager for the web app is npm.", "Switched the web app package manager from npm to pnpm.", True),
    ("Frontend bundling uses webpack 5.", "Dropped webpack in favour of Vite for frontend bundling.", True),
    # a long older memory shares few other words; the new one names the value it replaces, with its version
    (SEARCH_OLD, SEARCH_MOVE, True),
    # the same wording about something the older memory does not state: another fact of the same subject
    ("Package manager for the web app is pnpm.",
     "Switched the pnpm store directory from the home folder to /var/cache/pnpm on CI runners.", False),
    ("Search uses Meilisearch 1.6.", "Meilisearch 1.6 was migrated from the shared VM to its own container.", False),
    ("Logs are shipped with Vector.", "Switched Vector's log format from logfmt to JSON.", False),
    # an older memory that already says the new value (and not the old one) is not made stale by the change
    ("Python dependencies are managed with uv.", "Poetry was replaced by uv for dependency management.", False),
    # …but one that names both values without a change of its own is revised by it
    ("Use npm, not yarn, for the web app.", "Switched the web app from npm to yarn.", True),
])
def test_a_change_from_a_to_b_supersedes_the_memory_that_states_a_with_the_real_model(
        db_path, config, onnx_embedder, older, newer, linked):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        old = s.remember(older, kind="decision")["id"]
        assert s.remember(newer, kind="decision")["supersedes"] == ([old] if linked else [])


@pytest.mark.model
def test_a_restatement_of_a_change_supersedes_only_the_memory_of_the_old_value_with_the_real_model(
        db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        stale = s.remember(SEARCH_OLD, kind="decision")["id"]
        move = s.remember(SEARCH_MOVE, kind="decision")
        assert move["supersedes"] == [stale]
        again = s.remember("OpenSearch was replaced by Meilisearch for product search.", kind="decision")
        assert again["supersedes"] == [stale]      # the migration note already says Meilisearch: still true


@pytest.mark.model
def test_after_a_switch_recall_puts_the_new_package_manager_first_with_the_real_model(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        s.remember("We use MongoDB 7 for the catalog service because documents are schemaless.", kind="decision")
        s.remember("Never run database migrations on Fridays.", kind="preference")
        s.remember("Package manager for the web app is npm.", kind="decision")
        new = s.remember("Switched the web app package manager from npm to pnpm.", kind="decision")["id"]
        hits = s.recall("which package manager does the web app use")["results"]
        assert hits[0]["id"] == new
