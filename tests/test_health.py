"""`supermemory health`: which close pairs it offers to merge, and which it calls possible contradictions; what merge refuses."""
from __future__ import annotations

import pytest

from supermemory.core import MemoryStore
from supermemory.errors import InvalidInputError
from supermemory.render import render_health
from supermemory.text.traits import around_secrets, cjk_words, negations, numbers
from conftest import FakeEmbedder

# Long enough a shared tail that the test embedder (feature hashing) puts the pairs above 0.9, as bge-small does.
TAIL = " in the web workspace: pnpm keeps the lockfile and the shared store in sync across every package of the monorepo"


def test_a_pair_that_differs_by_a_negation_is_a_possible_contradiction_not_a_merge(store):
    # Found by a fresh-user run: "Use the staging database…" / "Do not use the staging database…" (cosine 0.93)
    # was listed as a near-duplicate pair with `supermemory merge M7 M6`.
    use = store.remember(f"Use the staging database for load tests{TAIL}")
    dont = store.remember(f"Do not use the staging database for load tests{TAIL}")
    report = store.health()
    assert report["near_duplicates"] == [] and report["near_duplicate_pairs"] == 0
    [pair] = report["possible_contradictions"]
    assert {pair["a"], pair["b"]} == {use["id"], dont["id"]} and pair["similarity"] >= 0.9
    assert report["possible_contradiction_count"] == 1 and not report["clean"]
    text = render_health(report)
    assert "merge" not in text.replace("no merge", "")
    assert f"  {use['id']} vs {dont['id']} (" in text and "possible contradictions" in text


def test_notes_that_differ_only_by_a_number_are_not_near_duplicates(store):
    # Found by a fresh-user run: 20 notes "...widget number 14" / "...15" gave 196 merge suggestions.
    for n in range(20):
        store.remember(f"The quarterly inventory report for the east warehouse counts widget number {n}")
    report = store.health()
    assert report["near_duplicate_pairs"] == 0 and report["near_duplicates"] == []
    assert report["possible_contradiction_count"] == 0 and report["clean"]


def test_real_copies_are_still_offered_for_merging(store):
    a = store.remember("Use pnpm 9 for installs in the web workspace")
    b = store.remember("Use pnpm 9 for installs in the web workspace today")
    c = store.remember(f"Don't use npm{TAIL}")
    d = store.remember(f"Do not use npm{TAIL}")   # negate alike: "don't" counts as "not"
    report = store.health(duplicate_similarity=0.8)   # the test embedder hashes "don't" and "do not" apart
    assert {(p["a"], p["b"]) for p in report["near_duplicates"]} == {(a["id"], b["id"]), (c["id"], d["id"])}
    assert report["possible_contradictions"] == []


def test_negations_fold_contractions_and_find_chinese_ones_anywhere():
    assert negations("Use the staging database") == frozenset()
    assert negations("Don’t use it") == negations("We cannot") == negations("do NOT") == {"not"}
    assert negations("never, without a ticket") == {"never", "without"}
    assert negations("nothing") == {"nothing"} and negations("notation knows") == frozenset()
    assert negations("不要用 staging 数据库") == {"不"} and negations("别用它") == {"别"}


def test_numbers_are_the_digit_runs_in_order():
    assert numbers("widget number 14") == ("14",) and numbers("v3.12 on port 8080") == ("3", "12", "8080")
    assert numbers("ｗｉｄｇｅｔ １５") == ("15",) and numbers("no digits") == ()


def test_remember_hints_a_close_memory_only_when_negations_and_numbers_agree(store):
    # Found by a helper run: the write-time hint "similar memory exists: update it instead" fired for the negated
    # pair and for every numbered note, as health's merge list did.
    use = store.remember(f"Use the staging database for load tests{TAIL}")
    assert store.remember(f"Do not use the staging database for load tests{TAIL}")["near_duplicates"] == []
    store.remember("The quarterly inventory report for the east warehouse counts widget number 14")
    assert store.remember("The quarterly inventory report for the east warehouse counts widget number 15"
                          )["near_duplicates"] == []
    again = store.remember(f"Use the staging database for load tests{TAIL}, always")
    assert [n["id"] for n in again["near_duplicates"]] == [use["id"]]


# Mixed English/Chinese pairs that differ only in their Chinese words: bge-small reads those as unknown tokens.
MIXED = [("部署 uses port 8080 on the staging host", "回滚 uses port 8080 on the staging host"),
         ("API 网关 timeout is 30s", "API 数据库 timeout is 30s")]


def test_cjk_words_are_the_chinese_tokens_a_text_carries():
    assert cjk_words("API 网关 timeout is 30s") == {"网", "关", "网关"}
    assert cjk_words("部署的端口") == cjk_words("部署 端口") != cjk_words("回滚的端口")   # function words left out
    assert cjk_words("English only, 8080") == frozenset()


def test_texts_that_differ_only_in_their_chinese_words_are_neither_hinted_nor_merged(db_path, config):
    # Found by a fresh-user run: "API 网关 timeout is 30s" / "API 数据库 timeout is 30s" read as 1.00-similar,
    # hinted at `remember` and offered for merging by health.
    config.settings["store"]["near_duplicate_similarity"] = 0.8   # the test embedder sees a little of the Chinese
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj") as s:
        for older, newer in MIXED:
            s.remember(older + TAIL)
            assert s.remember(newer + TAIL)["near_duplicates"] == []
        copy = s.remember(MIXED[0][0] + TAIL + ", always")       # the same Chinese words: still a copy
        assert copy["near_duplicates"] and copy["near_duplicates"][0]["title"].startswith("部署")
        report = s.health(duplicate_similarity=0.8)
    assert [p["titles"][0][:2] for p in report["near_duplicates"]] == ["部署"]


