"""An export imported into an empty store gives back the same store: every version, every state, every link.

Found by a helper run: after `memory_merge {"keep": "M32", "other": "M33"}`, export wrote M32's chain only, so
the merged-away M33 (and its `supersedes` link from the merged version) was missing from the JSONL; after the
import `history M33` said "no memory M33" and `stats` counted one superseded version fewer.
"""
from __future__ import annotations

import json

import pytest
from helpers.common import check_consistency

from supermemory.core import MemoryStore
from supermemory.errors import InvalidInputError

from conftest import FakeEmbedder

STATS = ("memories", "by_kind", "by_namespace", "versions_superseded", "deleted")


def _build(store: MemoryStore) -> None:
    """A store with updates, merges (one of a memory with its own history, one of a merged memory), explicit
    and remember-written `supersedes` links, other links, soft deletes (of a head with history too)."""
    nginx = store.remember("The dev proxy is nginx.", kind="fact", tags=["proxy"])["id"]
    caddy = store.remember("nginx was replaced by Caddy as the dev proxy.", kind="fact")["id"]
    store.link(caddy, nginx, relation="supersedes")
    port = store.remember("The API listens on port 8080.", kind="fact")["id"]
    port2 = store.update(port, content="The API listens on port 9000.")["id"]
    dup = store.remember("API port: 9000 (changed from 8080).", kind="fact", tags=["api"])["id"]
    dup2 = store.update(dup, importance=0.9)["id"]
    merged = store.merge(dup2, port2)["id"]            # OTHER has a history of its own (and DUP supersedes it)
    again = store.remember("The API port is 9000 in every environment.", kind="fact")["id"]
    merged2 = store.merge(again, merged)["id"]         # a merged memory merged again
    task = store.remember("Move CI to the new runners", kind="task", status="open")["id"]
    store.link(task, merged2, relation="depends-on")
    store.update(task, status="done")
    gone = store.remember("Old staging host is stage1.", kind="fact")["id"]
    gone2 = store.update(gone, content="Old staging host is stage2.")["id"]
    store.forget(gone2)                                # a deleted head with history
    store.forget(store.remember("A scratch note nobody needs.")["id"])
    store.remember("global rule: never force-push main", namespace="global", kind="preference")


def _snapshot(store: MemoryStore) -> dict:
    ids = [f"M{r[0]}" for r in store.conn.execute("SELECT id FROM memories ORDER BY id")]
    stats = store.stats(namespace="*")
    return {"ids": ids, "history": {i: store.history(i, namespace="*") for i in ids},
            "graph": store.graph(namespace="*"), "stats": {k: stats[k] for k in STATS},
            "links": sorted(store.conn.execute("SELECT src, dst, relation, weight, CAST(created_at AS INTEGER) "
                                               "FROM links")),
            "rows": sorted(store.conn.execute(   # an export keeps times to the second
                "SELECT id, root_id, superseded_by, CAST(valid_from AS INTEGER), CAST(valid_to AS INTEGER), "
                "CAST(deleted_at AS INTEGER), delete_reason, content_hash, namespace, status, pinned, tags, "
                "importance FROM memories"))}


def test_a_round_trip_keeps_every_version_state_and_link_merged_memories_included(tmp_path, store, config):
    _build(store)
    before = _snapshot(store)
    assert before["stats"]["versions_superseded"] == 8 and before["stats"]["deleted"] == 2
    store.export(tmp_path / "d.jsonl", namespaces=["*"])
    lines = [json.loads(x) for x in (tmp_path / "d.jsonl").read_text().splitlines()]
    exported = sorted(int(v["id"][1:]) for line in lines for v in [line, *line["history"]])
    assert exported == sorted(int(i[1:]) for i in before["ids"]), "each version on exactly one line"
    with MemoryStore(tmp_path / "new.db", config=config, embedder=FakeEmbedder(), namespace="proj") as other:
        result = other.import_file(tmp_path / "d.jsonl")
        assert result["renumbered"] == {} and result["imported"] == len(lines)
        after = _snapshot(other)
        other.export(tmp_path / "again.jsonl", namespaces=["*"])
        merged_away = [i for i, h in after["history"].items() if any(v.get("merged_into") for v in h["versions"])]
        assert merged_away, "the merged memories' histories show what was merged into them"
    assert after == before
    assert (tmp_path / "again.jsonl").read_text() == (tmp_path / "d.jsonl").read_text()
    check_consistency(tmp_path / "new.db")


