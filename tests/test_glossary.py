"""The Chinese–English glossary: queries in one language reach memories written in the other."""
import pytest

from supermemory.text import tokenize
from supermemory.text.glossary import _tables, cross_terms, english_gloss


def test_a_chinese_word_translates_to_english_index_tokens():
    cross = cross_terms("cargo 编译太慢怎么加速")
    assert ("build",) in cross["编译"] and (tokenize("compile")[0],) in cross["编译"]
    assert ("slow",) in cross["慢"]
    assert "cargo" not in cross                     # no Chinese for it in the glossary: left alone


def test_an_english_word_translates_to_the_chinese_words_index_form():
    cross = cross_terms("what happens when ledgerly is deployed")
    assert cross[tokenize("deployed")[0]] == (("部署",),)
    # longer words must appear whole: their adjacent bigrams, all of them
    assert ("数据", "据库") in cross_terms("database tables")[tokenize("database")[0]]


def test_a_word_marked_whole_is_reached_from_its_inflections_not_from_its_stem():
    """Snowball makes "product" and "production" one stem, so "product pages" reached 生产 (production) and a Chinese
    rule about production deploys answered "what is the product roadmap" (fresh-user run fu34, D2)."""
    product = tokenize("product")[0]
    assert tokenize("production")[0] == product                       # why the mark is needed
    assert product not in cross_terms("product pages") and product not in cross_terms("the product_roadmap doc")
    for query in ("production deploy", "deploy to productions", "prod-only production_db"):
        assert ("生产",) in cross_terms(query)[product], query
    assert tokenize("except")[0] not in cross_terms("all tests pass except one")
    assert ("异常",) in cross_terms("exception handling")[tokenize("exception")[0]]
    assert cross_terms("who is the author") == {}
    assert cross_terms("deployed yesterday")[tokenize("deployed")[0]] == (("部署",),)   # unmarked: every word of the stem


def test_a_product_question_does_not_reach_a_chinese_rule_about_production(db_path, config):
    from supermemory.core import MemoryStore
    from tests.conftest import FakeEmbedder

    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder())
    rule = s.remember("部署到生产环境前必须在 #release 频道通知，并等待一名 SRE 确认。")["id"]
    s.remember("Redis cache TTL for product pages is 15 minutes")
    assert rule not in [h["id"] for h in s.recall("what is the product roadmap", touch=False)["results"]]
    assert rule in [h["id"] for h in s.recall("how do we announce a production deploy", touch=False)["results"]]


def test_single_characters_only_translate_into_english():
    _, en_to_zh, _, _ = _tables()
    assert all(len(word) >= 2 for words in en_to_zh.values() for word, _only in words)
    assert "slow" not in en_to_zh


def test_english_gloss_is_what_the_embedder_reads():
    assert english_gloss("cargo 编译太慢怎么加速") == "cargo compile 太 slow faster"
    assert english_gloss("JWT 过期以后前端会怎么处理").startswith("JWT expire")
    assert english_gloss("how do we deploy") == "how do we deploy"   # English passes through untouched
    assert english_gloss("《战国无双3》是由哪两个公司合作") == "《战国无双3》是由哪两个公司合作"


@pytest.mark.parametrize("query, gloss", [("", ""), ("   ", ""), ("???", "???")])
def test_odd_queries_do_not_break_it(query, gloss):
    assert cross_terms(query) == {}
    assert english_gloss(query) == gloss


def test_a_long_repeated_query_translates_every_repeat():
    query = "数据库" * 1500
    assert english_gloss(query) == " ".join(["database"] * 1500)
    assert cross_terms(query) == cross_terms("数据库") != {}


def test_a_chinese_question_about_a_chart_library_reaches_the_english_note(db_path, config):
    """图表 (chart) and 库 (library) were missing: "图表用的什么库" found nothing although a note said which chart
    library the project uses (fresh-user run fu23, D3)."""
    from supermemory.core import MemoryStore
    from tests.conftest import FakeEmbedder

    assert english_gloss("图表用的什么库") == "chart 用 library"
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder())
    charts = s.remember("Charts: the dashboard draws its charts with ECharts")["id"]
    s.remember("Forms are validated with zod schemas shared with the API")
    hits = s.recall("图表用的什么库", touch=False)["results"]
    assert hits and hits[0]["id"] == charts


def test_a_chinese_question_about_the_nightly_job_reaches_the_english_note_not_a_shared_verb(db_path, config):
    """夜间 (nightly) and 运行 (run) were missing: "夜间导出什么时候运行？" put a Chinese rule sharing only 运行 above the
    English note about the nightly export (fresh-user run fu24, D10)."""
    from supermemory.core import MemoryStore
    from tests.conftest import FakeEmbedder

    assert english_gloss("夜间导出什么时候运行？") == "nightly export run ?"
    assert ("run",) in cross_terms("夜间导出什么时候运行")["运行"]
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder())
    s.remember("每次提交前都要运行 make lint 和 make test。")
    export = s.remember("The nightly export now runs at 03:15 UTC")["id"]
    hits = s.recall("夜间导出什么时候运行？", touch=False)["results"]
    assert hits and hits[0]["id"] == export
