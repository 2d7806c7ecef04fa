"""text/answer_types + the relevance model's `lacks_answer_type`: a question asking how many, when or who is answered
by a memory holding a number, a time or a person, not by one that only shares its subject."""
import pytest

from supermemory.core import MemoryStore
from supermemory.retrieval import relevance
from supermemory.text import lexicons
from supermemory.text.answer_types import asked, held
from tests.conftest import FakeEmbedder


@pytest.mark.parametrize("question, kinds", [
    ("How many replicas does the worker deployment run?", {"number"}),
    ("how long do we keep the audit logs", {"number"}),
    ("When did we move the cron jobs to the scheduler?", {"time"}),
    ("Who owns the billing dashboards?", {"person"}),
    ("whose key signs the release tags", {"person"}),
    ("订单表保留多少天？", {"number"}),
    ("这个开关是什么时候加的", {"time"}),
    ("谁负责发版", {"person"}),
    ("How does the retry queue work?", set()),
    ("为什么要用消息队列", set()),
])
def test_the_answer_types_a_question_asks_for(question, kinds):
    assert asked(question) == frozenset(kinds)


def test_what_a_text_holds():
    assert held("The worker deployment runs 3 replicas") >= {"number"}
    assert held("We keep them for two weeks", frozenset({"number"})) == {"number"}
    assert held("moved on a Tuesday", frozenset({"time"})) == {"time"}
    assert held("moved last month", frozenset({"time"})) == {"time"}
    assert held("订单表保留三十天", frozenset({"number", "time"})) == {"number", "time"}
    assert held("the dashboards are owned by Priya from finance", frozenset({"person"})) == {"person"}
    assert held("retries use exponential backoff with jitter", frozenset(("number", "time", "person"))) == set()
    assert held("it has 5 parts", frozenset({"person"})) == set(), "only the wanted types are read"


def test_the_words_are_data_with_provenance():
    assert lexicons.provenance("answer_types")
    assert {side for _, side, _ in lexicons.table("answer_types")} == {"asks", "holds", "surnames"}


def test_the_feature_fires_only_when_the_memory_lacks_what_is_asked():
    ev = relevance.evidence([], cjk=0.0, answer_types=frozenset({"number"}))

    class Cand:
        id, bm25, cosine, coverage, code, after_question = 1, None, None, 0.0, 0.0, 0.0

    lacking, holding, unread = Cand(), Cand(), Cand()
    lacking.answer_types, holding.answer_types = frozenset(), frozenset({"number"})
    assert relevance.features(lacking, ev)["lacks_answer_type"] == 1.0
    assert relevance.features(holding, ev)["lacks_answer_type"] == 0.0
    assert relevance.features(unread, ev)["lacks_answer_type"] == 0.0, "not read: no evidence either way"
    plain = relevance.evidence([], cjk=0.0)
    assert relevance.features(lacking, plain)["lacks_answer_type"] == 0.0
    assert relevance.shipped().weights["lacks_answer_type"] < 0, "the fit reads a missing answer as evidence against"


def test_recall_puts_the_memory_holding_the_number_first(db_path, config, onnx_embedder):
    """Two notes on the worker deployment's replicas, one with their count: asked how many, that one comes first, and
    the other carries the model's penalty for lacking a number (with the real model: the input counts as far as the
    embedder reads the query)."""
    s = MemoryStore(db_path, config=config, embedder=onnx_embedder)
    about = s.remember("How many replicas the worker deployment runs depends on queue depth; KEDA scales it")["id"]
    answer = s.remember("The worker deployment runs 6 replicas at minimum")["id"]
    _, found = s.candidates("how many replicas does the worker deployment run", n_cand=20)
    types = {f"M{c.id}": c.answer_types for c in found.candidates}
    assert types[answer] == {"number"} and types[about] == frozenset()
    out = s.recall("how many replicas does the worker deployment run", gates=False, touch=False, explain=True)
    hits = {h["id"]: h for h in out["results"]}
    assert [h["id"] for h in out["results"]][:2] == [answer, about]
    assert hits[about]["contributions"]["lacks_answer_type"] < 0
    assert hits[answer]["contributions"]["lacks_answer_type"] == 0
    _, plain = s.candidates("worker deployment replicas", n_cand=20)
    assert all(c.answer_types is None for c in plain.candidates), "a question asking for no type reads no text"


def test_each_text_is_read_once_per_process(db_path, config, monkeypatch):
    from supermemory.retrieval import candidates

    reads = []
    monkeypatch.setattr(candidates, "_ANSWER_TYPES", {})
    real = candidates.answer_types.held
    monkeypatch.setattr(candidates.answer_types, "held", lambda text, *a: reads.append(text) or real(text, *a))
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder())
    s.remember("The nightly export keeps 14 days of files")
    s.candidates("how many days does the nightly export keep", n_cand=10)
    s.candidates("when does the nightly export run", n_cand=10)
    assert len(reads) == 1
