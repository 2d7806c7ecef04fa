"""fu24 D15: a change of a value an older memory states only after its first statement ("…; health check at
/healthz" beside "the health check moved from /healthz to /livez") revises a detail: the first statement still holds,
so no `supersedes` link buries it. A change of the value the first statement states revises the memory whatever its
later details say. Pairs scored in bench/revision_pairs_partial.jsonl."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.store.supersession import _changes_a_detail, _values
from supermemory.text import tokenize
from supermemory.text.traits import change_values, content_terms

GATEWAY = "The gateway is Envoy on port 9901 behind the load balancer; readiness probe at /ready."
GATEWAY_PROBE = "The gateway readiness probe moved from /ready to /startupz on Monday."
QUEUE = "Jobs use Sidekiq with Redis as the queue; dead jobs are kept for seven days."
QUEUE_MOVED = "We moved background jobs from Sidekiq to GoodJob; Sidekiq is no longer used."


def detail_only(older: str, newer: str) -> bool:
    replaced = _values(old for old, _ in change_values(newer))
    return _changes_a_detail(f"title\n{older}", replaced, content_terms(tokenize(newer)))


def test_a_change_of_a_later_statement_is_a_detail_and_of_the_first_is_not():
    assert detail_only(GATEWAY, GATEWAY_PROBE)
    assert not detail_only(QUEUE, QUEUE_MOVED)                 # the first statement names Sidekiq
    # one statement only: the change is about all of it
    assert not detail_only("The readiness probe is at /ready on the gateway.", GATEWAY_PROBE)
    # the first statement is restated but for one word: nothing of it stands apart from the change
    assert not detail_only("The gateway readiness probe is documented here; it answers at /ready.", GATEWAY_PROBE)
    # Chinese statements split on ；and 。
    assert detail_only("支付服务用 Rust 写的，跑在 ECS 上；就绪探针是 /ready。", "支付服务的就绪探针从 /ready 改成了 /startupz。")


@pytest.mark.model
def test_a_partial_change_leaves_the_older_memory_current_and_a_whole_change_supersedes(
        db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="gateway") as s:
        gateway = s.remember(GATEWAY, kind="fact")["id"]
        queue = s.remember(QUEUE, kind="fact")["id"]
        assert s.remember(GATEWAY_PROBE, kind="fact")["supersedes"] == []
        assert s.remember(QUEUE_MOVED, kind="decision")["supersedes"] == [queue]
        hits = s.recall("which port does the gateway listen on?", touch=False)["results"]
        assert hits[0]["id"] == gateway and not hits[0].get("superseded_by")
