"""retrieval/candidates.after_question: only a turn of the same conversation lends an answer its query words."""
from supermemory.core import MemoryStore
from tests.conftest import FakeEmbedder

DIGEST = ("Session 2026-12-04. Requests: The checkout tests are flaky on CI, can you figure out why? "
          "Commands: pytest tests/test_checkout.py. Open ends: the checkout tests still fail on CI.")


def _store(db_path, config, now):
    return MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", clock=lambda: now[0])


def _gains(store, query):
    _, found = store.candidates(query, namespace="p", n_cand=20)
    return {f"M{c.id}": c.after_question for c in found.candidates}


def test_a_session_digest_lends_no_words_to_the_memory_written_after_it(db_path, config):
    """A digest quotes the user's questions but is no turn: the unrelated fact the CLI wrote five minutes
    later inherited its words (relevance 0.46, first) while the digest, which holds them, was dropped."""
    now = [1_800_000_000.0]
    s = _store(db_path, config, now)
    digest = s.remember(DIGEST, kind="session", source={"platform": "claude-code", "session": "S1"})["id"]
    now[0] += 300
    probe = s.remember("CLI concurrency probe 0 gadget", kind="fact", source={"platform": "cli"})["id"]
    gain = _gains(s, "flaky checkout tests on CI")
    assert gain[probe] == 0.0
    out = s.recall("flaky checkout tests on CI", gates=False, touch=False)
    found = [h["id"] for h in out["results"]]
    assert probe not in found or found.index(digest) < found.index(probe)


def test_only_a_question_of_the_same_kind_and_platform_counts(db_path, config):
    """A note that asks, then a fact or a note from another platform: no conversation; the chat case (two
    notes of one platform, question then answer) keeps its lift."""
    now = [1_800_000_000.0]
    s = _store(db_path, config, now)
    s.remember("Melanie: what have you been researching for the adoption plan?")
    other_kind = s.remember("Caroline: agencies that take single parents", kind="fact")["id"]
    s.remember("Melanie: did you finish researching the adoption plan?")
    other_platform = s.remember("Caroline: agencies that take single parents, all of them",
                                source={"platform": "cli"})["id"]
    s.remember("Melanie: what are you researching for the adoption plan now?")
    answer = s.remember("Caroline: agencies that take single parents, it has been a dream of mine")["id"]
    gain = _gains(s, "adoption research agencies")
    assert gain[other_kind] == 0.0 and gain[other_platform] == 0.0
    assert gain[answer] > 0.3
