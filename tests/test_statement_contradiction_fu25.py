"""fu25 D4: "The function max duration for /api/export is 300 seconds." beside "The Vercel project is on the Pro plan;
the function max duration for /api/export is 60 seconds." was neither linked nor flagged: the older memory's other
statement keeps the pair under the near-duplicate bound, where only negated twins were read. A short one-statement
text that restates one statement of a close memory with another value is now a possible contradiction."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.text.revisions import swapped_in_a_statement

PLAN = "The Netlify site is on the Business plan; the build timeout for the docs site is 15 minutes."


def test_one_statement_restated_with_another_value_is_read_as_such():
    assert swapped_in_a_statement(PLAN, "The build timeout for the docs site is 30 minutes.")
    assert swapped_in_a_statement("The build timeout for the docs site is 30 minutes.", PLAN)
    assert not swapped_in_a_statement(PLAN, "The build timeout for the docs site is 15 minutes.")   # the same value
    assert not swapped_in_a_statement(PLAN, "The build timeout for the blog is 30 minutes.")          # another thing
    assert not swapped_in_a_statement("The docs build timeout is 15 minutes.", "The docs build timeout is 30 minutes.")


@pytest.mark.model
def test_remember_flags_a_value_that_differs_from_one_statement_of_a_close_memory(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="docs") as s:
        plan = s.remember(PLAN, kind="decision")["id"]
        other = s.remember("Preview builds of the docs site are deleted after 30 days.", kind="fact")["id"]
        flagged = s.remember("The build timeout for the docs site is 30 minutes.", kind="decision")
        ids = [c["id"] for c in flagged["possible_contradictions"]]
        assert plan in ids and other not in ids
