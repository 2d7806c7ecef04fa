"""fu25 D2 and D3 (a moved period too): "不再用 Fly.io 的定时机器做每晚备份" read its retired value as "Fly" (the dot ended it) and retired it
everywhere, so it superseded a deploy decision that names Fly.io; it retires a use of Fly.io's machines for one job
(不再用 X 做 Y: Y is its area). And "now expire after 24 hours instead of 7 days" did not supersede "a 7-day TTL": the
hyphenated "7-day" was not read as 7, and the everyday "now … instead of" wanted a word for word restatement even
though it names the value the older memory states."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.store.supersession import _unit_numbers
from supermemory.text.revisions import retirement_scopes
from supermemory.text.traits import change_values

DEPLOY = "We ship the api to Render and the cron worker to Fly.io (region ams) because it keeps long connections open."
BACKUPS = "不再用 Fly.io 的定时机器做每周归档，改用 GitHub Actions 的定时工作流。"
CACHE = "API responses are cached in Memcached with a 5-minute expiry; we picked Memcached for its simple ops."
CACHE_CHANGE = "Cached API responses now expire after 30 seconds instead of 5 minutes, to keep prices fresh."


def test_a_dotted_name_is_one_value_and_a_use_retired_for_one_job_is_scoped_to_it():
    assert change_values("我们不再使用 Node.js 18。") == [("Node.js 18", "")]
    assert ("Fly.io 的定时机器", "") in change_values(BACKUPS)
    assert retirement_scopes(BACKUPS) and all({"归档"} <= scope for scope in retirement_scopes(BACKUPS))
    assert retirement_scopes("不再用 Redis 做任务队列。") and not retirement_scopes("不再使用 zap。")


def test_a_hyphenated_unit_states_its_number():
    assert _unit_numbers(frozenset({"5-minute", "7-day", "v3.11", "db1"})) == {"5", "7"}


@pytest.mark.model
def test_a_job_moved_off_a_platform_leaves_the_platform_decision_and_a_named_value_change_supersedes(
        db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="shop") as s:
        deploy = s.remember(DEPLOY, kind="decision")["id"]
        assert deploy not in s.remember(BACKUPS, kind="decision")["supersedes"]
        cache = s.remember(CACHE, kind="decision")["id"]
        assert s.remember(CACHE_CHANGE, kind="decision")["supersedes"] == [cache]


def test_a_period_stated_anew_for_one_subject_restates_it():
    from supermemory.text.revisions import periods, restates_period

    leave = "Priya is on leave from 2026-11-02 to 2026-11-20; Omar reviews her pull requests meanwhile."
    moved = "Priya's leave moved: she is now on leave from 2026-11-09 to 2026-11-27."
    assert periods(leave) == [(frozenset({"priya", "leav"}), ("2026-11-02", "2026-11-20"))]
    assert restates_period(leave, moved)
    assert not restates_period("Omar is on leave from Nov 2 to Nov 6.", moved)           # another person
    assert not restates_period(leave, leave)                                              # the same period
    assert not restates_period("The load test ran from Nov 3 to Nov 4.", "The soak test now runs from Dec 1 to Dec 3.")
    assert periods("Is the freeze from Dec 1 to Dec 5?") == [] and periods("Not from Dec 1 to Dec 5.") == []


@pytest.mark.model
def test_a_moved_period_supersedes_the_older_one_of_its_subject(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="team") as s:
        old = s.remember("Priya is on leave from 2026-11-02 to 2026-11-20; Omar reviews her pull requests meanwhile.",
                         kind="fact")["id"]
        other = s.remember("Omar is on leave from 2026-12-01 to 2026-12-05.", kind="fact")["id"]
        links = s.remember("Priya's leave moved: she is now on leave from 2026-11-09 to 2026-11-27.",
                           kind="fact")["supersedes"]
        assert old in links and other not in links