def test_a_merged_memory_keeps_its_history_and_link_when_its_ids_are_taken_in_the_store_imported_into(
        tmp_path, store, config):
    keep = store.remember("The dev proxy is Caddy.", kind="fact")["id"]
    other = store.remember("Caddy serves the dev proxy on :8443.", kind="fact")["id"]
    merged = store.merge(keep, other)["id"]
    store.export(tmp_path / "d.jsonl")
    with MemoryStore(tmp_path / "used.db", config=config, embedder=FakeEmbedder(), namespace="proj") as used:
        for n in range(3):
            used.remember(f"an unrelated note number {n} about lunch")
        result = used.import_file(tmp_path / "d.jsonl")
        renumbered = result["renumbered"]
        assert set(renumbered) == {keep, other, merged}
        history = used.history(renumbered[other])
        assert history["current"] == renumbered[merged]
        assert history["links"] == [{"src": renumbered[merged], "dst": renumbered[other], "relation": "supersedes",
                                     "weight": 1.0}]
        assert used.stats()["versions_superseded"] == 2
    check_consistency(tmp_path / "used.db")


def test_an_import_continues_a_chain_into_a_merge_made_after_the_first_import(tmp_path, store, config):
    keep = store.remember("Deploys run from CI.", kind="fact")["id"]
    other = store.remember("CI runs the deploys on every tag.", kind="fact")["id"]
    task = store.remember("Rotate the deploy key", kind="task", status="open")["id"]
    store.export(tmp_path / "first.jsonl")
    merged = store.merge(keep, other)["id"]
    done = store.update(task, status="done")["id"]     # same text and creation time as the version before
    store.export(tmp_path / "second.jsonl")
    with MemoryStore(tmp_path / "b.db", config=config, embedder=FakeEmbedder(), namespace="proj") as b:
        assert b.import_file(tmp_path / "first.jsonl")["imported"] == 3
        assert b.import_file(tmp_path / "second.jsonl") == {"imported": 2, "skipped": 0, "lines": 2,
                                                             "renumbered": {}, "taken": {}, "redacted": {}}
        assert sorted(m["id"] for m in b.list()["items"]) == sorted([merged, done])
        assert b.history(other)["current"] == merged
        assert b.get(done)["memories"][0]["status"] == "done"
    check_consistency(tmp_path / "b.db")


def test_a_link_whose_src_is_not_a_version_of_its_line_is_refused_naming_the_line(tmp_path, store):
    record = {"id": "M5", "namespace": "proj", "kind": "note", "title": "t", "body": "a hand-written record",
              "links": [{"src": "M9", "dst": "M5", "relation": "related"}]}
    (tmp_path / "in.jsonl").write_text(json.dumps(record) + "\n")
    with pytest.raises(InvalidInputError, match=r"in\.jsonl:1: links: src M9 is not a version of this line"):
        store.import_file(tmp_path / "in.jsonl")
    assert store.list(namespace="*")["total"] == 0


def test_a_link_from_an_older_version_travels_with_its_src(tmp_path, store, config):
    first = store.remember("Builds use make.", kind="fact")["id"]
    second = store.update(first, content="Builds use just.")["id"]
    note = store.remember("The justfile lives at the repo root.")["id"]
    with store.context.txn():   # as a store written by an older version may hold it
        store.conn.execute("INSERT INTO links(src, dst, relation, weight, created_at) VALUES (?, ?, 'related', 1, 0)",
                           (int(first[1:]), int(note[1:])))
    store.export(tmp_path / "d.jsonl")
    line = next(json.loads(x) for x in (tmp_path / "d.jsonl").read_text().splitlines() if json.loads(x)["id"] == second)
    assert line["links"] == [{"src": first, "dst": note, "relation": "related", "weight": 1.0,
                              "created_at": "1970-01-01T00:00:00Z"}]
    with MemoryStore(tmp_path / "b.db", config=config, embedder=FakeEmbedder(), namespace="proj") as b:
        b.import_file(tmp_path / "d.jsonl")
        assert b.history(first)["links"] == [{"src": first, "dst": note, "relation": "related", "weight": 1.0}]
