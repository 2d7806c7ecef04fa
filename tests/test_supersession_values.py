"""`supersedes` links for a bare value change: a memory that restates an older one word for word but for one value
("The API request timeout is 30 seconds." → "… 60 seconds."), no change wording, and the shapes that look alike
but state another fact (store/supersession.py, `restates_value`)."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.render import CLI_COMMANDS, render_remember
from supermemory.render_briefing import briefing_view
from conftest import FakeEmbedder

OLD = "The API request timeout is 30 seconds."
NEW = "The API request timeout is 60 seconds."
CONTROL = ("The embedding batch size is 32.", "The embedding batch size is 64.")   # a value change, to show the rule on

# Facts of many words (more than `supersession.max_terms` content words), the same but for one number.
ABSTRACT = ("We measured request latency across services written in Go, Rust, Java, Kotlin and Python, deployed "
            "on Kubernetes clusters in {n} regions with Envoy sidecars, Prometheus scraping, Grafana dashboards, "
            "Jaeger tracing, Loki logging, Vault secrets, Terraform provisioning, ArgoCD delivery, Istio routing, "
            "Redis caching, Kafka streaming, Postgres storage, Elasticsearch indexing and Cassandra archives; "
            "tail latency improved markedly after connection pooling, retries with jitter and circuit breakers.")


def apart(store, older: str, newer: str) -> None:
    """`newer` supersedes nothing beside `older`, while the control pair in the same store links: the rule is on
    and judged this pair another fact."""
    store.remember(older)
    assert store.remember(newer)["supersedes"] == []
    control = store.remember(CONTROL[0])["id"]
    assert store.remember(CONTROL[1])["supersedes"] == [control]


def test_a_bare_value_change_supersedes_the_older_statement_and_says_so(store):
    old = store.remember(OLD, kind="fact")["id"]
    new = store.remember(NEW, kind="fact")
    assert new["supersedes"] == [old]
    assert f"Supersedes {old}" in render_remember(new, commands=CLI_COMMANDS)
    stale = next(r for r in store.recall("API request timeout", explain=True)["results"] if r["id"] == old)
    assert stale["features"]["superseded_by"] == new["id"] and stale["contributions"]["superseded"] < 0


def test_the_briefing_offers_the_new_value_and_leaves_the_stale_one_out(store):
    old = store.remember(OLD, kind="decision")["id"]
    new = store.remember(NEW, kind="decision")["id"]
    listed = [item["id"] for items in store.briefing()["sections"].values() for item in items]
    assert new in listed and old not in listed
    assert "was: " + OLD[:30] in briefing_view(store.briefing())["text"]


@pytest.mark.parametrize("older, newer", [
    ("The CI image pins Python 3.11.", "The CI image pins Python 3.12."),                           # a version
    ("Nightly backups start at 02:00 UTC.", "Nightly backups start at 04:30 UTC."),                 # a time
    ("Feature flags are read from `flags.yaml` at startup.", "Feature flags are read from `flags.toml` at startup."),
    ('Set LOG_LEVEL to "info" in production.', 'Set LOG_LEVEL to "warn" in production.'),           # quoted
    ("The public API allows up to 100 requests per minute.", "The public API allows up to 250 requests per minute."),
    ("Staging runs Postgres 13.", "Staging runs Postgres 16."),                                     # a name's version
    ("Retry attempts for webhook delivery: 3.", "Retry attempts for webhook delivery: 5."),
    ("API 请求的超时时间是 30 秒。", "API 请求的超时时间是 60 秒。"),
    ("日志在服务器上保留 7 天。", "日志在服务器上保留 30 天。"),
])
def test_one_value_replaced_in_the_same_words_supersedes(store, older, newer):
    old = store.remember(older)["id"]
    assert store.remember(newer)["supersedes"] == [old]


@pytest.mark.parametrize("older, newer", [
    # another subject word: a staging value is no production one
    ("The staging request timeout is 30 seconds.", "The production request timeout is 60 seconds."),
    ("The upload timeout is 30 seconds.", "The download timeout is 60 seconds."),
    ("测试环境的超时时间是 30 秒。", "生产环境的超时时间是 60 秒。"),
    # a detail added or left out: not word for word
    (OLD, "The API request timeout is 60 seconds for uploads."),
    ("The API request timeout is 30 seconds for uploads.", NEW),
    # two numbers replaced: another fact of the same shape
    ("Postgres listens on port 5432 on db1.", "Postgres listens on port 5433 on db2."),
    # two values replaced: another setting
    ("Set `LOG_LEVEL` to `info` in the worker.", "Set `LOG_FORMAT` to `json` in the worker."),
    # not as many negations: "not above 10" is no value to replace by "above 20"
    ("Do not set the pool size above 10.", "Set the pool size above 20."),
    # a one-off change leaves the recurring schedule standing
    ("The team standup is at 09:30 every weekday.", "The team standup is at 10:00 today."),
])
def test_another_subject_or_more_than_one_value_is_another_fact(store, older, newer):
    apart(store, older, newer)


@pytest.mark.parametrize("older, newer", [
    ("Step 3: run the database migrations.", "Step 4: run the database migrations."),
    ("- Ticket 412: the login page times out on Safari", "- Ticket 413: the login page times out on Safari"),
    ("第3步：运行数据库迁移。", "第4步：运行数据库迁移。"),
    ("Widget 14 is painted red.", "Widget 15 is painted red."),
    ("Issue 42 blocks the release.", "Issue 43 blocks the release."),
    ("Bob fixed issue 42 in the parser.", "Bob fixed issue 57 in the parser."),
    ("Service number 3 talks to the queue.", "Service number 4 talks to the queue."),
    ("3号服务器的磁盘是 500 GB。", "4号服务器的磁盘是 500 GB。"),
    ("Ok. explain no.1 in detail configuration", "Ok. explain no.2 in detail configuration"),
])
def test_two_entries_of_a_list_or_two_numbered_things_stay_side_by_side(store, older, newer):
    apart(store, older, newer)


@pytest.mark.parametrize("older, newer", [
    ("[1:56 pm on 8 May, 2023] Caroline: Hey Mel! Good to see you!",
     "[2:14 pm on 8 May, 2023] Caroline: Hey Mel! Good to see you!"),
    ("[10:02] user: run the test suite again please", "[10:09] user: run the test suite again please"),
    ("More detail on 1.", "More detail on 3."),
    ("continue to step 1", "continue to step 2"),
    ("How do I grow my channel to 1000 subscribers in 3 months?",
     "How do I grow my channel to 10000 subscribers in 3 months?"),
    ('Give me a short explanation of "Choosing a conflict resolution strategy" in conflict management.',
     'Give me a short explanation of "Monitoring and evaluating the resolution process" in conflict management.'),
])
def test_two_chat_turns_of_one_template_are_two_turns(store, older, newer):
    apart(store, older, newer)


@pytest.mark.parametrize("older, newer", [
    (ABSTRACT.format(n=12), ABSTRACT.format(n=14)),
    ("def drop(self, ignore: bool = False) -> None:\n    self.db.execute(f\"DROP TABLE {quote(self.name)}\")\n",
     "def drop(self, ignore: bool = False) -> None:\n    self.db.execute(f\"DROP VIEW {quote(self.name)}\")\n"),
])
def test_documents_and_code_one_value_apart_supersede_nothing(store, older, newer):
    apart(store, older, newer)


def test_the_value_rule_stays_in_its_namespace_and_can_be_switched_off(db_path, config):
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj") as s:
        s.remember(OLD, namespace="global")      # recall reads `global` too; a link stays within one namespace
        new = s.remember(NEW)
        assert new["supersedes"] == []
        assert sorted(s.remember(NEW.replace("60", "90"))["supersedes"]) == [new["id"]]   # within proj it links
    config.settings["supersession"]["enabled"] = False
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj") as s:
        s.remember(OLD)
        assert s.remember("The API request timeout is 90 seconds.")["supersedes"] == []


def test_remember_many_links_a_value_change_in_its_batch(store):
    ids = store.remember_many([{"content": OLD}, {"content": NEW}])
    assert store.history(ids[0])["links"] == [{"src": ids[1], "dst": ids[0], "relation": "supersedes", "weight": 1.0}]


@pytest.mark.model
def test_a_bare_value_change_is_close_enough_with_the_real_model(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        old = s.remember(OLD, kind="fact")["id"]
        new = s.remember(NEW, kind="fact")
        assert new["supersedes"] == [old]
        config.settings["supersession"]["cosine"] = 0.99       # the pair must be close in meaning as well
        s.remember("The API request timeout is 90 seconds.", kind="fact")
        assert s.remember("The API request timeout is 120 seconds.", kind="fact")["supersedes"] == []
