"""Fresh-user run fu32 D9: `stats` lists as "no result" only the queries whose latest run found nothing, and a hard
forget leaves no logged query that names a word only the erased memory held."""
from __future__ import annotations


def _logged(store) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT query FROM search_log ORDER BY id")]


def test_a_query_that_has_found_hits_since_is_no_longer_listed_as_finding_nothing(store):
    store.remember("Invoices are rendered to PDF with gofpdf.")
    assert store.recall("kafka consumer group naming")["results"] == []
    store.recall("gitlab runner tags")
    assert store.stats()["recent_empty_queries"] == ["gitlab runner tags", "kafka consumer group naming"]
    store.remember("Kafka consumer group naming: one group per service, named after it.", kind="decision")
    assert store.recall("kafka consumer group naming")["results"]
    assert store.stats()["recent_empty_queries"] == ["gitlab runner tags"]
    store.forget(store.recall("kafka consumer group naming")["results"][0]["id"])   # empty again: listed again
    store.recall("kafka consumer group naming")
    assert store.stats()["recent_empty_queries"] == ["kafka consumer group naming", "gitlab runner tags"]


def test_a_hard_forget_drops_the_logged_queries_naming_a_word_only_the_erased_memory_held(store):
    store.remember("Invoices are rendered to PDF with gofpdf.")
    gone = store.remember("The zorblatt quarkification job drains the invoices queue.")
    for query in ("zorblatt", "invoices pdf", "zorblatt quarkification", "invoices queue", "what about kafka"):
        store.recall(query)
    store.forget(gone["id"])                       # a soft forget can be undone: the log stays as it is
    assert len(_logged(store)) == 5
    store.restore(gone["id"])
    store.forget(gone["id"], hard=True)
    # "invoices" is still held by the PDF memory; "kafka" was never in the erased text
    assert _logged(store) == ["invoices pdf", "what about kafka"]
    assert "zorblatt" not in " ".join(store.stats()["recent_empty_queries"])


def test_a_hard_forget_of_a_superseded_chain_erases_the_queries_about_its_older_versions_too(store):
    old = store.remember("Nightly backups go to the wobblecrate bucket.", kind="fact")
    new = store.update(old["id"], content="Nightly backups go to the s3://archive bucket.")
    store.recall("wobblecrate")
    store.recall("nightly backups")
    store.forget(new["id"], hard=True)
    assert _logged(store) == []
