"""False `supersedes` links found by a fresh-user run (fu21 N1–N3), each beside the true revision of its shape:
an addition ("also", 也, 还) is one more value, not another one; a retirement limited to one area ("… in the admin
pages") leaves the facts of another area standing; two named things swapped plus a value changed is another fact
(values compared in order). store/supersession.py, text/traits.py (`adds`, `restates_value`), text/revisions.py."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.text.revisions import in_scope, retirement_scopes
from supermemory.text.traits import adds, restates_value
from conftest import FakeEmbedder  # noqa: F401  (the `store` fixture's embedder)


def links(store, older: str, newer: str) -> bool:
    old = store.remember(older, kind="fact")["id"]
    return old in store.remember(newer, kind="fact")["supersedes"]


@pytest.mark.parametrize("older, newer, plain", [
    ("CI runs the test suite on Go 1.21.", "CI also runs the test suite on Go 1.22.",
     "CI runs the test suite on Go 1.22."),
    ("We also support Python 3.10.", "We support Python 3.9.", None),                    # the older one adds
])
def test_an_addition_states_one_more_value_and_supersedes_nothing(store, older, newer, plain):
    assert not restates_value(older, newer)
    assert not links(store, older, newer)
    assert restates_value(older.replace("also ", ""), plain or newer)     # the value change itself still does


def test_adds_reads_also_too_as_well_and_chinese_additions():
    assert adds("CI also runs the test suite on Go 1.22.") and adds("We support Node 20 as well.")
    assert adds("Tests run on Go 1.22 too.") and adds("我们还支持 Python 3.10。") and adds("CI 也在 Go 1.22 上跑测试。")
    assert not adds("The build takes too long.") and not adds("也许明天发布。") and not adds("We support Python 3.9.")
    assert not adds("We moved from Go 1.21 to Go 1.22; CI also runs lint.")      # a change said plainly


@pytest.mark.parametrize("older, newer", [
    ("Worker 1 reads from replica 2 with a 5s timeout.", "Worker 2 reads from replica 1 with a 3s timeout."),
    ("race session 0 write 2: the retry budget for service 0 is 5 attempts",
     "race session 2 write 0: the retry budget for service 2 is 3 attempts"),
    ("1 号节点从 2 号副本读取，超时 5s。", "2 号节点从 1 号副本读取，超时 3s。"),
])
def test_swapped_names_and_one_changed_value_are_another_fact(store, older, newer):
    assert not restates_value(older, newer)
    assert not links(store, older, newer)
    assert restates_value(older, newer.replace("3s", "5s").replace("3 attempts", "5 attempts")) is False   # names differ
    assert links(store, older, older.replace("5s", "3s").replace("5 attempts", "3 attempts"))   # only the value: a revision


def test_one_value_of_two_equal_ones_changed_in_its_place_is_a_revision():
    assert restates_value("Reads time out after 30s and writes after 30s.", "Reads time out after 60s and writes after 30s.")


def test_a_retirement_scope_is_the_area_it_names():
    assert retirement_scopes("jQuery is no longer used in the admin pages.") == [frozenset({"admin", "page"})]
    assert retirement_scopes("We no longer use Docker Compose in CI; CI uses service containers.") == [frozenset({"ci"})]
    assert retirement_scopes("logrus is no longer used.") == []
    assert retirement_scopes("Moment.js is no longer used in the codebase.") == []       # the whole project
    assert retirement_scopes("Redis 不再用于任务队列，改用 NATS。")
    assert not in_scope(retirement_scopes("Sentry is no longer used for backend errors."), frozenset({"sentri", "frontend", "error"}))
    assert in_scope([], frozenset({"anything"}))


SCOPED = [     # (a fact of another area, a fact of the retired area, the retirement)
    ("The marketing site still uses jQuery.", "The admin pages use jQuery for the data tables.",
     "jQuery is no longer used in the admin pages."),
    ("Sentry collects frontend errors.", "Sentry collects backend errors.",
     "Sentry is no longer used for backend errors; we use OpenTelemetry there."),
    ("Docker Compose starts Postgres and Redis for local dev.", "CI starts Postgres with Docker Compose.",
     "We no longer use Docker Compose in CI; CI uses service containers."),
    ("The mobile app uses Moment.js for dates.", "The web app uses Moment.js for dates.",
     "Moment.js is no longer used in the web app."),
]


@pytest.mark.model
@pytest.mark.parametrize("other, same, newer", SCOPED)
def test_a_scoped_retirement_supersedes_only_facts_of_its_area_with_the_real_model(
        db_path, config, onnx_embedder, other, same, newer):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        ids = [s.remember(text, kind="fact")["id"] for text in (other, same)]
        assert s.remember(newer, kind="decision")["supersedes"] == [ids[1]]
