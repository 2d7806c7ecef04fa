"""A memory's summary as recall shows it: a lead that is only a label or a question carries the fact after it,
and stores written before get their summaries recomputed once by maintenance."""
from __future__ import annotations

from supermemory.render import memory_line, render_recall
from supermemory.store import lifecycle

LABEL = "Celery gotcha. Tasks must be idempotent because the broker redelivers on worker restart."
QUESTION = "User prefers tabs over spaces? No — the team standard is 2 spaces, enforced by prettier."
CHINESE = "Celery 注意事项。任务必须幂等，因为 broker 会在 worker 重启时重新投递。"


def test_recall_of_a_label_or_question_led_memory_shows_the_fact_after_it(store):
    for text in (LABEL, QUESTION, CHINESE):
        store.remember(text)
    page = render_recall(store.recall("celery tasks idempotent broker redelivers"))
    assert "Tasks must be idempotent because the broker redelivers" in page, page
    page = render_recall(store.recall("tabs or spaces indentation prettier"))
    assert "the team standard is 2 spaces" in page, page
    hit = store.recall("celery 任务 幂等")["results"][0]
    assert hit["title"] == "Celery 注意事项。" and "任务必须幂等" in hit["summary"], hit


def _summaries(store, ids):
    return [m["summary"] for m in store.get(ids)["memories"]]


def test_maintenance_recomputes_summaries_written_before_once(store):
    ids = [store.remember(text)["id"] for text in (LABEL, QUESTION, "Deploys happen on Tuesdays only.")]
    conn = store.context.conn
    with store.context.txn():   # a store written by the first-sentence summaries, before the stamp existed
        conn.execute("UPDATE memories SET summary = title")
        conn.execute("DELETE FROM meta WHERE key = ?", (lifecycle.SUMMARY_STAMP,))
    assert _summaries(store, ids[:2]) == ["Celery gotcha.", "User prefers tabs over spaces?"]
    assert store.maintenance()["summaries"] == 2
    assert _summaries(store, ids) == [LABEL, QUESTION, "Deploys happen on Tuesdays only."]
    with store.context.txn():
        conn.execute("UPDATE memories SET summary = title")
    assert store.maintenance()["summaries"] == 0   # stamped: the pass ran once for this summary version


def test_a_summary_pass_out_of_time_goes_on_where_it_stopped(store):
    ids = [store.remember(f"Gotcha number {n}. The cache key {n} must include the tenant id.")["id"]
           for n in range(5)]
    conn = store.context.conn
    with store.context.txn():
        conn.execute("UPDATE memories SET summary = title")
        conn.execute("DELETE FROM meta WHERE key = ?", (lifecycle.SUMMARY_STAMP,))
    assert lifecycle.refresh_summaries(store.context, deadline=0) == 0   # no time: nothing read
    calls = iter([True, False])

    class Once:   # a deadline that allows one batch
        def __gt__(self, other):
            return next(calls)

    assert lifecycle.refresh_summaries(store.context, deadline=Once(), batch=2) == 2
    assert lifecycle.refresh_summaries(store.context, batch=2) == 3
    assert all("tenant id" in summary for summary in _summaries(store, ids))


def test_a_chinese_summary_keeps_the_clause_after_a_full_width_semicolon_and_its_title_shows_once(store):
    """'；' joins clauses as ';' does: the summary keeps "缓存使用 Redis 集群" (it was cut there), and the list
    line under the title "部署流程" starts after the lead's '：' instead of with it."""
    text = "部署流程：先在预发布环境验证，再用 ansible 发布到生产；缓存使用 Redis 集群"
    memory = store.get([store.remember(text, title="部署流程")["id"]])["memories"][0]
    assert memory["summary"] == text
    assert memory_line(memory) == f"- [{memory['id']} note] 部署流程 — " + text.split("：", 1)[1]
    english = "Deploy flow: verify on staging first, then ansible to prod; the cache uses a Redis cluster"
    assert store.get([store.remember(english)["id"]])["memories"][0]["summary"] == english
