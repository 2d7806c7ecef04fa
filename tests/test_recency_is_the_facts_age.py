"""fu25 D7: a recall refreshed its hits' recency as well as counting them (reinforcement), so the memories a question
listed rose by up to both priors at the next one, and two identical questions in a row could lead with different
memories. Recency is the age of the fact (its last write); recalls count only as reinforcement."""
from __future__ import annotations

from supermemory.core import MemoryStore
from conftest import FakeEmbedder

DAY = 86400.0


def test_a_recall_counts_its_hits_but_leaves_their_age(db_path, config):
    now = [1_000_000_000.0]
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", clock=lambda: now[0]) as s:
        memory = s.remember("The billing export runs nightly at 02:00 UTC.", kind="fact")["id"]
        now[0] += 90 * DAY
        assert [r["id"] for r in s.recall("when does the billing export run", relevance_threshold=0)["results"]] \
            == [memory]
        now[0] += DAY
        _, found = s.candidates("when does the billing export run")
        cand = next(c for c in found.candidates if f"M{c.id}" == memory)
        assert cand.recall_count == 1
        assert round(cand.age_days) == 91      # counted from the write, not from last night's recall
