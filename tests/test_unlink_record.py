"""fu23 D1, after the fix: a store that ran the supersedes backfill before `traits.word_count` read Chinese in words
never got the links of its Chinese changes of decision, and running the pass again would have re-created the links
the user had removed, since `unlink` left no trace. Removals are now recorded (`link_removals`), no automatic writer
of `supersedes` links writes a removed pair again, and a third one-time pass links the Chinese changes once."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.store import lifecycle, supersession
from conftest import FakeEmbedder

OLD = "Staging deploys run from the Jenkins deploy-staging job every night."
NEW = "Staging deploys no longer run from the Jenkins deploy-staging job; they run from GitHub Actions."
WATERMARK = "增量同步用 updated_at 水位线。"
CDC = "增量同步改用 CDC（Debezium），不再用 updated_at 水位线，因为删除的行同步不到。"
CHINESE_PASS = "Chinese supersedes links"


def open_store(db_path, config) -> MemoryStore:
    return MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj")


def supersedes(store) -> set[tuple[str, str]]:
    rows = store.conn.execute("SELECT src, dst FROM links WHERE relation = 'supersedes'")
    return {(f"M{a}", f"M{b}") for a, b in rows}


def removals(store) -> set[tuple[str, str, str]]:
    return {(f"M{a}", f"M{b}", r) for a, b, r in store.conn.execute("SELECT src, dst, relation FROM link_removals")}


def linked_pair(store, older: str, newer: str) -> tuple[str, str]:
    """Two memories, the newer superseding the older at write time: (newer id, older id)."""
    old = store.remember(older, kind="decision")["id"]
    new = store.remember(newer, kind="decision")
    assert new["supersedes"] == [old]
    return new["id"], old


def as_older_version(store) -> None:
    """The stamps of a version that ran the first two supersedes passes, not the Chinese one (the pass of newer
    wordings stamped too, so that the Chinese one is read alone)."""
    with store.context.txn():
        for key in (supersession.STAMP_KEY, supersession.VALUES_STAMP_KEY, supersession.WORDINGS_STAMP_KEY,
                    supersession.SUBJECT_STAMP_KEY):
            store.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (key,))
        store.conn.execute("DELETE FROM meta WHERE key = ?", (supersession.CJK_STAMP_KEY,))


def test_an_unlink_is_recorded_and_the_record_outlives_the_process(db_path, config):
    with open_store(db_path, config) as s:
        new, old = linked_pair(s, OLD, NEW)
        s.link(new, old, relation="related")
        assert s.unlink(new, old)["removed"] == ["related", "supersedes"]
    with open_store(db_path, config) as s:
        assert removals(s) == {(new, old, "related"), (new, old, "supersedes")}
        assert supersedes(s) == set()


def test_a_forced_backfill_does_not_write_a_link_the_user_removed_again(store):
    new, old = linked_pair(store, OLD, NEW)
    other_new, other_old = linked_pair(store, WATERMARK, CDC)
    store.unlink(new, old, relation="supersedes")
    store.unlink(other_new, other_old, relation="supersedes")
    store.link(other_new, other_old, relation="supersedes")     # the user's own word: never blocked
    assert supersession.backfill(store.context, force=True) == 0
    assert supersedes(store) == {(other_new, other_old)}


def test_an_explicit_link_after_an_unlink_is_written_and_clears_the_record(store):
    new, old = linked_pair(store, OLD, NEW)
    store.unlink(new, old, relation="supersedes")
    store.link(new, old, relation="related")          # another relation leaves the removal standing
    assert removals(store) == {(new, old, "supersedes")}
    assert store.link(new, old, relation="supersedes")["relation"] == "supersedes"
    assert supersedes(store) == {(new, old)}
    assert removals(store) == set()


def test_maintenance_links_a_chinese_change_once_in_a_store_whose_first_passes_ran_before(db_path, config):
    config.settings["supersession"]["enabled"] = False       # written as the old version did: no link
    with open_store(db_path, config) as s:
        old = s.remember(WATERMARK, kind="decision")["id"]
        new = s.remember(CDC, kind="decision")["id"]
        s.remember(OLD, kind="decision")
        s.remember(NEW, kind="decision")     # linked by the first pass back then: the Chinese pass reads only Chinese
        as_older_version(s)
    config.settings["supersession"]["enabled"] = True
    seen = []
    real = supersession.superseded

    def counting(ctx, namespace, text, *args, **kwargs):
        seen.append(text)
        return real(ctx, namespace, text, *args, **kwargs)

    with open_store(db_path, config) as s, pytest.MonkeyPatch.context() as m:
        m.setattr(supersession, "superseded", counting)
        assert lifecycle.pending_passes(s.context) == [CHINESE_PASS]
        result = s.maintenance()
        assert result["supersedes_links"] == 1 and [(x["src"], x["dst"]) for x in result["supersedes"]] == [(new, old)]
        assert seen == [CDC]
        assert supersedes(s) == {(new, old)}
        assert lifecycle.pending_passes(s.context) == [] and result["passes_pending"] == []
        assert s.maintenance()["supersedes_links"] == 0 and seen == [CDC]     # stamped: it ran once


def test_a_store_this_version_creates_has_no_pass_pending(store):
    linked_pair(store, WATERMARK, CDC)
    assert lifecycle.pending_passes(store.context) == []
    stamp = store.conn.execute("SELECT value FROM meta WHERE key = ?", (supersession.CJK_STAMP_KEY,)).fetchone()
    assert stamp == ("1",)


def test_a_chinese_pair_the_user_unlinked_stays_unlinked_through_the_chinese_pass(db_path, config):
    with open_store(db_path, config) as s:
        new, old = linked_pair(s, WATERMARK, CDC)
        s.unlink(new, old, relation="supersedes")
        as_older_version(s)
    with open_store(db_path, config) as s:
        assert lifecycle.pending_passes(s.context) == [CHINESE_PASS]
        assert s.maintenance()["supersedes_links"] == 0
        assert supersedes(s) == set() and lifecycle.pending_passes(s.context) == []
        s.link(new, old, relation="supersedes")       # the user changes their mind: the link is theirs to write
        assert supersedes(s) == {(new, old)}


def test_a_removal_follows_the_memory_to_its_new_version(store):
    new, old = linked_pair(store, OLD, NEW)
    store.unlink(new, old, relation="supersedes")
    newer = store.update(new, tags=["ci"])["id"]
    older = store.update(old, tags=["ci"])["id"]
    assert removals(store) == {(newer, older, "supersedes")}
    assert supersession.backfill(store.context, force=True) == 0 and supersedes(store) == set()


def test_a_hard_forget_takes_the_removal_records_with_it_and_a_soft_one_keeps_them(store):
    new, old = linked_pair(store, OLD, NEW)
    store.unlink(new, old, relation="supersedes")
    store.forget(old)
    assert removals(store) == {(new, old, "supersedes")}
    store.restore(old)
    store.forget(new, hard=True)
    assert removals(store) == set()
    assert store.maintenance()["purged"] == 0 and store.health()["orphans"] == {
        "chunks_without_memory": 0, "fts_without_live_chunk": 0, "live_chunks_without_fts": 0}


def test_removals_travel_with_an_export_so_the_importing_store_never_links_them(store, tmp_path, config):
    new, old = linked_pair(store, OLD, NEW)
    store.unlink(new, old, relation="supersedes")
    store.export(tmp_path / "out.jsonl")
    config.settings["supersession"]["enabled"] = False       # a store whose passes have not run yet
    with MemoryStore(tmp_path / "other.db", config=config, embedder=FakeEmbedder(), namespace="proj") as other:
        other.remember("A note of another project.", namespace="elsewhere", create_namespace=True)
        result = other.import_file(tmp_path / "out.jsonl")
        assert result["imported"] == 2
        pair = (result["renumbered"].get(new, new), result["renumbered"].get(old, old))
        assert removals(other) == {(*pair, "supersedes")}
        config.settings["supersession"]["enabled"] = True
        assert other.maintenance()["supersedes_links"] == 0 and supersedes(other) == set()
