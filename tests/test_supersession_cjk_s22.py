"""fu23 D1: a Chinese change of decision with an aside in full-width brackets and a 因为 clause ("增量同步改用 CDC
（Debezium），不再用 updated_at 水位线，因为删除的行同步不到。") wrote no `supersedes` link: the length cap
(`supersession.max_terms`) counted its content terms, and the tokenizer gives a Chinese run as every character plus
every bigram, so a Chinese sentence of 28 characters read as 42 "words" (its English version: 14). The cap now counts
words (`text.traits.word_count`), sides end at brackets, and a clause saying what was before (之前存在A) names the old
value, so that a change of another attribute of the same subject does not link now that longer Chinese texts are read.
Pairs scored in bench/revision_pairs_s22.jsonl."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.text.revisions import retirement_scopes
from supermemory.text.traits import change_values, word_count

WATERMARK = "增量同步用 updated_at 水位线。"
CDC = "增量同步改用 CDC（Debezium），不再用 updated_at 水位线，因为删除的行同步不到。"

REVISIONS = [
    (WATERMARK, CDC),                                                               # the reported pair
    (WATERMARK, "增量同步改用 CDC，不再用 updated_at 水位线，因为删除的行同步不到。"),
    (WATERMARK, "增量同步改用 CDC（Debezium），不再用 updated_at 水位线。"),
    ("前端用 npm 管理依赖。", "前端改用 pnpm（workspace 模式），不再用 npm，因为安装太慢、lockfile 经常冲突。"),
    ("数据库迁移用 Alembic 管理，脚本在 migrations/ 目录。",
     "由于 Alembic 的自动生成经常漏掉索引，数据库迁移改用 Atlas（声明式 schema），Alembic 不再使用。"),
    ("配置用 .env 文件加 python-dotenv 读取。",
     "配置改用 pydantic-settings 读取（支持类型校验），不再用 python-dotenv，因为环境变量的类型老是出错。"),
    ("日志用 logging 模块写到本地文件。", "日志改用 structlog 输出 JSON（写到 stdout），不再写本地文件，由于容器重启后文件会丢。"),
]

NON_REVISIONS = [
    # another attribute of the same subject: where the watermark is kept, not which one
    (WATERMARK, "增量同步的水位线改为存在 Redis 里（key 带表名），因为之前存在本地文件，重启就丢了。"),
    (WATERMARK, "全量同步也用 updated_at 水位线做断点续传（因为表太大一次跑不完）。"),      # one more use: 也
    ("Redis 做会话缓存，过期时间一小时。", "Redis 不再用于任务队列（改用 RabbitMQ），因为重启后会丢任务。"),   # one use ends
    ("用 Redis 做缓存，过期时间一小时。", "不再用 Redis 做任务队列，改用 RabbitMQ（因为重启会丢任务）。"),
    ("本地开发用 Docker Compose 启动 Postgres 和 Redis。",                               # one area: CI
     "在 CI 里不再用 Docker Compose 启动依赖（改用 testcontainers），因为并行跑会端口冲突。"),
    ("日志用 structlog 输出 JSON。", "只在 admin 服务里不再用 structlog（改用标准 logging），因为它和 gevent 冲突。"),
]


def test_word_count_reads_chinese_in_words_not_in_characters_and_bigrams():
    assert word_count(CDC) <= 20        # 42 content terms: each character and each bigram counted
    english = "Incremental sync now uses CDC (Debezium) instead of the updated_at watermark, because deleted rows " \
              "never got synced."
    assert abs(word_count(CDC) - word_count(english)) <= 4
    assert word_count("We moved from logrus to log/slog (standard library) for structured logging; logrus is no "
                      "longer used.") == 11      # English is counted as before
    assert word_count("用 Redis 做缓存") == 3     # a lone character is a word


def test_a_side_ends_at_a_bracket_and_one_use_or_what_was_before_is_read_as_such():
    assert change_values("不再用 updated_at 水位线（旧方案），改用 CDC。") == [("updated_at 水位线", "")]
    assert change_values("CI 已经从 Jenkins 迁移到 GitLab CI（.gitlab-ci.yml）。") == [("Jenkins", "GitLab CI")]
    # 不再用于X retires one use (a scope), not a value named "于X"
    assert change_values("Redis 不再用于任务队列（改用 RabbitMQ）。") == []
    assert retirement_scopes("Redis 不再用于任务队列（改用 RabbitMQ）。") == [frozenset({"任", "务", "队", "列", "任务",
                                                                                    "务队", "队列"})]
    assert change_values("水位线改为存在 Redis 里，因为之前存在本地文件。") == [("本地文件", "")]
    assert change_values("部署改为 k8s，发布之前在 staging 验证。") == []     # "before releasing", not "previously"


@pytest.mark.model
@pytest.mark.parametrize("older, newer", REVISIONS, ids=["reported", "no-aside", "no-reason", "pnpm", "atlas",
                                                            "pydantic-settings", "structlog"])
def test_a_chinese_change_with_an_aside_and_a_reason_supersedes_the_old_decision(db_path, config, onnx_embedder,
                                                                                 older, newer):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="dataflow") as s:
        stale = s.remember(older, kind="decision")["id"]
        assert s.remember(newer, kind="decision")["supersedes"] == [stale]


@pytest.mark.model
@pytest.mark.parametrize("older, newer", NON_REVISIONS, ids=["other-attribute", "also", "one-use",
                                                                "one-use-as", "one-area", "one-service"])
def test_an_addition_a_limited_retirement_or_another_attribute_supersedes_nothing(db_path, config, onnx_embedder,
                                                                                  older, newer):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="dataflow") as s:
        s.remember(older, kind="decision")
        assert s.remember(newer, kind="decision")["supersedes"] == []
