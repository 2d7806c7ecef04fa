"""fu25 D1: storing a pasted log of thousands of numbered lines took minutes: the supersession rule read every value of
it with the whole text on both sides (quadratic), and its length cap counted distinct words, which a log has few of.
A text over `supersession.MAX_CHARS` revises nothing, and reading a text's values is linear in its length."""
from __future__ import annotations

import time

from supermemory.core import MemoryStore
from supermemory.store import supersession
from supermemory.text import traits

LOG = "".join(f"Build log of the quasar pipeline step {i} ok.\n" for i in range(3000))


def test_reading_the_values_of_a_long_log_is_linear():
    started = time.perf_counter()
    subject, values = traits.value_reading(LOG)
    elapsed = time.perf_counter() - started
    assert len(values) == 3000 and not any(stated for _, stated in values)   # "step 7": a numbered item, no value
    assert elapsed < 5.0, elapsed     # about 0.2 s here; the quadratic reading took over 20 s
    assert traits._blank("abcdef", [(4, 5), (0, 1), (1, 3), (2, 4)]) == "     f"   # overlapping, any order


def test_a_text_longer_than_one_fact_supersedes_nothing_and_is_not_read_for_values(db_path, config, monkeypatch):
    read = []
    real = traits.value_reading
    monkeypatch.setattr(traits, "value_reading", lambda text: read.append(text) or real(text))
    with MemoryStore(db_path, config=config, namespace="ci") as s:
        s.remember("The quasar pipeline step count is 12.", kind="fact")
        read.clear()
        long = s.remember(LOG[:supersession.MAX_CHARS + 50], kind="note")
        assert long["supersedes"] == [] and not any(len(text) > supersession.MAX_CHARS for text in read)
        assert s.remember("The quasar pipeline step count is 14.", kind="fact")["supersedes"]   # a fact still does
