"""`merge` never makes a corrected fact current again, and its history step says what it did.

Found by a helper run: M33 ("nginx was replaced by Caddy") superseded M32 ("dev proxy is nginx");
`merge keep=M32 other=M33` went through without a word: the nginx text was current again (M38), the correction
was history, and the history step of M38 read "(no change)".
"""
from __future__ import annotations

import pytest
from test_mcp_server import call

from supermemory.errors import InvalidInputError
from supermemory.render import render_history


def _stale_and_correction(store) -> tuple[str, str]:
    stale = store.remember("The dev proxy is nginx.", kind="fact", tags=["proxy"])["id"]
    newer = store.remember("nginx was replaced by Caddy as the dev proxy.", kind="fact")["id"]
    store.link(newer, stale, relation="supersedes")
    return stale, newer


def _rows(store) -> list[tuple]:
    return list(store.conn.execute("SELECT id, superseded_by, deleted_at FROM memories ORDER BY id"))


def test_merging_a_correction_into_the_memory_it_supersedes_is_refused_and_says_how_to_proceed(store):
    stale, newer = _stale_and_correction(store)
    before = _rows(store)
    with pytest.raises(InvalidInputError) as caught:
        store.merge(stale, newer)
    message = str(caught.value)
    assert message.startswith(f"cannot merge {newer} into {stale}: {newer} supersedes {stale}, so {newer} holds the "
                              f"newer fact ('nginx was replaced by Caddy as the dev proxy.')")
    assert f"Merge the other way round (keep {newer}, other {stale}" in message
    assert f"unlink {newer} {stale} (relation supersedes) first" in message
    assert _rows(store) == before, "nothing written"
    assert store.history(stale)["links"] == [{"src": newer, "dst": stale, "relation": "supersedes", "weight": 1.0}]


def test_the_other_way_round_keeps_the_correction_current_and_its_history_says_what_was_merged(store):
    stale, newer = _stale_and_correction(store)
    result = store.merge(newer, stale)
    current = store.get(result["id"])["memories"][0]
    assert current["body"] == "nginx was replaced by Caddy as the dev proxy." and current["tags"] == ["proxy"]
    history = store.history(result["id"])
    step = next(v for v in history["versions"] if v["id"] == result["id"])
    assert step["merged_from"] == [stale]
    text = render_history(history)
    assert "(no change)" not in text
    assert f"merged in {stale} (its text stays in history, its links moved here); changed: tags none → proxy" in text


def test_a_merge_that_changes_nothing_but_takes_a_memory_in_is_never_shown_as_no_change(store):
    keep = store.remember("Use pnpm for installs.")["id"]
    other = store.remember("pnpm is the package manager.")["id"]
    merged = store.merge(keep, other)["id"]
    text = render_history(store.history(merged))
    assert f"merged in {other} (its text stays in history, its links moved here)" in text
    assert "(no change)" not in text


def test_a_correction_through_another_live_memory_is_refused_too(store):
    first = store.remember("Staging runs on host stage1.")["id"]
    second = store.remember("Staging moved from stage1 to stage2.")["id"]
    third = store.remember("Staging moved again, from stage2 to stage3.")["id"]
    store.link(second, first, relation="supersedes")
    store.link(third, second, relation="supersedes")
    with pytest.raises(InvalidInputError, match=rf"{third} supersedes {first} \(through {second}\).*"
                                                rf"unlink {second} {first} \(relation supersedes\) first"):
        store.merge(first, third)
    assert store.merge(third, first)["kept"] == third


def test_after_unlinking_a_wrong_supersedes_link_the_merge_goes_through(store):
    stale, newer = _stale_and_correction(store)
    store.unlink(newer, stale, relation="supersedes")
    result = store.merge(stale, newer)
    assert result["kept"] == stale and result["merged"] == newer


def test_memory_merge_over_mcp_answers_the_refusal_as_a_tool_error(store):
    stale, newer = _stale_and_correction(store)
    result = call(store, "memory_merge", {"keep": stale, "other": newer})["result"]
    assert result["isError"] is True
    assert f"{newer} holds the newer fact" in result["content"][0]["text"]
    assert store.conn.execute("SELECT superseded_by FROM memories WHERE id = ?",
                              (int(stale[1:]),)).fetchone()[0] is None   # not merged (get names the link's successor)


def test_a_hard_delete_of_a_merged_memory_erases_the_memories_merged_into_it_too(store, db_path):
    # Found while fixing the export of merged memories: `forget --hard` erased the kept chain only, so the memory
    # merged into it (and its older version) stayed in the database, pointing at a version that no longer existed.
    from helpers.common import check_consistency
    from supermemory.errors import NotFoundError

    keep = store.remember("Deploy keys live in the vault.")["id"]
    other = store.remember("The deploy key is kept in 1Password.")["id"]
    other2 = store.update(other, content="The deploy key is kept in the vault now.")["id"]
    bystander = store.remember("Unrelated: the office closes at six.")["id"]
    merged = store.merge(keep, other2)["id"]
    assert store.forget(merged, hard=True) == {"forgotten": [merged], "hard": True}
    assert [f"M{r[0]}" for r in store.conn.execute("SELECT id FROM memories")] == [bystander]
    for gone in (keep, other, other2, merged):
        with pytest.raises(NotFoundError):
            store.history(gone)
    assert "1password" not in " ".join(r[0] for r in store.conn.execute("SELECT tokens FROM fts")).lower()
    check_consistency(db_path)


def test_the_history_of_a_merged_away_memory_is_the_history_it_was_merged_into(store):
    # Found by a fresh-user run: `history M4` after `merge M3 M4` listed only M4 ("current version M6") with no
    # "merged into" and no M6 line, while `history M3` showed both.
    keep = store.remember("Use pnpm for installs.")["id"]
    other = store.remember("pnpm is the package manager.")["id"]
    older_other = other
    other = store.update(other, content="pnpm 9 is the package manager.")["id"]
    merged = store.merge(keep, other)["id"]
    away, kept = store.history(other), store.history(keep)
    assert away["current"] == merged and [v["id"] for v in away["versions"]] == [v["id"] for v in kept["versions"]]
    assert {v["id"] for v in away["versions"]} == {keep, older_other, other, merged}
    assert next(v for v in away["versions"] if v["id"] == other)["merged_into"] == merged
    assert "merged_into" not in next(v for v in away["versions"] if v["id"] == older_other)
    assert f"merged into {merged}" in render_history(away)


def test_a_text_edit_of_a_superseded_memory_is_refused_and_says_where_the_newer_fact_is(store):
    # Found by a fresh-user run: an edit of the nginx memory after the Caddy correction was written as a new version
    # that carried the link along, so the just-edited text read '[superseded by M10]' in recall and 'was: …' in the
    # briefing. Metadata (pin, tags, status) still goes through; after unlinking, the edit does too.
    stale, newer = _stale_and_correction(store)
    before = _rows(store)
    with pytest.raises(InvalidInputError) as caught:
        store.update(stale, content="The dev proxy is nginx 1.27.")
    assert str(caught.value).startswith(f"{stale} is superseded by {newer} ('nginx was replaced by Caddy")
    assert f"Update {newer} instead, or, if the supersedes link is wrong, unlink {newer} {stale}" in str(caught.value)
    assert _rows(store) == before, "nothing written"
    assert call(store, "memory_update", {"id": stale, "title": "proxy"})["result"]["isError"] is True
    pinned = store.update(stale, pinned=True)["id"]
    store.unlink(newer, pinned, relation="supersedes")
    assert store.update(pinned, content="The dev proxy is nginx 1.27.")["status"] == "updated"
