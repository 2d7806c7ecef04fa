"""Two-sentence windows (store/windows.py): a fact said in passing inside a longer memory is matched by meaning,
and every way a memory is written, changed or erased keeps its windows in step."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.store import windows
from supermemory.text import sentence_windows
from tests.conftest import FakeEmbedder

LONG = ("I'm looking for volunteer work in my town this spring. I helped at an egg hunt for the kids last week. "
        "By the way, the Maundy Thursday service at the Episcopal church was moving.")


def _rows(store, memory_id: str) -> list[tuple[int, bool]]:
    return [(seq, blob is not None) for seq, blob in store.conn.execute(
        "SELECT seq, embedding FROM windows WHERE memory_id = ? ORDER BY seq", (int(memory_id[1:]),))]


@pytest.mark.parametrize("text, expected", [
    ("One sentence only.", []),
    ("First one. Second one!", ["First one.", "Second one!"]),
    ("A one. B two? C three.", ["A one. B two?", "B two? C three."]),
    ("line one\nline two\nline three", ["line one line two", "line two line three"]),
    ("version 1.2.3 is out", []),
    # one sentence splitter for summaries and windows (text.sentences.SENTENCE_END): Chinese sentences need no space
    ("号段表放在 order_meta 库。不用雪花算法！", ["号段表放在 order_meta 库。", "不用雪花算法！"]),
])
def test_windows_are_two_adjacent_sentences(text, expected):
    assert sentence_windows(text) == expected


def test_a_long_text_gets_at_most_the_cap():
    assert len(sentence_windows(" ".join(f"Sentence {n}." for n in range(100)), max_windows=32)) == 32


def test_remember_writes_the_windows_and_a_mark_for_a_memory_without_any(store):
    long = store.remember(LONG)["id"]
    short = store.remember("Deploys go out on Tuesdays.")["id"]
    code = store.remember("def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n")["id"]
    assert _rows(store, long) == [(0, True), (1, True)]
    assert _rows(store, short) == [(windows.NONE, False)] == _rows(store, code)
    many = store.remember_many([{"content": LONG + " Also one more line."}, {"content": "Just one."}])
    assert [len(_rows(store, i)) for i in many] == [3, 1]


def test_a_memory_cosine_moves_toward_its_best_window(store, config):
    memory = store.remember(LONG)["id"]
    store.remember("Release notes are drafted on Fridays by the on-call engineer.")

    def cosine(share: float) -> float:
        config.settings.setdefault("ranking", {})["window_share"] = share
        found = store.recall("Maundy Thursday service at the Episcopal church", explain=True,
                             relevance_threshold=0)["results"]
        return next(r["features"]["cosine"] for r in found if r["id"] == memory)

    whole, moved, all_the_way = cosine(0.0), cosine(0.2), cosine(1.0)
    assert whole < moved < all_the_way
    found = store.recall("Maundy Thursday service at the Episcopal church", explain=True)["results"]
    hit = next(r for r in found if r["id"] == memory)
    assert hit["features"]["window_cosine"] == pytest.approx(all_the_way, abs=1e-4)
    from supermemory.render import render_recall
    shown = render_recall({"query": "Maundy Thursday", "results": [hit]}, explain=True)
    assert f"(best window {hit['features']['window_cosine']:.3f})" in shown
    assert moved == pytest.approx(whole + 0.2 * (all_the_way - whole), abs=1e-4)


def test_a_new_title_keeps_the_windows_of_the_same_body_without_embedding_them_again(store):
    memory = store.remember(LONG)["id"]
    embedded = []
    embed = store.embedder.embed_multi
    store.embedder.embed_multi = lambda texts, progress=None: embedded.extend(texts) or embed(texts, progress=progress)
    retitled = store.update(memory, title="Volunteering this spring")["id"]
    assert _rows(store, retitled) == [(0, True), (1, True)]
    assert not set(embedded) & set(sentence_windows(LONG)), "the body's windows were embedded again"


def test_windows_follow_updates_and_go_with_a_hard_forget(store):
    memory = store.remember(LONG)["id"]
    pinned = store.update(memory, pinned=True)["id"]          # the same text: the same windows
    assert _rows(store, pinned) == [(0, True), (1, True)]
    changed = store.update(pinned, content="Short now.")["id"]
    assert _rows(store, changed) == [(windows.NONE, False)]
    store.forget(changed, hard=True)
    assert store.conn.execute("SELECT count(*) FROM windows").fetchone()[0] == 0


class _Missing(FakeEmbedder):
    def fingerprint(self):
        from supermemory.errors import EmbeddingUnavailableError
        raise EmbeddingUnavailableError("model files missing")

    def embed_multi(self, texts, progress=None):
        from supermemory.errors import EmbeddingUnavailableError
        raise EmbeddingUnavailableError("model files missing")


def test_memories_written_without_the_model_or_before_windows_get_them_filled_in(db_path, config):
    with MemoryStore(db_path, config=config, embedder=_Missing(), namespace="p") as store:
        later = store.remember(LONG, create_namespace=True)["id"]
        assert _rows(store, later) == []
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p") as store:
        older = store.remember(LONG + " One more.")["id"]
        store.conn.execute("DELETE FROM windows WHERE memory_id = ?", (int(older[1:]),))   # a store from before
        assert store.health()["windows_pending"] == 2
        from supermemory.render import render_health
        assert "windows pending: 2 memories" in render_health(store.health())
        assert store.maintenance()["windows_embedded"] == 2
        assert store.health()["windows_pending"] == 0
        assert _rows(store, later) == [(0, True), (1, True)]
        assert len(_rows(store, older)) == 3


def test_reindex_and_a_redaction_that_rewrites_the_text_make_the_windows_again(store):
    memory = store.remember(LONG)["id"]
    store.conn.execute("UPDATE windows SET embedding = zeroblob(8) WHERE memory_id = ?", (int(memory[1:]),))
    store.reembed()
    assert store.conn.execute("SELECT count(*) FROM windows WHERE length(embedding) = 8").fetchone()[0] == 0
    assert _rows(store, memory) == [(0, True), (1, True)]
    secret = store.remember("Ops notes for the week. Rotate the deploy token soon.")["id"]
    store.conn.execute("UPDATE memories SET body = body || ' The token is ghp_6e3uKBKzTOAshzb9ukZ8ND1S6xfB2gpBLzHf.' "
                       "WHERE id = ?", (int(secret[1:]),))   # stored by an older version whose rules missed it
    assert store.redact_stored()["ids"]
    assert _rows(store, secret) == []                  # made from the old text: gone with it
    store.fill_vectors()
    assert len(_rows(store, secret)) == 2


def test_the_mcp_server_leaves_a_new_memory_windows_to_its_next_idle_turn(db_path, config):
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", cache_vectors=True) as server:
        memory = server.remember(LONG, create_namespace=True)["id"]
        assert _rows(server, memory) == [] and server.context.vectors_pending is True
        server.fill_vectors(limit=1, if_changed=True)          # what `idle_work` does between requests
        assert _rows(server, memory) == [(0, True), (1, True)]
        bulk = server.remember_many([{"content": LONG + " And more."}])[0]   # an import: written at once
        assert len(_rows(server, bulk)) == 3


def test_filling_in_windows_keeps_the_chunk_vectors_a_server_holds_in_memory(db_path, config):
    """An idle turn's windows change no chunk vector: the matrix warm recall reads stays (rebuilding it after every
    slice of an upgraded store's backlog cost each recall in between a full read of the vectors)."""
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", cache_vectors=True) as server:
        memory = server.remember(LONG, create_namespace=True)["id"]
        server.recall("Maundy Thursday service", relevance_threshold=0)
        held = dict(server.context.matrix_cache)
        assert held
        server.fill_vectors(limit=1, if_changed=True)
        assert _rows(server, memory) == [(0, True), (1, True)]
        assert server.context.matrix_cache == held
        found = server.recall("Maundy Thursday service", explain=True, relevance_threshold=0)["results"]
        assert "window_cosine" in next(r for r in found if r["id"] == memory)["features"]
