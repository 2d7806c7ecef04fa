"""health's near-duplicate list and remember's hint: no merge offered for a pair a link already settled, nor for
two memories that differ in one value (fresh-user run fresh2, items 5 and 7)."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.text.traits import swapped_value


def test_swapped_value_is_one_word_or_one_version_in_place_of_another():
    assert swapped_value("Deploys happen on Tuesdays.", "Deploys happen on Thursdays.")
    assert swapped_value("Python version is 3.11.", "Python version is 3.12.")
    # a counted name is two things; an added word is a copy with more said; two values changed is another fact
    assert not swapped_value("The report counts widget number 14", "The report counts widget number 15")
    assert not swapped_value("Use pnpm 9 for installs in the web workspace",
                             "Use pnpm 9 for installs in the web workspace today")
    assert not swapped_value("Python 3.11 on 2 cores", "Python 3.12 on 4 cores")
    assert not swapped_value("We switched the dev proxy from nginx to Caddy.",     # the change verb differs
                             "The dev proxy is Caddy, which replaced nginx.")


@pytest.mark.parametrize("older, newer", [
    ("Deploys happen on Tuesdays.", "Deploys happen on Thursdays."),
])
def test_health_offers_no_merge_of_two_values_and_lists_them_as_a_possible_contradiction(store, older, newer):
    a, b = store.remember(older, kind="decision"), store.remember(newer, kind="decision")
    report = store.health(duplicate_similarity=0.3)   # the test embedder hashes words: its cosines run low
    assert report["near_duplicates"] == [] and report["near_duplicate_pairs"] == 0
    assert [(p["a"], p["b"]) for p in report["possible_contradictions"]] == [(a["id"], b["id"])]


def test_a_bare_version_change_supersedes_so_health_lists_it_as_neither_merge_nor_contradiction(store):
    """One value replaced in the same words is a revision (store/supersession.restates_value): the link says
    how the two stand, so health has nothing left to ask about them."""
    a = store.remember("Python version is 3.11.", kind="decision")
    b = store.remember("Python version is 3.12.", kind="decision")
    assert a["id"] in str(b.get("supersedes"))
    report = store.health(duplicate_similarity=0.3)
    assert report["near_duplicates"] == [] and report["possible_contradictions"] == []


@pytest.mark.model
def test_remember_says_another_value_is_a_possible_contradiction_with_the_real_model(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        first = s.remember("Deploys happen on Tuesdays.", kind="decision")["id"]
        result = s.remember("Deploys happen on Thursdays.", kind="decision")
        assert result["near_duplicates"] == []
        assert [c["id"] for c in result["possible_contradictions"]] == [first]


def test_health_offers_no_merge_of_a_pair_a_link_settled_nor_of_a_superseded_memory(store):
    old = store.remember("Background jobs are processed with the RQ worker pool on the main host")
    new = store.remember("Background jobs are processed with the Celery worker pool on the main host")
    copy = store.remember("Background jobs are processed with the RQ worker pool on the main host today")
    before = store.health(duplicate_similarity=0.3)
    assert before["near_duplicate_pairs"] >= 1
    store.link(new["id"], old["id"], relation="supersedes")
    report = store.health(duplicate_similarity=0.3)
    pairs = {frozenset((p["a"], p["b"])) for p in report["near_duplicates"]}
    assert frozenset((old["id"], new["id"])) not in pairs      # linked: how the two stand is said
    assert frozenset((old["id"], copy["id"])) not in pairs     # the stale one is merged into nothing
    assert report["near_duplicate_pairs"] == len(pairs)


def test_a_paraphrase_that_drops_one_word_and_adds_another_is_no_swapped_value(db_path, config, onnx_embedder):
    """"… ask her before changing any module." / "…, so ask Dana first.": one word fewer here, one more there, in other
    places of the sentence: the same fact in other words, a near-duplicate, not a possible contradiction (fresh-user
    run fu24, D13). A word in the same place stays a swapped value."""
    older = "Dana owns the Terraform modules under infra/terraform; ask her before changing any module."
    newer = "Dana owns the Terraform modules in infra/terraform, so ask Dana first."
    assert not swapped_value(older, newer) and not swapped_value(newer, older)
    assert swapped_value("Releases are cut by Dana on Fridays.", "Releases are cut by Tomasz on Fridays.")
    s = MemoryStore(db_path, config=config, embedder=onnx_embedder)
    first = s.remember(older, kind="fact")["id"]
    result = s.remember(newer, kind="fact")
    assert first not in [o["id"] for o in result["possible_contradictions"]]
    assert first in [n["id"] for n in result["near_duplicates"]]
