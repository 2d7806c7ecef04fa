"""`supersedes` links for a quantity stated anew (fresh-user run fu24, D1): "<subject> runs N <unit>" beside an older
"<subject> runs/scaled to M <unit>" for the same subject and unit, the older one saying more besides, and the
look-alikes that state another fact (store/supersession.py `_requantified`, text/revisions.py `restates_quantity`)."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.text.revisions import quantities, restates_quantity

OLD = ("The billing worker runs 4 replicas in production (k8s deployment billing-worker), autoscaling is "
       "disabled.")
SCALED = "Billing worker scaled to 6 replicas on Dec 2 ahead of the December invoicing run."
RESTATED = "The billing worker runs 8 replicas in production."
BUMPED = "We bumped the billing worker from 4 to 10 replicas."

LOOK_ALIKES = [
    ("The billing worker runs 4 replicas in production.", "The api gateway runs 3 replicas in production."),
    ("Widget 14 ships with 2 fans in the blue enclosure.", "Widget 15 ships with 2 fans in the blue enclosure."),
    ("Step 3: scale the billing worker to 4 replicas.", "Step 4: scale the billing worker to 6 replicas."),
    ("The billing worker runs 4 replicas in production.", "The billing worker uses 2 GB of memory per pod."),
    ("The search indexer runs 6 replicas.", "The search indexer went from 2 to 4 replicas last year."),
    ("The billing worker runs 4 replicas in production.", "Should the billing worker run 6 replicas in December?"),
    ("The billing worker runs 4 replicas in production.", "We may scale the billing worker to 6 replicas."),
    ("The billing worker runs 4 replicas in production.", "Never scale the billing worker past 6 replicas."),
    ("The billing worker runs 4 replicas in production.", "The billing worker runs 2 replicas in staging."),
    ("The billing worker runs 4 replicas in production and 2 replicas in staging.",
     "Billing worker scaled to 6 replicas."),
    ("The API request timeout is 30 seconds for uploads.", "The API request timeout is 60 seconds."),
]


def test_quantities_read_subject_unit_and_value():
    assert quantities(OLD) == [(frozenset({"bill", "worker"}), "replica", "4", frozenset({"product"}))]
    assert quantities(SCALED)[0][:3] == (frozenset({"bill", "worker"}), "replica", "6")
    assert restates_quantity(OLD, SCALED) and restates_quantity(OLD, RESTATED)
    assert not restates_quantity(OLD, "The billing worker runs 4 replicas in production.")   # the same value


@pytest.mark.parametrize("older,newer", LOOK_ALIKES)
def test_look_alikes_restate_no_quantity(older, newer):
    assert not restates_quantity(older, newer)


@pytest.mark.model
def test_the_fu24_replica_sequence_links_with_the_real_model(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        first = s.remember(OLD, kind="fact")["id"]
        scaled = s.remember(SCALED, kind="fact")
        assert scaled["supersedes"] == [first]
        top = s.recall("how many replicas does the billing worker run")["results"][0]
        assert top["id"] == scaled["id"]        # the stale "4 replicas" no longer answers first
        assert first in s.remember(RESTATED, kind="fact")["supersedes"]


@pytest.mark.model
def test_the_fu24_statement_links_alone_with_the_real_model(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        first = s.remember(OLD, kind="fact")["id"]
        assert s.remember(RESTATED, kind="fact")["supersedes"] == [first]
    with MemoryStore(db_path.with_name("bumped.db"), config=config, embedder=onnx_embedder, namespace="proj") as s:
        first = s.remember(OLD, kind="fact")["id"]
        assert s.remember(BUMPED, kind="fact")["supersedes"] == [first]     # change wording linked it already


@pytest.mark.model
@pytest.mark.parametrize("older,newer", LOOK_ALIKES)
def test_look_alikes_link_nothing_with_the_real_model(db_path, config, onnx_embedder, older, newer):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        s.remember(older, kind="fact")
        assert s.remember(newer, kind="fact")["supersedes"] == []
