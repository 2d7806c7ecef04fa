"""fu25 D6: "what did we decide about the staging database being read-only" narrowed to decisions and listed an
unrelated one (an order-transaction decision, relevance 0.42) while a note answered the question at 0.99. When the
question as asked is answered more surely by memories none of which is of the kind it names, the filter is set aside;
a filtered answer as sure as the plain one stands."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore

MEMORIES = [
    ("decision", "Inventory holds", "订单扣库存用 Prisma 的交互式事务处理，超时设为 5 秒，失败就整体回滚。"),
    ("decision", "Session lifetime", "Web sessions live in Redis and expire after 24 hours; we chose Redis to keep reads "
                                     "off the primary database."),
    ("decision", "Image hosting", "Product images are served from Cloudflare R2 through the CDN, not from the app."),
    ("note", "Preview DB frozen", "Until Friday the preview Postgres instance only accepts reads: writes fail while "
                                  "the data migration runs, so seed scripts must wait."),
    ("gotcha", "Redis pool", "Redis connections leak when a worker exits early; close the client in the finally block."),
    ("fact", "Redis version", "Production Redis runs 7.2 on Upstash in eu-west-1."),
]


@pytest.mark.model
def test_a_named_kind_no_memory_of_which_answers_is_set_aside(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="shop") as s:
        ids = {title: s.remember(body, title=title, kind=kind)["id"] for kind, title, body in MEMORIES}
        page = s.recall("what did we decide about the preview database being read-only", touch=False)
        assert page["results"][0]["id"] == ids["Preview DB frozen"], page["results"]
        assert "set aside" in page.get("note", "")
        page = s.recall("gotchas about redis", touch=False)
        assert page["results"][0]["id"] == ids["Redis pool"] and "intent filter" in page.get("note", "")
