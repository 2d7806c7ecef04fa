"""An agreeing restatement in other wordings ("B … instead of A", "B, which replaced A", "B is …; A was dropped")
supersedes only the memory of the old value, not the one that already states B (fresh-user run fresh2, item 4)."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.text.traits import change_values


@pytest.mark.parametrize("text, values", [
    ("Celery is now used for background jobs instead of RQ.", [("RQ", "Celery")]),
    ("The dev proxy is Caddy, which replaced nginx.", [("nginx", "Caddy")]),
    ("Adyen is the payment provider; Stripe was dropped.", [("Stripe", "Adyen")]),
    ("Uploads now go to S3 instead of the local uploads/ folder.", [("the local uploads/ folder", "S3")]),
])
def test_change_values_reads_instead_of_which_replaced_and_was_dropped(text, values):
    assert change_values(text) == values


@pytest.mark.model
@pytest.mark.parametrize("old, change, again", [
    ("Background jobs are processed with RQ.", "Dropped RQ in favour of Celery for background jobs.",
     "Celery is now used for background jobs instead of RQ."),
    ("The dev proxy is nginx.", "We switched the dev proxy from nginx to Caddy.",
     "The dev proxy is Caddy, which replaced nginx."),
    ("Payments go through Stripe.", "We switched payments from Stripe to Adyen.",
     "Adyen is the payment provider; Stripe was dropped."),
])
def test_an_agreeing_restatement_supersedes_only_the_old_value_with_the_real_model(
        db_path, config, onnx_embedder, old, change, again):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        stale = s.remember(old, kind="decision")["id"]
        moved = s.remember(change, kind="decision")
        assert moved["supersedes"] == [stale]
        result = s.remember(again, kind="decision")
        assert result["supersedes"] == [stale]      # the change memory already says the new value: still true
        assert moved["id"] in [n["id"] for n in result["near_duplicates"]]   # offered as a near-duplicate instead
