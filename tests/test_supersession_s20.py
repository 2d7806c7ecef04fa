"""fu20 D3 and D1: a change that retires the value an older fact states ("We moved from logrus to log/slog …; logrus
is no longer used" beside "Logging uses logrus with the JSON formatter; …") supersedes it though the two share few
words; stores written before bare value changes were linked get those links once from maintenance; and health lists
an unlinked pair that differs in one number ("30s" / "60s", "is 20." / "is 50.") as a possible contradiction."""
from __future__ import annotations

import time

import pytest

from supermemory.core import MemoryStore
from supermemory.store import supersession
from supermemory.text.traits import change_values, swapped_value
from conftest import FakeEmbedder

LOGRUS = "Logging uses logrus with the JSON formatter; every request logs request_id."
SLOG = "We moved from logrus to log/slog (standard library) for structured logging; logrus is no longer used."
SESSIONS = "Redis holds the session cache; keys expire after one hour."
JOBS = "We moved the background job queue from Redis to RabbitMQ; Redis is no longer used for jobs."
VALUE_PAIRS = [("The webhook handler read timeout is 30s.", "The webhook handler read timeout is 60s."),
               ("The outbox poller interval is 5 seconds.", "The outbox poller interval is 15 seconds."),
               ("Max DB pool size is 20.", "Max DB pool size is 50.")]


def supersedes(store) -> set:
    return set(store.conn.execute("SELECT src, dst FROM links WHERE relation = 'supersedes'").fetchall())


def test_change_values_reads_a_retired_value_only_when_the_value_itself_is_gone():
    assert ("logrus", "") in change_values(SLOG)
    assert ("zap", "") in change_values("日志库从 zap 改成了标准库 log/slog，不再使用 zap。")
    assert ("golang-migrate", "") in change_values("迁移工具从 golang-migrate 换成了 goose，golang-migrate 已不再使用。")
    assert ("LaunchDarkly", "") in change_values("We no longer use LaunchDarkly.")
    # one use of it ends, not the value: "for jobs"; 任务不再经过 Redis
    assert all(new for _, new in change_values(JOBS))
    assert all(new for _, new in change_values("任务队列从 Redis 迁移到了 RabbitMQ，任务不再经过 Redis。"))


@pytest.mark.model
@pytest.mark.parametrize("older, newer, other, unrelated", [
    (LOGRUS, SLOG, SESSIONS, JOBS),
    ("The ORM is GORM; models live in internal/models and auto-migrate is off.",
     "We moved database access from GORM to sqlc (generated queries); GORM is no longer used.",
     "The Jenkins server also hosts the internal Nexus artifact cache.",
     "We moved CI from Jenkins to GitHub Actions; Jenkins pipelines are no longer used."),
    ("日志用 zap 输出 JSON，每个请求都带 trace_id。", "日志库从 zap 改成了标准库 log/slog，不再使用 zap。",
     "Redis 用作会话缓存，过期时间是一小时。", "任务队列从 Redis 迁移到了 RabbitMQ，任务不再经过 Redis。"),
])
def test_retiring_the_value_an_older_fact_states_supersedes_it_and_one_use_of_a_value_does_not(
        db_path, config, onnx_embedder, older, newer, other, unrelated):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="billing-api") as s:
        stale = s.remember(older, kind="fact")["id"]
        standing = s.remember(other, kind="fact")["id"]
        assert s.remember(newer, kind="decision")["supersedes"] == [stale]
        assert standing not in s.remember(unrelated, kind="decision")["supersedes"]


def test_swapped_value_reads_a_number_with_a_unit_or_a_plain_number_as_one_value():
    for older, newer in VALUE_PAIRS + [("The codegen scripts in CI run on Python 3.11.",
                                        "The codegen scripts in CI run on Python 3.12.")]:
        assert swapped_value(older, newer) and swapped_value(newer, older)
    assert not swapped_value("Fix widget 14 first.", "Fix widget 15 first.")     # a counted name: two things
    assert not swapped_value("Step 3: run the migrations.", "Step 4: run the migrations.")   # two list entries
    assert not swapped_value("Python 3.11 on 2 cores", "Python 3.12 on 4 cores")  # two values: another fact


@pytest.mark.model
def test_health_lists_an_unlinked_number_change_as_a_possible_contradiction(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="billing-api") as s:
        pairs = []
        for older, newer in VALUE_PAIRS:
            a, b = s.remember(older, kind="fact")["id"], s.remember(newer, kind="fact")
            assert b["supersedes"] == [a]
            s.unlink(b["id"], a, relation="supersedes")      # as in a store written before the link
            pairs.append({a, b["id"]})
        listed = [{p["a"], p["b"]} for p in s.health()["possible_contradictions"]]
        assert all(pair in listed for pair in pairs), listed
        assert s.health()["near_duplicate_pairs"] == 0


def _store_before_value_links(db_path, config) -> list[tuple[int, int]]:
    """A store whose change pass ran before bare value changes were linked: value pairs, no link, the old stamp."""
    expected = []
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj") as s:
        for older, newer in VALUE_PAIRS:
            a, b = s.remember(older, kind="fact")["id"], s.remember(newer, kind="fact")
            assert b["supersedes"] == [a]
            s.unlink(b["id"], a, relation="supersedes")
            expected.append((int(b["id"][1:]), int(a[1:])))
        assert supersedes(s) == set()
        with s.context.txn():
            s.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (supersession.STAMP_KEY,))
            s.conn.execute("DELETE FROM meta WHERE key = ?", (supersession.VALUES_STAMP_KEY,))   # not known then
            s.conn.execute("DELETE FROM link_removals")      # nor was a removal recorded: no link had been written
    return expected


def test_maintenance_links_bare_value_changes_once_in_a_store_whose_change_pass_already_ran(db_path, config):
    expected = _store_before_value_links(db_path, config)
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj") as s:
        assert s.maintenance()["supersedes_links"] == len(VALUE_PAIRS)
        assert supersedes(s) == set(expected)
        assert s.conn.execute("SELECT value FROM meta WHERE key = ?",
                              (supersession.VALUES_STAMP_KEY,)).fetchone() == ("1",)
        s.unlink(f"M{expected[0][0]}", f"M{expected[0][1]}", relation="supersedes")   # the user's word stands
        assert s.maintenance()["supersedes_links"] == 0


def test_the_value_pass_cut_short_goes_on_where_it_stopped(db_path, config, request):
    expected = _store_before_value_links(db_path, config)
    seen, cut_short = request.getfixturevalue("backfill_probe")     # from here on: one memory per slice
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj") as s:
        with cut_short():
            s.maintenance(deadline=5.0)                       # one slice, then the clock says stop
        assert len(seen) == 1
        assert s.conn.execute("SELECT 1 FROM meta WHERE key = ?", (supersession.VALUES_STAMP_KEY,)).fetchone() is None
        assert s.conn.execute("SELECT 1 FROM meta WHERE key = ?", (supersession.VALUES_CURSOR_KEY,)).fetchone()
        s.maintenance(deadline=time.monotonic() + 60)
        assert len(seen) == len(set(seen)) == 2 * len(VALUE_PAIRS)     # every memory read once, none twice
        assert supersedes(s) == set(expected)
