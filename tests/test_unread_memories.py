"""A memory the embedder cannot read is no answer by its cosine.

bge-small has almost no Chinese vocabulary: a memory written in Chinese embeds as a bag of rare word pieces that
sits close to every query, so its cosine to an English question said "relevant" (a fresh user's global Chinese
preference ranked first, relevance 0.93, for `-p 1`). The readable part of the query now meets only the readable
part of the memory (`relevance.features`, `text.cjk_word_share`). These memories and questions are written for
this test.
"""
from __future__ import annotations

import pytest

from supermemory.retrieval import relevance
from supermemory.retrieval.ranking import Candidate
from supermemory.text import cjk_word_share

ENGLISH = ["The staging cluster pulls images from the internal registry at registry.corp.local.",
           "Run `cargo test -j 1` in CI: the integration tests share one Redis instance.",
           "Feature flags are read from LaunchDarkly; never hard-code a flag default.",
           "The mobile app talks to the API through the BFF in services/bff."]
CHINESE = ["提交信息请用中文写清楚改了什么，注释保持英文。",
           "每次发版前要在群里通知测试同学，等他们确认后再合并。",
           "请假要提前在系统里登记，紧急情况先电话说明。"]
# (question, index in ENGLISH of its answer)
QUESTIONS = [("-j 1", 1), ("where do staging images come from?", 0), ("flag defaults", 2), ("how does the app reach the API", 3)]


def test_a_chinese_memory_never_outranks_english_ones_by_its_cosine(db_path, config, onnx_embedder):
    """Under the answer come the English memories closest in meaning, not the Chinese ones closest to everything;
    and a question nothing answers ("-p 1") is not led by a Chinese memory (before: 3 of 4 questions had a
    Chinese memory second, and "-p 1" was led by one)."""
    from supermemory.core import MemoryStore

    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="mix") as store:
        english = [store.remember(text)["id"] for text in ENGLISH]
        chinese = {store.remember(text)["id"] for text in CHINESE}
        pages = {q: [h["id"] for h in store.recall(q, touch=False, gates=False)["results"]]
                 for q in [q for q, _ in QUESTIONS] + ["-p 1"]}
    for question, want in QUESTIONS:
        assert pages[question][0] == english[want], (question, pages[question])
    first_chinese = {q: min(i for i, id_ in enumerate(ids) if id_ in chinese) for q, ids in pages.items()}
    assert all(at >= 2 for at in first_chinese.values()), first_chinese


@pytest.mark.parametrize("text, low, high", [
    ("The build uses Vite.", 0.0, 0.0),
    ("回答我的时候用中文解释。", 1.0, 1.0),
    ("组件命名用 PascalCase，文件名用 kebab-case。", 0.6, 0.8),    # nine characters, three words
])
def test_unread_share_counts_chinese_characters_against_english_words(text, low, high):
    assert low <= cjk_word_share(text) <= high


def test_the_readable_query_gets_no_cosine_evidence_from_an_unread_memory():
    english, chinese = Candidate(1, cosine=0.62), Candidate(2, cosine=0.66, unread=1.0)
    filler = [Candidate(10 + i, cosine=0.5 - 0.01 * i) for i in range(12)]
    ev = relevance.evidence([english, chinese, *filler], cjk=0.0)
    read, unread = relevance.features(english, ev), relevance.features(chinese, ev)
    for name in ("cosine_margin", "cosine_z", "vector_rank", "vector_evidence"):
        assert read[name] > 0 and unread[name] == 0, name
    ev_zh = relevance.evidence([english, chinese, *filler], cjk=1.0)   # a Chinese question keeps its own channel
    assert relevance.features(chinese, ev_zh)["blind_cosine_z"] > 0
