"""A short negated opposite gets the "May contradict" hint (fresh2 #6): "The API uses REST." then "The API does not
use REST." gave `possible_contradictions: []` and `health` listed nothing, because close pairs were read only at
`store.near_duplicate_similarity` (0.9) and the "not", one word in four, puts bge-small at 0.82. A pair that says
the same words, one of the two negated (`text.traits.negated_twin`), is now read down to
`store.negated_pair_similarity`; paraphrases and agreeing restatements stay unhinted."""
from __future__ import annotations

import numpy as np
import pytest

from supermemory.core import MemoryStore
from supermemory.store.writes import read_close_pairs
from supermemory.text.traits import negated_twin, said_words

TWINS = [
    ("The API uses REST.", "The API does not use REST."),
    ("Use tabs.", "Don't use tabs."),
    ("Redis is required.", "Redis is not required."),
    ("We can deploy on Fridays.", "We cannot deploy on Fridays."),
    ("You must run migrations first.", "You mustn't run migrations first."),
    ("The cache is enabled.", "The cache isn\u2019t enabled."),
    ("使用 REST 接口", "不要使用 REST 接口"),
    ("Don't use X. Don't use Y.", "Don't use X. Use Y."),   # same words, one more "not"
]
NOT_TWINS = [
    ("The API uses REST.", "Our API is RESTful."),              # a paraphrase
    ("Use pnpm, never npm.", "Don't use npm, use pnpm."),       # agreeing: one negation each
    ("The API uses REST.", "The API uses GraphQL."),            # another value, no negation
    ("Use mocks in tests.", "No mocks in the integration tests."),   # other words besides the "no"
    ("Not now.", "Now."),                                       # nothing said besides the negation
    ("No.", "Yes."),
]


@pytest.mark.parametrize("first,second", TWINS)
def test_a_text_and_its_negation_are_negated_twins(first, second):
    assert said_words(first) == said_words(second) and said_words(first)
    assert negated_twin(first, second) and negated_twin(second, first)


@pytest.mark.parametrize("first,second", NOT_TWINS)
def test_paraphrases_and_agreeing_restatements_are_not(first, second):
    assert not negated_twin(first, second)


def test_below_the_near_duplicate_bound_only_a_negated_twin_is_anything():
    texts = {0: "The API uses REST.", 1: "The API does not use REST.", 2: "Our API is RESTful.",
             3: "The API uses REST!"}
    first, second = np.array([0, 0, 0, 0, 0, 0]), np.array([1, 2, 3, 1, 2, 3])
    below = np.array([True, True, True, False, False, False])
    copies, opposite = read_close_pairs(texts, first, second, below=below)
    assert opposite.tolist() == [True, False, False, True, False, False]
    assert copies.tolist() == [False, False, False, False, True, True]   # only above the bound a copy


def test_the_short_negated_pair_is_hinted_at_remember_and_listed_by_health(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        rest = s.remember("The API uses REST.", create_namespace=True)["id"]
        s.remember("Deploys go out on Tuesdays.")
        s.remember("The frontend is written in Svelte.")
        against = s.remember("The API does not use REST.")
        hints = against["possible_contradictions"]
        assert [h["id"] for h in hints] == [rest]
        assert hints[0]["similarity"] < config.get("store.near_duplicate_similarity")   # the pair the bound missed
        assert against["near_duplicates"] == [] and against["supersedes"] == []
        health = s.health()
        assert health["possible_contradiction_count"] == 1 and health["near_duplicate_pairs"] == 0
        pair = health["possible_contradictions"][0]
        assert {pair["a"], pair["b"]} == {rest, against["id"]}
        assert pair["titles"] == ["The API uses REST.", "The API does not use REST."]


def test_a_paraphrase_and_an_agreeing_restatement_get_no_hint(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        s.remember("The API uses REST.", create_namespace=True)
        assert s.remember("Our API is RESTful.")["possible_contradictions"] == []
        s.remember("Never commit secrets to the repo.")
        assert s.remember("Secrets must never be committed to the repo.")["possible_contradictions"] == []
        assert s.health()["possible_contradiction_count"] == 0


def test_another_namespace_and_a_settled_pair_are_not_listed(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        rest = s.remember("The API uses REST.", create_namespace=True)["id"]
        s.remember("The API does not use REST.", namespace="other", create_namespace=True)
        assert s.health(namespace="*")["possible_contradiction_count"] == 0   # two projects, two APIs
        against = s.remember("Use tabs.")["id"]
        negated = s.remember("Don't use tabs.")["id"]
        assert s.health()["possible_contradiction_count"] == 1
        s.link(negated, against, relation="contradicts")   # someone said how the two stand
        assert s.health()["possible_contradiction_count"] == 0
        assert rest