@pytest.mark.model
def test_mixed_pairs_that_read_as_one_to_bge_small_are_not_duplicates(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        for older, newer in MIXED:
            s.remember(older)
            assert s.remember(newer)["near_duplicates"] == []
        assert s.health()["near_duplicates"] == []


def test_health_pairs_memories_only_within_one_namespace_and_merge_refuses_two(store):
    # Found by a fresh-user run: the same note in two projects was listed with `supermemory merge`, and the merge
    # moved one project's memory into the other's.
    note = f"Run the linters with make lint before pushing{TAIL}"
    mine = store.remember(note)["id"]
    theirs = store.remember(note, namespace="other", create_namespace=True)["id"]
    shared = store.remember(note, namespace="global")["id"]
    report = store.health(namespace="*")
    assert report["near_duplicates"] == [] and report["near_duplicate_pairs"] == 0 and report["clean"]
    again = store.remember(f"{note}, always")["id"]
    assert [(p["a"], p["b"]) for p in store.health(namespace="*")["near_duplicates"]] == [(mine, again)]
    for keep, other in ((mine, theirs), (shared, mine)):
        with pytest.raises(InvalidInputError, match="merge joins memories of one namespace"):
            store.merge(keep, other, namespace="*")
    assert store.get(theirs, namespace="*")["memories"][0]["superseded_by"] is None
    assert store.merge(again, mine)["merged"] == mine


def test_health_offers_no_merge_for_a_pair_one_supersedes_the_other(store):
    # Found by a merge-defect fix: health printed 'supermemory merge OLD NEW' for a corrected pair, which merge
    # refuses. A fresh-user run (fresh2, item 7): a linked pair is settled, so it offers no merge at all.
    old = store.remember(f"The dev proxy is nginx{TAIL}", importance=0.9)["id"]
    new = store.remember(f"The dev proxy is nginx, replaced{TAIL}", importance=0.2)["id"]
    store.link(new, old, relation="supersedes")   # ("replaced" may have written it already)
    assert store.health()["near_duplicates"] == []
    assert store.merge(new, old)["merged"] == old


# Secrets redacted before storing: the marker hides what told two secrets apart and adds the same words to both vectors.
STAGING_KEY = "staging: AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PROD_KEY = "prod: AWS_SECRET_ACCESS_KEY=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"


def test_memories_close_only_through_their_redacted_secrets_are_neither_hinted_nor_merged(store):
    # Found by a helper run: "staging: …=[REDACTED:aws_secret_key]" / "prod: …=[REDACTED:aws_secret_key]" read as
    # 0.91-similar (0.95 to bge-small); health offered `supermemory merge`, which would lose one of the two keys.
    staging = store.remember(STAGING_KEY)
    prod = store.remember(PROD_KEY)
    assert store.get(prod["id"])["memories"][0]["body"] == "prod: AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]"
    assert prod["near_duplicates"] == []
    store.remember("the staging db password is password=Sup3rS3cret!x")
    store.remember("the staging api token is password=Sup3rS3cret!x")
    report = store.health(duplicate_similarity=0.85)   # the test embedder puts this pair at 0.87
    assert report["near_duplicates"] == [] and report["near_duplicate_pairs"] == 0 and report["clean"]
    assert "merge" not in render_health(report)
    # the same words around the same secret, stored twice (another kind): still a copy, hinted and offered
    again = store.remember(STAGING_KEY, kind="fact")
    assert [n["id"] for n in again["near_duplicates"]] == [staging["id"]]
    assert [(p["a"], p["b"]) for p in store.health()["near_duplicates"]] == [(staging["id"], again["id"])]


def test_around_secrets_is_the_words_and_markers_of_a_text_with_secrets_only():
    assert around_secrets("Staging: KEY = [REDACTED:aws_secret_key]!") == "staging key [REDACTED:aws_secret_key]"
    assert around_secrets("staging key [REDACTED:aws_secret_key]") == around_secrets("STAGING, key: [REDACTED:aws_secret_key]")
    assert around_secrets("prod key [REDACTED:aws_secret_key]") != around_secrets("staging key [REDACTED:aws_secret_key]")
    assert around_secrets("key [REDACTED:openai_key]") != around_secrets("key [REDACTED:github_token]")
    assert around_secrets("no secret here") == around_secrets("[REDACTED: not a marker]") == ""


@pytest.mark.model
def test_keys_of_one_name_that_read_as_one_to_bge_small_are_not_duplicates(db_path, config, onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        s.remember("export STAGING_DB_PASSWORD=Sup3rS3cret!x")   # 0.93 to the next one once both are redacted
        assert s.remember("export STAGING_API_TOKEN=Sup3rS3cret!x")["near_duplicates"] == []
        s.remember(STAGING_KEY)
        assert s.remember(PROD_KEY)["near_duplicates"] == []
        assert s.health()["near_duplicates"] == []
