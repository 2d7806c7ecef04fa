"""MemoryStore behaviour: writes, version chains, recall filters, namespaces, lifecycle, export."""
from __future__ import annotations

import json
import os
import random
import re
import stat

import pytest

from supermemory.config import Config
from supermemory.core import MemoryStore
from supermemory.render import render_index_md
from supermemory.render_briefing import briefing_view
from supermemory.embed import HashProvider
from supermemory.errors import (EmbeddingUnavailableError, InvalidInputError, ModelMismatchError, NamespaceError,
                                 NotFoundError, StorageError)
from supermemory.store.embedding import FILL_SLICE
from supermemory.text import estimate_tokens

from conftest import FakeEmbedder
from helpers.common import age_search_index


def ids(result):
    return [r["id"] for r in result["results"]]


def test_remember_returns_short_id_and_recall_finds_it(store):
    out = store.remember("Retrieval uses BM25 and vector scores", kind="decision")
    assert out["status"] == "created" and out["id"].startswith("M")
    found = store.recall("BM25 retrieval")
    assert ids(found)[0] == out["id"]
    assert found["results"][0]["kind"] == "decision"


def test_exact_repeat_returns_existing_id(store):
    first = store.remember("Use pnpm, not npm", kind="decision")
    again = store.remember("Use pnpm, not npm  ", kind="decision")
    assert again["status"] == "duplicate" and again["id"] == first["id"]
    assert store.remember("use pnpm, not NPM", kind="decision")["id"] != first["id"]   # case counts
    other_kind = store.remember("Use pnpm, not npm", kind="fact")
    assert other_kind["id"] != first["id"]


def test_near_duplicate_is_hinted_not_merged(store):
    first = store.remember("Use pnpm for installs in the web workspace")
    second = store.remember("Use pnpm for installs in the web workspace today")
    assert second["status"] == "created" and second["id"] != first["id"]
    assert [n["id"] for n in second["near_duplicates"]] == [first["id"]]


def test_update_keeps_history_and_recall_sees_only_new_version(store):
    old = store.remember("The API listens on port 8080")
    new = store.update(old["id"], content="The API listens on port 9090")
    assert new["previous"] == old["id"]
    found = store.recall("which port does the API listen on", min_similarity=0)
    assert ids(found) == [new["id"]]
    history = store.history(new["id"])
    assert [v["id"] for v in history["versions"]] == [old["id"], new["id"]]
    assert history["versions"][0]["valid_to"] and history["versions"][0]["superseded_by"] == new["id"]
    with pytest.raises(InvalidInputError, match="superseded"):
        store.update(old["id"], content="again")


def test_who_wrote_a_version_belongs_to_that_version_alone(store):
    """An update's `source.by` (else its `platform`) names who wrote that version for `history`; the next version
    does not inherit it, and the memory's own platform (what `recall --platform` filters on) stays."""
    first = store.remember("Ship the release", kind="task", source={"platform": "codex"})["id"]
    closed = store.update(first, status="done", source={"by": "cli"})["id"]
    captured = store.update(closed, importance=0.9, source={"platform": "claude-code", "session": "s1"})["id"]
    merged = store.update(captured, tags=["release"])["id"]
    sources = {v["id"]: v["source"] for v in store.history(first)["versions"]}
    assert [sources[i].get("by") for i in (first, closed, captured, merged)] == [None, "cli", "claude-code", None]
    assert sources[closed]["platform"] == "codex"


def test_update_without_change_writes_nothing(store):
    old = store.remember("Stable fact")
    assert store.update(old["id"], content="Stable fact")["status"] == "unchanged"
    assert len(store.history(old["id"])["versions"]) == 1


def test_forget_is_soft_and_restore_brings_it_back(store):
    m = store.remember("Temporary workaround: pin urllib3 below 2")
    store.forget(m["id"])
    assert store.recall("urllib3 workaround")["results"] == []
    assert store.get(m["id"])["missing"] == [m["id"]]
    store.restore(m["id"])
    assert ids(store.recall("urllib3 workaround")) == [m["id"]]


def test_hard_forget_removes_the_whole_chain(store):
    m = store.remember("secret-ish note")
    n = store.update(m["id"], content="secret-ish note v2")
    store.forget(n["id"], hard=True)
    assert store.conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM fts").fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0


def test_hard_forget_leaves_no_copy_of_the_text_in_the_database_files(store, db_path):
    # Found by a fresh-user run: after `forget --hard` and `maintenance`, five copies of the text (the body, the
    # chunk, the stemmed FTS copy) were still readable in the file's free pages: a secret that slipped past
    # redaction was not gone.
    for n in range(40):
        store.remember(f"filler note {n} about the deploy pipeline and its caches")
    first = store.remember("the staging door code word is plughxyzzy42 until Friday")
    current = store.update(first["id"], content="the staging door code word is plughxyzzy42 until Monday")["id"]
    assert store.recall("which staging door code word", touch=False)["results"]
    store.forget(current, hard=True)     # the current version's id: its whole history goes (an old one's is refused)
    files = [p for p in db_path.parent.iterdir() if p.name.startswith(db_path.name)]
    assert not [p.name for p in files if b"plughxyzzy42" in p.read_bytes()]
    assert store.recall("deploy pipeline caches", touch=False)["results"]    # the rest is intact


def test_unknown_ids_raise_not_found(store):
    with pytest.raises(NotFoundError):
        store.update("M999", content="x")
    with pytest.raises(InvalidInputError):
        store.get(["not-an-id"])
    assert store.get(["M424242"])["missing"] == ["M424242"]


@pytest.mark.parametrize("bad", [None, 12, "", "   ", ["list"]])
def test_remember_rejects_bad_content(store, bad):
    with pytest.raises(InvalidInputError):
        store.remember(bad)


@pytest.mark.parametrize("kwargs", [{"kind": "banana"}, {"importance": 2}, {"importance": "high"},
                                    {"tags": "ok" * 0 or [1]}, {"pinned": "yes"}, {"ttl_days": -1}])
def test_remember_rejects_bad_arguments(store, kwargs):
    with pytest.raises(InvalidInputError):
        store.remember("valid content", **kwargs)


def test_nul_bytes_and_lone_surrogates_are_cleaned_not_fatal(store):
    out = store.remember("null\x00byte and lone \ud800 surrogate")
    body = store.get(out["id"])["memories"][0]["body"]
    assert "\x00" not in body and "surrogate" in body


def test_huge_content_is_refused_clearly(store):
    with pytest.raises(InvalidInputError, match="too long"):
        store.remember("x" * 2_000_001)


def test_long_content_is_chunked_and_each_chunk_is_searchable(store):
    paragraphs = [f"Paragraph {i} talks about topic{i} in detail. " * 12 for i in range(8)]
    out = store.remember("\n\n".join(paragraphs))
    assert out["chunks"] > 1
    assert ids(store.recall("topic7", min_similarity=0)) == [out["id"]]


@pytest.mark.parametrize("query, found", [
    *((q, False) for q in ['"unbalanced', "AND OR NOT", "NEAR(", "col:val", "*", "(", "^", "-", "'"]),
    *((q, True) for q in ['"deployments', "(deployments)", "deployments*", "'deployments'", "deployments AND"]),
])
def test_fts_syntax_in_queries_never_errors(store, query, found):
    memory = store.remember("ordinary memory about deployments")
    result = store.recall(query)
    # Syntax is matched as text: alone it names nothing; around a word, the word still matches.
    assert result["query"] == query
    assert ids(result) == ([memory["id"]] if found else [])


def test_identifiers_and_cjk_are_findable(store):
    a = store.remember("MemoryStore handles writes")
    b = store.remember("Permission error E_ACCES when touching /etc/hosts")
    c = store.remember("always pass --dry-run to the migration tool first")
    d = store.remember("检索层使用BM25和向量")
    for query, expected in [("memory store", a), ("memorystore", a), ("E_ACCES", b), ("/etc/hosts", b),
                            ("--dry-run", c), ("检索", d)]:
        assert ids(store.recall(query))[0] == expected["id"], query


def test_namespaces_are_isolated_and_global_is_shared(db_path, config):
    a = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="alpha")
    b = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="beta")
    secret = a.remember("alpha deploys with fabric")
    shared = a.remember("company style guide says tabs", namespace="global")
    assert secret["id"] not in ids(b.recall("alpha deploys with fabric", min_similarity=0))
    assert ids(b.recall("style guide tabs")) == [shared["id"]]
    assert b.get(secret["id"])["missing"] == [secret["id"]]
    assert [i["id"] for i in b.list()["items"]] == [shared["id"]]
    assert secret["id"] in ids(b.recall("alpha deploys with fabric", namespace="*"))
    a.close()
    b.close()


def test_recall_in_a_namespace_that_does_not_exist_says_so_and_names_the_near_one(store):
    store.remember("webapp builds with vite", namespace="webapp", create_namespace=True)
    with pytest.raises(NamespaceError, match=r"namespace 'webap' does not exist.*did you mean 'webapp'\?"):
        store.recall("vite build", namespace="webap")
    with pytest.raises(NamespaceError, match="did you mean 'webapp'"):
        store.list(namespace="webap")
    assert ids(store.recall("webapp builds with vite", namespace="webapp"))


def test_an_unknown_namespace_far_from_any_lists_the_existing_ones(store):
    store.remember("webapp builds with vite", namespace="webapp", create_namespace=True)
    with pytest.raises(NamespaceError, match=r"existing namespaces: .*webapp"):
        store.recall("vite", namespace="zzzzzz")


def test_the_current_project_and_global_are_never_refused_even_when_empty(store):
    assert store.recall("anything at all", namespace="proj")["results"] == []
    assert store.recall("anything at all", namespace="global")["results"] == []
    assert store.list(namespace="proj")["items"] == []


def test_remember_into_a_mistyped_namespace_lists_the_near_name(store):
    store.remember("webapp builds with vite", namespace="webapp", create_namespace=True)
    with pytest.raises(NamespaceError, match=r"'webap' does not exist yet.*did you mean 'webapp'\?.*create_namespace"):
        store.remember("typo", namespace="webap")


def test_writing_to_a_new_namespace_needs_consent(store):
    with pytest.raises(NamespaceError):
        store.remember("typo namespace", namespace="porj")
    out = store.remember("typo namespace", namespace="porj", create_namespace=True)
    assert store.remember("second", namespace="porj")["namespace"] == "porj"
    assert out["namespace"] == "porj"


def test_recall_filters_by_kind_tag_and_time(store):
    d = store.remember("Decision: use Postgres for jobs", kind="decision", tags=["db"])
    store.remember("Fact: postgres runs on 5432", kind="fact", tags=["infra"])
    assert ids(store.recall("postgres", kinds=["decision"])) == [d["id"]]
    assert ids(store.recall("postgres", tags=["db"])) == [d["id"]]
    assert store.recall("postgres", since="2999-01-01")["results"] == []
    assert len(store.recall("postgres", since="7d")["results"]) == 2
    with pytest.raises(InvalidInputError):
        store.recall("postgres", since="next tuesday-ish")


def test_recall_touches_hits_unless_told_not_to(store):
    m = store.remember("cache invalidation uses redis pubsub")
    store.recall("redis pubsub", touch=False)
    assert store.get(m["id"])["memories"][0]["recall_count"] == 0
    store.recall("redis pubsub")
    assert store.get(m["id"])["memories"][0]["recall_count"] == 1


def test_only_hits_relevant_on_their_own_count_as_recalled(db_path, config, onnx_embedder):
    """Filler listed under the answer gains no recall count, or every recall would lift it (reinforcement)."""
    from supermemory.retrieval import ranking

    config.settings["ranking"]["relevance_floor"] = 0.0     # list the filler, to see it is not counted
    store = MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj")
    m = store.remember("Orders live in Postgres; the analytics events go to ClickHouse.", kind="decision")
    for text in ("Use tabs, not spaces, in the frontend code.", "The frontend deploys on Fridays via Netlify.",
                 "pytest hangs on CI unless the redis fixture is closed.", "Fix the webhook retry task."):
        store.remember(text)
    page = store.recall("which database for orders", relevance_threshold=0)
    relevant = ranking.shipped_threshold("auto")
    filler = [r for r in page["results"] if r["relevance"] < relevant]
    assert page["results"][0]["id"] == m["id"] and page["results"][0]["relevance"] >= relevant and filler
    for r in page["results"]:
        assert store.get(r["id"])["memories"][0]["recall_count"] == (1 if r["relevance"] >= relevant else 0)


def test_explain_reports_features_contributions_and_dropped(store):
    store.remember("redis is the cache")
    store.remember("the office plant needs water")
    out = store.recall("redis cache", explain_all=True)
    hit = out["results"][0]
    assert set(hit["features"]) >= {"lexical", "coverage", "cosine", "relevance", "importance", "recency",
                                    "reinforcement", "pinned"}
    assert 0 < hit["features"]["relevance"] <= 1 and hit["relevance"] == hit["features"]["relevance"]   # rounded: 1.0
    assert set(hit["contributions"]) >= {"intercept", "coverage", "importance"}
    assert abs(sum(hit["contributions"].values()) - hit["score"]) < 1e-3
    assert "dropped" in out


def test_recall_reads_how_much_each_memory_is_source_code(store):
    code = store.remember("def retry(request, attempts=3):\n    for _ in range(attempts):\n"
                          "        resp = request.send()\n        if resp.ok:\n            return resp")
    prose = store.remember("Retry a failed request three times before giving up on the upstream.")
    _, found = store.candidates("retry the request", namespace="proj", n_cand=10)
    share = {f"M{c.id}": c.code for c in found.candidates}
    assert share[code["id"]] > 0.5 and share[prose["id"]] == 0.0


def test_an_answer_is_credited_with_the_query_words_of_the_question_written_just_before_it(db_path, config,
                                                                                          onnx_embedder):
    """Conversation structure (retrieval/candidates.after_question): the question just before an answer, in
    the same hour, lends it the query words it lacks; a statement, a question, a later answer get nothing."""
    now = [1_800_000_000.0]
    s = MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="p", clock=lambda: now[0])
    question = s.remember("Melanie: what have you been researching for the adoption plan?")["id"]
    answer = s.remember("Caroline: agencies that take single parents, it has been a dream of mine")["id"]
    after_statement = s.remember("Caroline: the agencies list is on my desk")["id"]
    asked_again = s.remember("Melanie: did you finish researching the adoption plan?")["id"]
    question_after_question = s.remember("Caroline: which agencies do you mean, for the adoption?")["id"]
    s.remember("Melanie: did you call about the adoption research?")
    now[0] += 2 * 3600
    too_late = s.remember("Caroline: agencies, yes, all of them")["id"]     # two hours after that question
    _, found = s.candidates("adoption research agencies", namespace="p", n_cand=20)
    gain = {f"M{c.id}": c.after_question for c in found.candidates}
    assert gain[answer] > 0.3                  # "adoption" and "research" come from the question before it
    for other in (question, after_statement, asked_again, question_after_question, too_late):
        assert gain[other] == 0.0, other
    out = s.recall("adoption research agencies", explain=True, gates=False, touch=False)
    by_id = {h["id"]: h for h in out["results"]}
    assert by_id[answer]["features"]["after_question"] == pytest.approx(gain[answer], abs=1e-3)   # explained
    assert ids(out).index(answer) < ids(out).index(after_statement)
    edited = s.update(answer, content="Caroline: agencies that take single parents; I called two of them")["id"]
    _, found = s.candidates("adoption research agencies", namespace="p", n_cand=20)
    assert {f"M{c.id}": c.after_question for c in found.candidates}[edited] > 0.3   # an edit keeps its place


def test_each_text_s_code_share_is_read_once_per_process(store, monkeypatch):
    from supermemory.retrieval import candidates

    reads = []
    monkeypatch.setattr(candidates, "_CODE_SHARES", {})
    monkeypatch.setattr(candidates, "code_share", lambda body: reads.append(body) or 0.0)
    store.remember("the deploy job builds every night")
    store.remember("the nightly build deploys to staging")
    store.candidates("nightly deploy build", namespace="proj", n_cand=10)
    store.candidates("deploy build at night", namespace="proj", n_cand=10)
    assert sorted(reads) == ["the deploy job builds every night", "the nightly build deploys to staging"]
    edited = store.remember("the deploy job builds every night at 2am")   # another text: read anew
    store.candidates("nightly deploy build", namespace="proj", n_cand=10)
    assert reads.count("the deploy job builds every night at 2am") == 1 and edited


def test_recall_puts_a_revision_above_the_fact_it_supersedes(store):
    old = store.remember("The local dev reverse proxy is nginx; its config is infra/dev/nginx.conf.")
    new = store.remember("nginx was replaced by Caddy for the local dev reverse proxy; infra/dev/nginx.conf "
                         "is dead, edit infra/dev/Caddyfile instead.")
    store.remember("The Vite dev server listens on 5173 and proxies /api to the backend.")
    # the order is what is tested; the fake embedder's store reads words only, and these cover a third of the query
    out = store.recall("which file configures the local dev reverse proxy nginx", explain=True, touch=False,
                       relevance_threshold=0)
    order = ids(out)
    assert order.index(new["id"]) < order.index(old["id"])
    stale = next(r for r in out["results"] if r["id"] == old["id"])
    assert stale["features"]["superseded_by"] == new["id"]
    assert stale["contributions"]["superseded"] < 0


def test_a_stale_hit_says_which_memory_supersedes_it_without_explain(store):
    # Found by a fresh-user run: recall listed the superseded memory at relevance 0.9998 with superseded_by null;
    # only --explain's features named the successor, so an agent could not tell which fact is current.
    from supermemory.render import render_recall

    old = store.remember("The v2.3 release is scheduled for March 14.")
    new = store.remember("The v2.3 release was postponed to March 28.")
    store.link(new["id"], old["id"], relation="supersedes")
    out = store.recall("when is the v2.3 release", touch=False, relevance_threshold=0)
    by_id = {r["id"]: r for r in out["results"]}
    assert by_id[old["id"]]["superseded_by"] == new["id"] and by_id[new["id"]]["superseded_by"] is None
    text = render_recall(out)
    assert f"[superseded by {new['id']}]" in text and "(relevance " in text


def test_a_name_no_memory_mentions_lowers_the_relevance_of_every_hit(store):
    deploy = store.remember("ledgerly deploys to ECS Fargate; a deploy registers a new task definition.")
    store.remember("Staging deploys automatically on every merge to main.")
    unknown = store.recall("how do we deploy to Azure Functions", explain=True, gates=False, touch=False)
    known = store.recall("how do we deploy to ECS", explain=True, gates=False, touch=False)
    assert unknown["results"][0]["features"]["unknown_name"] == 1.0
    assert known["results"][0]["features"]["unknown_name"] == 0.0
    assert ids(store.recall("deploy to ECS", touch=False))[0] == deploy["id"]


def test_a_query_made_of_common_words_is_ranked_not_silenced_by_a_word_list(store):
    lumen = store.remember("lumen unit tests use vitest; pnpm test runs them in watch mode.")
    out = store.recall("how do I test lumen", explain=True, touch=False)
    assert ids(out)[0] == lumen["id"] and "names nothing specific" not in str(out)


def test_gates_false_turns_every_gate_off_including_the_query_gate(store):
    a = store.remember("lumen unit tests use vitest; pnpm test runs them in watch mode.")
    b = store.remember("Run the relevant tests before saying a task is done.")
    store.config.settings["ranking"]["relevance_threshold"] = 1.0     # nothing is that certain
    out = store.recall("how do I test it", touch=False)
    assert out["results"] == [] and "nothing relevant" in out["note"]
    out = store.recall("how do I test it", gates=False, touch=False)
    assert sorted(ids(out)) == sorted([a["id"], b["id"]])
    assert "note" not in out
    # the two documented overrides alone leave the query gate in place: they are floors, not the switch
    assert store.recall("how do I test it", min_similarity=0, relative_cutoff=0, touch=False)["results"] == []


def test_relevance_threshold_zero_means_off_and_auto_means_the_fitted_one(db_path, tmp_path):
    from supermemory.retrieval import relevance

    for configured, expected in ((0, 0.0), (0.42, 0.42), ("auto", relevance.shipped().threshold)):
        cfg = Config(home=tmp_path / f"h{configured}")
        cfg.settings["ranking"]["relevance_threshold"] = configured
        with MemoryStore(db_path, config=cfg, embedder=HashProvider(), namespace="proj") as s:
            assert s.rank_config("deploy the api").threshold == expected, configured
            assert s.rank_config("deploy the api", min_similarity=0.3).vector_floor == 0.3


def test_ttl_expired_memories_leave_recall(db_path, config):
    now = [1_000_000.0]
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", clock=lambda: now[0])
    m = s.remember("short-lived feature flag note", ttl_days=1)
    assert ids(s.recall("feature flag note")) == [m["id"]]
    now[0] += 2 * 86400
    assert s.recall("feature flag note")["results"] == []
    assert s.maintenance()["expired"] == 1
    s.close()


def test_ttl_days_zero_means_never_expires_and_the_help_says_so(db_path, config):
    from supermemory.cli import build_parser
    from supermemory.mcp.tools import TOOLS_BY_NAME

    now = [1_000_000.0]
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", clock=lambda: now[0])
    m = s.remember("long-lived feature flag note", ttl_days=0)
    assert s.get(m["id"])["memories"][0]["expires_at"] is None
    now[0] += 400 * 86400
    assert ids(s.recall("feature flag note")) == [m["id"]]
    s.close()
    remember = next(a for a in build_parser()._subparsers._group_actions[0].choices["remember"]._actions
                    if "--ttl-days" in a.option_strings)
    assert "0 = never" in remember.help
    assert "0 = never" in TOOLS_BY_NAME["memory_remember"].input_schema["properties"]["ttl_days"]["description"]


def test_tasks_default_to_open_and_briefing_lists_them_after_pinned(store):
    rule = store.remember("Never push to main directly", kind="preference", pinned=True)
    task = store.remember("Finish the retry logic in the uploader", kind="task")
    store.remember("We picked SQLite WAL for concurrency", kind="decision")
    brief = briefing_view(store.briefing())
    text = brief["text"]
    assert rule["id"] in text and task["id"] in text
    assert text.index("Pinned rules") < text.index("Open tasks") < text.index("Key decisions")
    store.update(task["id"], status="done")
    assert "Open tasks" not in briefing_view(store.briefing())["text"]


def test_a_session_without_open_ends_is_briefed_by_its_requests_not_its_header(store):
    from supermemory.transcripts import SessionDigest, render_digest

    title, body = render_digest(SessionDigest(
        platform="claude-code", cwd="/work/shop", git_branch="main", model="claude-sonnet-4-5",
        started_at="2026-11-20T10:00:00Z", requests=["Make the login test pass again", "Rename the cookie to sid"],
        commands=["pytest -q tests/test_login.py"], turns=2))
    store.remember(body, title=title, kind="session")
    line = next(line for line in briefing_view(store.briefing())["text"].splitlines() if "session]" in line)
    assert line.endswith("— Requests: Make the login test pass again; Rename the cookie to sid"), line
    assert "Platform:" not in line


def test_a_status_is_refused_on_a_memory_that_is_not_a_task(store):
    decision = store.remember("We picked SQLite WAL for concurrency", kind="decision")["id"]
    with pytest.raises(InvalidInputError, match=f"status applies to tasks; {decision} is a decision"):
        store.update(decision, status="done")
    with pytest.raises(InvalidInputError, match="status applies to tasks; this memory is a note"):
        store.remember("a plain note", status="done")
    task = store.remember("Finish the retry logic", kind="task")["id"]
    with pytest.raises(InvalidInputError, match=f"status applies to tasks; {task} would be a note"):
        store.update(task, kind="note", status="done")
    assert [v["id"] for v in store.history(decision)["versions"]] == [decision]
    assert store.update(task, status="done")["status"] == "updated"


@pytest.mark.parametrize("budget", [50, 60, 70, 100, 200, 250])
def test_briefing_respects_its_token_budget(store, budget):
    for i in range(60):
        store.remember(f"Decision number {i}: use library{i} for feature{i} because reasons", kind="decision")
    brief = briefing_view(store.briefing(max_tokens=budget))
    assert brief["tokens"] <= budget
    assert estimate_tokens(brief["text"]) <= brief["tokens"]
    shown = sum(line.startswith("- [") for line in brief["text"].splitlines())
    # 20 decisions are fetched, and as recent changes the 10 newest of the others (fu33 D2); the note counts the
    # ones left out.
    assert brief["sections"]["decisions"] == shown and brief["not_shown"]["decisions"] == 20 - shown
    assert brief["sections"]["recent"] == 0 and brief["not_shown"]["recent"] == 10
    assert brief["text"].splitlines()[-1] == f"(…{30 - shown} more not shown — use memory_recall or memory_list)"


def test_briefing_never_loads_the_embedder(db_path, config):
    class Exploding(FakeEmbedder):
        def embed_batch(self, texts):
            raise AssertionError("briefing must not embed")

    s = MemoryStore(db_path, config=config, embedder=Exploding(), namespace="p")
    s.conn.execute("SELECT 1")
    assert "no memories yet" in briefing_view(s.briefing(query="anything"))["text"]
    s.close()


def test_reindex_of_a_database_it_cannot_write_says_so_before_embedding_anything(db_path, config):
    # Found by a fresh-user run: on a read-only memory.db, reindex re-embedded every chunk (75 s) and only then
    # failed with "attempt to write a readonly database".
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    s.remember("one memory to re-embed")
    embedded = []

    class Counting(FakeEmbedder):
        def embed_multi(self, texts, progress=None):
            embedded.extend(texts)
            return super().embed_multi(texts, progress=progress)

    s.close()
    t = MemoryStore(db_path, config=config, embedder=Counting(), namespace="p")
    t.conn.execute("PRAGMA query_only = ON")      # as a read-only file behaves (root ignores chmod)
    with pytest.raises(StorageError, match="reindex needs a writable database"):
        t.reembed()
    assert embedded == []
    t.conn.execute("PRAGMA query_only = OFF")
    assert t.reembed()["chunks"] == 1 and len(embedded) == 1
    t.close()

def test_model_pin_refuses_other_model_until_reindex(db_path, config):
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    s.remember("pinned to the fake model")
    s.close()

    class Other(FakeEmbedder):
        model_id = "other-model"

    t = MemoryStore(db_path, config=config, embedder=Other(), namespace="p")
    with pytest.raises(ModelMismatchError, match="reindex"):
        t.remember("second")
    t.close()
    u = MemoryStore(db_path, config=config, embedder=Other(), namespace="p")
    assert u.reembed()["chunks"] == 1
    u.remember("second")
    assert u.pinned_model()["model"] == "other-model"
    u.close()


def test_db_file_is_private(db_path, config, store):
    store.remember("x")
    assert stat.S_IMODE(os.stat(db_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(db_path.parent).st_mode) == 0o700


def test_export_import_round_trip_is_identical_and_idempotent(tmp_path, store, config):
    a = store.remember("first fact", tags=["x"])
    b = store.remember("second fact", kind="decision")
    store.update(a["id"], content="first fact, revised")
    current_a = store.history(a["id"])["current"]
    store.link(b["id"], current_a, relation="refines")
    gone = store.remember("deleted one")
    store.forget(gone["id"])
    first = tmp_path / "one.jsonl"
    store.export(first)
    other = MemoryStore(tmp_path / "other.db", config=config, embedder=FakeEmbedder(), namespace="proj")
    assert other.import_file(first)["imported"] == 3
    assert other.import_file(first)["imported"] == 0
    second = tmp_path / "two.jsonl"
    other.export(second)
    assert first.read_text() == second.read_text()
    lines = {json.loads(x)["id"]: json.loads(x) for x in first.read_text().splitlines()}
    assert [v["id"] for v in lines[current_a]["history"]] == [a["id"]]
    assert lines[b["id"]]["links"][0]["dst"] == current_a
    assert "embedding" not in lines[b["id"]] and lines[gone["id"]]["deleted_at"]
    other.close()


def test_export_of_namespace_star_writes_every_namespace_and_a_never_used_one_is_refused(tmp_path, store):
    """`export FILE --namespace '*'` reads everything (export is a read), and a typo is not an empty export."""
    from supermemory.errors import NamespaceError

    store.remember("in the project")
    store.remember("in another project", namespace="other", create_namespace=True)
    store.remember("everywhere", namespace="global")
    result = store.export(tmp_path / "all.jsonl", namespaces=["*"])
    assert result["memories"] == 3
    assert store.export(tmp_path / "one.jsonl", namespaces=["other"])["memories"] == 1
    with pytest.raises(NamespaceError, match="'othr' does not exist.*other"):
        store.export(tmp_path / "typo.jsonl", namespaces=["othr"])
    assert not (tmp_path / "typo.jsonl").exists()


_RECORD = {"id": "M5", "namespace": "x", "kind": "note", "title": "t", "body": "a hand-written record"}


@pytest.mark.parametrize("change, message", [
    ({"body": 5}, "body must be a string"),
    ({"importance": "high"}, "importance must be a number"),
    ({"created_at": "garbage"}, "created_at: not an ISO 8601 time: 'garbage'"),
    ({"kind": "bogus"}, "kind must be one of"),
    ({"namespace": "*"}, "can be read from but not written to"),
    ({"tags": [1, 2]}, "tags must be a list of strings"),
    ({"status": "weird"}, "status must be one of open, done, dropped"),
    ({"recall_count": "many"}, "recall_count must be an integer"),
    ({"source": "cli"}, "source must be an object"),
    ({"links": [{"dst": "M5", "relation": "bogus"}]}, "relation must be one of"),
    ({"history": ["not a version"]}, "a version must be an object"),
])
def test_import_of_a_bad_record_names_the_line_and_field_and_writes_nothing(tmp_path, store, change, message):
    from supermemory.errors import InvalidInputError

    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({**_RECORD, "id": "M4"}) + "\n" + json.dumps({**_RECORD, **change}) + "\n")
    with pytest.raises(InvalidInputError, match=rf"in\.jsonl:2: .*{re.escape(message)}"):
        store.import_file(path)
    assert store.list(namespace="*")["total"] == 0


def test_import_of_a_line_nested_deeper_than_the_recursion_limit_names_the_line(tmp_path, store):
    # Found by a fresh-user run: 100 000 nested brackets on one line ended `import` in a RecursionError traceback.
    from supermemory.errors import InvalidInputError

    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(_RECORD) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(InvalidInputError, match=r"in\.jsonl:2: not JSON: nested too deeply"):
        store.import_file(path)
    assert store.list(namespace="*")["total"] == 0


def test_import_of_a_minimal_hand_written_record_fills_in_the_times(tmp_path, store):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(_RECORD) + "\n")
    assert store.import_file(path)["imported"] == 1
    got = store.get("M5", namespace="*")["memories"][0]
    assert got["body"] == "a hand-written record" and got["updated_at"] and got["valid_from"]


def test_export_to_a_folder_or_an_unwritable_path_is_an_error_and_leaves_no_part_file(tmp_path, store, monkeypatch):
    from supermemory.errors import InvalidInputError

    store.remember("a fact worth keeping private")
    with pytest.raises(InvalidInputError, match="it is a folder"):
        store.export(tmp_path)
    with pytest.raises(InvalidInputError, match=r"cannot write .*: No such file or directory"):
        store.export("/proc/nope/x.jsonl")
    target = tmp_path / "dump.jsonl"
    modes = []

    def failing_replace(src, dst):
        modes.append(stat.S_IMODE(os.stat(src).st_mode))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(InvalidInputError, match=r"cannot write .*dump\.jsonl: No space left on device"):
        store.export(target)
    assert modes == [0o600], "the temporary file holds every memory: private from its first byte"
    assert sorted(p.name for p in tmp_path.iterdir() if "dump" in p.name) == []


def test_sweep_dry_run_matches_apply_exactly(db_path, config):
    now = [2_000_000_000.0]
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", clock=lambda: now[0])
    items = []
    for i in range(500):
        items.append({"content": f"memory {i} about topic {i % 17}", "importance": (i % 10) / 10,
                      "pinned": i % 7 == 0})
    s.remember_many(items)
    # age half of them by rewriting their timestamps (as if written long ago)
    s.conn.execute("UPDATE memories SET updated_at = updated_at - 400 * 86400 WHERE id % 2 = 0")
    dry = s.sweep(stale_days=180, importance_floor=0.3)
    expected = s.conn.execute("SELECT count(*) FROM memories WHERE id % 2 = 0 AND pinned = 0 AND importance <= 0.3"
                              ).fetchone()[0]
    assert dry["matched"] == expected and dry["truncated"] and len(dry["sample"]) == 20
    applied = s.sweep(stale_days=180, importance_floor=0.3, apply=True)
    assert applied["matched"] == dry["matched"]
    assert s.sweep(stale_days=180, importance_floor=0.3)["matched"] == 0
    first = dry["sample"][0]["id"]
    s.restore(first)
    assert s.get(first)["memories"][0]["last_recalled_at"] is not None
    s.close()


def test_search_log_stays_under_its_cap_after_10k_recalls_and_stats_match_it(db_path, tmp_path):
    cfg = Config(home=tmp_path)
    cfg.settings["search_log"] = {"enabled": True, "max_rows": 500, "hash_queries": False}
    s = MemoryStore(db_path, config=cfg, embedder=FakeEmbedder(), namespace="p")
    s.remember("something to find")
    for i in range(10_000):
        s.recall(f"query {i % 97}", lexical_only=True)
    rows = s.conn.execute("SELECT count(*) FROM search_log").fetchone()[0]
    assert rows == 500
    # Known latencies, newest row slowest-first: 500.1234 ... 1.1234 ms.
    log_ids = [r[0] for r in s.conn.execute("SELECT id FROM search_log ORDER BY id DESC")]
    s.conn.executemany("UPDATE search_log SET latency_ms = ? WHERE id = ?",
                       [(rank + 0.1234, log_id) for rank, log_id in enumerate(log_ids, 1)])
    stats = s.stats()
    assert stats["searches"] == 500
    # Nearest rank: the ceil(p/100 * 500)-th smallest, rounded to 3 places.
    assert stats["latency_ms_p50"] == 250.123 and stats["latency_ms_p95"] == 475.123
    s.close()


def test_search_log_can_be_disabled_or_hash_its_queries(db_path, tmp_path):
    cfg = Config(home=tmp_path)
    cfg.settings["search_log"] = {"enabled": True, "max_rows": 50, "hash_queries": True}
    s = MemoryStore(db_path, config=cfg, embedder=FakeEmbedder(), namespace="p")
    s.recall("my private query")
    assert s.conn.execute("SELECT query FROM search_log").fetchone()[0].startswith("sha256:")
    cfg.settings["search_log"]["enabled"] = False
    s.recall("another query")
    assert s.conn.execute("SELECT count(*) FROM search_log").fetchone()[0] == 1
    s.close()


def test_secrets_are_redacted_before_storage(store):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    out = store.remember(f"CI uses token {token} for releases")
    assert out["redacted"].get("github_token") == 1
    row = store.conn.execute("SELECT body FROM memories").fetchone()[0]
    fts = " ".join(r[0] for r in store.conn.execute("SELECT tokens FROM fts"))
    assert token not in row and token.lower() not in fts
    store.recall(f"where is {token}")
    logged = " ".join(r[0] for r in store.conn.execute("SELECT query FROM search_log"))
    assert token not in logged


def test_secrets_in_tags_are_redacted_in_remember_update_and_remember_many(store):
    """A tag is stored, shown and indexed like the title: a token pasted as a tag must not survive."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    out = store.remember("release checklist", tags=[token, "release", f"ci token={token}"])
    assert out["redacted"].get("github_token") == 2
    assert store.get(out["id"])["memories"][0]["tags"] == ["[REDACTED:github_token]", "release",
                                                          "ci token=[REDACTED:github_token]"]
    updated = store.update(out["id"], tags=["ops", token])
    assert updated["redacted"].get("github_token") == 1
    assert store.get(updated["id"])["memories"][0]["tags"] == ["ops", "[REDACTED:github_token]"]
    store.remember_many([{"content": "another note", "tags": [token]}])
    stored = " ".join(r[0] for r in store.conn.execute("SELECT tags FROM memories"))
    fts = " ".join(r[0] for r in store.conn.execute("SELECT tokens FROM fts"))
    assert token not in stored and token.lower() not in fts


def test_private_spans_are_dropped(store):
    out = store.remember("Keep this. <private>my home address</private> And this.")
    body = store.get(out["id"])["memories"][0]["body"]
    assert "address" not in body and "Keep this." in body


def test_remember_reports_what_an_unclosed_private_tag_left_out(store):
    out = store.remember("Docs: wrap secrets in <private> tags. Also deploy happens on Friday")
    assert store.get(out["id"])["memories"][0]["body"] == "Docs: wrap secrets in"
    assert out["redacted"] == {"private": 1}
    assert out["unclosed_private"] == len(" tags. Also deploy happens on Friday")
    closed = store.remember("Keep this. <private>my home address</private> And this.")
    assert closed["redacted"] == {"private": 1} and closed["unclosed_private"] == 0


def test_health_finds_planted_near_duplicates_and_contradictions(store):
    a = store.remember("Use pnpm for installs in the web workspace")
    b = store.remember("Use pnpm for installs in the web workspace today")
    c = store.remember("Never use pnpm in the web workspace")
    store.remember("Redis holds the session cache")
    store.link(c["id"], a["id"], relation="contradicts")
    report = store.health()
    pairs = {(p["a"], p["b"]) for p in report["near_duplicates"]}
    assert (a["id"], b["id"]) in pairs
    assert report["contradictions"][0]["src"] == c["id"]
    assert not report["clean"] and sum(report["orphans"].values()) == 0


def test_health_pairs_are_the_same_whatever_the_block_size():
    import numpy as np

    from supermemory.store.lifecycle import similar_pairs

    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(40, 16)).astype(np.float32)
    matrix[[9, 23, 39]] = matrix[2] + rng.normal(scale=0.05, size=16)  # twins across block edges
    matrix[31] = matrix[30] + rng.normal(scale=0.05, size=16)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    full = matrix @ matrix.T
    expected = {(a, b) for a in range(40) for b in range(a + 1, 40) if full[a, b] >= 0.9}
    assert {(2, 9), (2, 23), (2, 39), (9, 39), (30, 31)} <= expected
    for block in (1, 7, 10, 64):
        found = list(zip(*similar_pairs(matrix, 0.9, block=block)))
        assert {(a, b) for a, b, _ in found} == expected and len(found) == len(expected)
        assert all(abs(sim - full[a, b]) < 1e-5 for a, b, sim in found)
        assert [sim for _, _, sim in found] == sorted((sim for _, _, sim in found), reverse=True)
    assert [len(part) for part in similar_pairs(matrix[:1], 0.9)] == [0, 0, 0]


def test_health_lists_the_first_pairs_and_links_counts_them_all_and_pending_vectors_are_no_problem(store):
    twins = [store.remember(f"Use pnpm for installs in the web workspace {'today ' * n}")["id"] for n in range(5)]
    for other in twins[1:]:
        store.link(twins[0], other, relation="contradicts")
    report = store.health(max_pairs=2)     # four unlinked copies: three merges into one of them
    assert report["near_duplicate_pairs"] == 3 > len(report["near_duplicates"]) == 2
    assert report["contradiction_count"] == 4 and len(report["contradictions"]) == 2
    for memory_id in twins[1:]:
        store.forget([memory_id])
    store.config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0,
                                                         write_embed_chunks=1)
    store.remember(_long_text(6))
    report = store.health()
    assert report["vectors_pending"] > 0 and report["clean"] and "live_chunks_without_vector" not in report["orphans"]


def test_health_of_a_clean_store_reports_nothing(store):
    store.remember("Redis holds the session cache")
    store.remember("Deploys happen on Tuesday mornings")
    report = store.health()
    assert report["near_duplicates"] == [] and report["contradictions"] == [] and report["clean"]
    assert report["model_pin_status"] == "ok"


def test_merge_closes_other_into_keep_with_history_tags_and_links(store):
    keep = store.remember("Use pnpm for installs", tags=["js"])
    other = store.remember("pnpm is the package manager", tags=["tooling"])
    third = store.remember("The lockfile is pnpm-lock.yaml")
    store.link(third["id"], other["id"], relation="depends-on")
    result = store.merge(keep["id"], other["id"])
    current = store.get(result["id"])["memories"][0]
    assert set(current["tags"]) == {"js", "tooling"}
    assert any(l["dst"] == result["id"] and l["relation"] == "depends-on" for l in current["links"])
    assert store.get(other["id"])["memories"][0]["superseded_by"] == result["id"]
    history = [v["id"] for v in store.history(result["id"])["versions"]]
    assert keep["id"] in history and other["id"] in history
    assert [r["id"] for r in store.recall("package manager pnpm", min_similarity=0)["results"]].count(other["id"]) == 0


def test_graph_walks_links_to_the_given_depth(store):
    a, b, c = (store.remember(t) for t in ("alpha service", "beta service", "gamma service"))
    store.link(a["id"], b["id"], relation="depends-on")
    store.link(b["id"], c["id"], relation="refines")
    one = store.graph(id=a["id"], depth=1)
    assert {n["id"] for n in one["nodes"]} == {a["id"], b["id"]}
    two = store.graph(id=a["id"], depth=2)
    assert {n["id"] for n in two["nodes"]} == {a["id"], b["id"], c["id"]} and len(two["edges"]) == 2


def test_index_lists_pinned_and_gotchas_first_with_a_footer(store):
    store.remember("a plain note about builds")
    pin = store.remember("Never commit secrets", kind="preference", pinned=True)
    gotcha = store.remember("psql needs PGSSLMODE=disable locally", kind="gotcha")
    for i in range(5):
        store.remember(f"filler fact number {i}", kind="fact")
    out = render_index_md(store.memory_index(max_lines=3))
    lines = out["text"].splitlines()
    assert pin["id"] in lines[0] and gotcha["id"] in lines[1]
    assert len(lines) == 3 and lines[-1].startswith("…and 6 more")   # the footer counts toward max_lines


def test_an_index_of_one_line_shows_a_memory_not_only_the_footer(store):
    first = store.remember("Never commit secrets", kind="preference", pinned=True)
    for i in range(3):
        store.remember(f"filler fact number {i}", kind="fact")
    index = store.memory_index(max_lines=1)
    assert [i["id"] for i in index["items"]] == [first["id"]] and index["more"] == 3
    out = render_index_md(index)
    assert out["text"].splitlines() == [out["text"].strip()] and out["text"].startswith(f"- [{first['id']} ")
    assert out["lines"] == 1 and out["more"] == 3
    assert render_index_md(store.memory_index(max_lines=2))["text"].splitlines()[1].startswith("…and 3 more")


def test_maintenance_prunes_old_session_versions_but_keeps_the_current_one(store):
    m = store.remember("session v0", kind="session")
    current = m["id"]
    for i in range(1, 6):
        current = store.update(current, content=f"session v{i}")["id"]
    out = store.maintenance()
    assert out["session_versions_pruned"] == 3
    versions = store.history(current)["versions"]
    assert [v["id"] for v in versions][-1] == current and len(versions) == 3
    assert store.get(current)["memories"][0]["body"] == "session v5"


def test_forgetting_an_old_version_points_to_the_current_one(store):
    m = store.remember("v1 text")
    new = store.update(m["id"], content="v2 text")
    with pytest.raises(InvalidInputError, match=new["id"]):
        store.forget(m["id"])


def test_search_index_is_rebuilt_once_when_the_tokenizer_changed(db_path, config):
    from supermemory.store import db as dbm
    from supermemory.text import TOKENIZER_VERSION, index_text

    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    m = s.remember("Making movies: the parties were planned in advance", title="film night")
    assert dbm.get_meta(s.conn, "tokenizer_version") == str(TOKENIZER_VERSION)
    age_search_index(s, "making movies parties planned")   # as an older tokenizer left it
    s.close()

    hook_side = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", rebuild_index=False)
    assert hook_side.index_stale                                   # left alone: hooks must stay fast
    assert hook_side.conn.execute("SELECT tokens FROM fts").fetchone()[0] == "making movies parties planned"
    hook_side.close()

    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    assert not s.index_stale
    chunk_text = s.conn.execute("SELECT text FROM chunks").fetchone()[0]
    assert s.conn.execute("SELECT tokens FROM fts").fetchone()[0] == index_text("film night", "", chunk_text)
    assert dbm.get_meta(s.conn, "tokenizer_version") == str(TOKENIZER_VERSION)
    assert ids(s.recall("make a movie party plan", touch=False))[0] == m["id"]
    assert s.rebuild_search_index() == {"rebuilt": 0}                     # once only
    s.close()


def test_a_new_store_is_stamped_with_the_tokenizer_and_never_rebuilt(db_path, config):
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    assert not s.index_stale
    s.remember("first memory")
    s.close()
    again = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p", rebuild_index=False)
    assert not again.index_stale
    again.close()


def test_a_store_still_opens_when_the_index_rebuild_cannot_get_the_write_lock(db_path, config, monkeypatch):
    from supermemory.store import db as dbm

    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    m = s.remember("deploys run on fridays")
    age_search_index(s)
    s.close()
    monkeypatch.setattr(dbm, "BUSY_TIMEOUT_MS", 50)
    holder = dbm.connect(str(db_path), dbm.choose_driver(None))
    holder.execute("BEGIN IMMEDIATE")            # another process is writing
    try:
        s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
        assert s.index_stale                     # not rebuilt, and nothing lost
        assert ids(s.recall("deploys fridays", touch=False)) == [m["id"]]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert s.rebuild_search_index()["rebuilt"] == 1     # retried once the lock is free
    s.close()


def test_a_first_word_outside_the_model_vocabulary_is_a_name(db_path, tmp_path, monkeypatch):
    from supermemory import embed

    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"deploy": 0, "the": 1, "##s": 2}}}))
    embed.vocabulary_words.cache_clear()
    s = MemoryStore(db_path, config=Config(home=tmp_path / "h", model_dir_override=model_dir),
                    embedder=FakeEmbedder(), namespace="p")
    assert "unknown_names" in s.query_context("Kotlin coroutine scope convention")
    assert "unknown_names" not in s.query_context("Deploy the coroutine service")   # an everyday word
    s.remember("Kotlin services use structured concurrency with one CoroutineScope per request.")
    assert "unknown_names" not in s.query_context("Kotlin coroutine scope convention")  # a memory knows it
    embed.vocabulary_words.cache_clear()


def test_recall_says_why_when_nothing_is_relevant(store):
    store.remember("Redis key convention: ledgerly:{env}:{domain}:{id}; iterate with SCAN.")
    out = store.recall("how do we shard the elasticsearch cluster", touch=False)
    assert out["results"] == [] and "nothing relevant: best relevance" in out["note"]


def test_recall_crosses_between_chinese_and_english(store):
    english = store.remember("For quicker local builds use the dev-fast profile (cargo build --profile dev-fast).")
    chinese = store.remember("部署前要先跑 alembic upgrade head，否则新代码会查询还不存在的列。")
    store.remember("The office plant needs water on Fridays.")
    assert english["id"] in ids(store.recall("cargo 编译太慢怎么加速", touch=False))
    # the glossary bridges the words; whether a third of the query covered is an answer is the model's call
    assert chinese["id"] in ids(store.recall("what has to happen before we deploy", touch=False, relevance_threshold=0))
    explained = store.recall("部署", explain=True, touch=False)["results"]
    assert [r["id"] for r in explained] == [chinese["id"]] and explained[0]["features"]["blind_coverage"] == 1.0

    def words_found(result):    # the share of the query's words the English memory holds, read or not by the embedder
        hit = next(r for r in result["results"] if r["id"] == english["id"])
        return hit["features"]["coverage"] + hit["features"]["blind_coverage"]

    bridged = words_found(store.recall("cargo 编译太慢怎么加速", explain=True, gates=False, touch=False))
    store.config.settings["ranking"]["glossary"] = False      # translations off: only the shared word "cargo" is left
    alone = words_found(store.recall("cargo 编译太慢怎么加速", explain=True, gates=False, touch=False))
    assert 0 < alone < bridged


def test_a_short_function_still_gets_a_plain_query(db_path, config):
    """Short functions read as code less than long ones (few brackets; `text.code_share` counts their indented
    body); the instruction costs code search there too, so the default line sits below them and above any prose."""
    from supermemory.settings import DEFAULTS
    from supermemory.text import code_share

    asked = []

    class Recording(FakeEmbedder):
        def embed_query(self, text, *, instructed=False):
            asked.append(instructed)
            return super().embed_query(text, instructed=instructed)

    function = "async def refresh(token):\n    return await client.refresh(token)"
    assert 0.3 <= code_share(function) < 1.0
    s = MemoryStore(db_path, config=config, embedder=Recording(), namespace="p")
    s.remember(function)
    s.remember("Tokens expire after an hour; the mobile app refreshes them in the background.")
    s.remember("The web client refreshes its token ten minutes before it expires.")
    s.recall("refresh the client token", touch=False)        # the function and two notes match: prose on average
    s.recall("async await client", touch=False)              # only the function matches
    assert asked == [True, False]
    assert DEFAULTS["embedder"]["query_instruction_code_below"] <= code_share(function)


def test_queries_are_embedded_with_the_retrieval_instruction_unless_their_best_matches_are_code(db_path, config):
    asked = []

    class Recording(FakeEmbedder):
        def embed_query(self, text, *, instructed=False):
            asked.append(instructed)
            return super().embed_query(text, instructed=instructed)

    s = MemoryStore(db_path, config=config, embedder=Recording(), namespace="p")
    s.remember("On-call rotates weekly with handover on Mondays at 10:00 CET.")
    s.remember("def pager_shift(schedule):\n    return [(day, schedule[day]) for day in sorted(schedule)]")
    s.recall("when does the person on duty change", touch=False)             # no word matches: a question
    s.recall("on-call rotation handover", touch=False)                         # prose matches best
    s.recall("pager_shift schedule", touch=False)                              # only the function matches
    assert asked == [True, True, False]
    config.settings["embedder"]["query_instruction_code_below"] = 0.0          # never
    s.recall("on-call rotation handover", touch=False)
    config.settings["embedder"]["query_instruction_code_below"] = 1.01         # always
    s.recall("pager_shift schedule", touch=False)
    assert asked[-2:] == [False, True]
    config.settings["embedder"]["query_instruction_code_below"] = 0.3
    # --explain says which it was
    assert s.recall("pager_shift schedule", explain=True, touch=False)["query_embedding"] == "plain"
    assert s.recall("on-call rotation handover", explain=True,
                    touch=False)["query_embedding"] == "with the retrieval instruction"
    assert s.recall("on-call rotation", explain=True, touch=False,
                    channels=("lexical",))["query_embedding"] == "none"
    assert "query_embedding" not in s.recall("on-call rotation handover", touch=False)
    from supermemory.render import render_recall

    shown = render_recall(s.recall("pager_shift schedule", explain=True, touch=False), explain=True)
    assert "query embedded: plain" in shown


def test_unlink_removes_one_relation_or_every_one_and_refuses_a_link_that_does_not_exist(store):
    a = store.remember("CI runs on Jenkins")["id"]
    b = store.remember("CI moved to GitHub Actions")["id"]
    store.link(b, a, relation="supersedes")
    store.link(b, a, relation="related")
    assert store.unlink(b, a, relation="supersedes") == {"src": b, "dst": a, "removed": ["supersedes"]}
    assert [l["relation"] for l in store.get(b)["memories"][0]["links"]] == ["related"]
    assert store.unlink(b, a)["removed"] == ["related"]
    assert store.get(b)["memories"][0]["links"] == []
    with pytest.raises(NotFoundError, match=f"no link from {b} to {a}"):
        store.unlink(b, a)
    store.link(b, a, relation="related")
    with pytest.raises(NotFoundError, match=f"no supersedes link from {b} to {a}"):
        store.unlink(b, a, relation="supersedes")
    assert [l["relation"] for l in store.get(b)["memories"][0]["links"]] == ["related"]
    with pytest.raises(InvalidInputError, match="relation must be one of"):
        store.unlink(b, a, relation="likes")
    with pytest.raises(NotFoundError):
        store.unlink(b, "M999")


def test_list_filters_by_pinned_and_time_range(store):
    pinned = store.remember("always run the linter before committing", kind="preference", pinned=True)["id"]
    plain = store.remember("the build uses make and ninja", kind="fact")["id"]
    assert [m["id"] for m in store.list(pinned=True)["items"]] == [pinned]
    assert [m["id"] for m in store.list(pinned=False)["items"]] == [plain]
    assert {m["id"] for m in store.list(since="1d", until="2999-01-01")["items"]} == {pinned, plain}
    assert store.list(until="2000-01-01")["items"] == []
    with pytest.raises(InvalidInputError):
        store.list(pinned="yes")


def test_searches_from_the_ui_are_left_out_of_the_search_figures(store):
    store.remember("postgres connection pool size is 20", kind="fact")
    store.recall("postgres pool", touch=False, origin="ui")
    assert store.stats()["searches"] == 0
    store.recall("postgres pool", origin="cli")
    assert store.stats()["searches"] == 1


def test_health_lists_the_expired_memories_maintenance_would_remove(db_path, config):
    now = [1_800_000_000.0]
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj", clock=lambda: now[0]) as s:
        gone = s.remember("temporary deploy freeze this week", kind="fact", ttl_days=1)["id"]
        now[0] += 3 * 86400
        report = s.health()
        assert report["expired"] == 1
        assert [item["id"] for item in report["expired_items"]] == [gone]
        assert s.maintenance()["expired"] == 1


def test_list_pages_by_cursor_through_every_memory_once(db_path, config):
    now = [1_800_000_000.0]
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj", clock=lambda: now[0]) as s:
        ids = []
        for i in range(7):
            ids.append(s.remember(f"fact number {i} about the build cache", kind="fact")["id"])
            if i % 2:
                now[0] += 10   # some share a timestamp: the id breaks the tie
        seen, cursor = [], None
        while True:
            page = s.list(limit=3, cursor=cursor, count=False)
            seen += [m["id"] for m in page["items"]]
            assert page["total"] is None
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == list(reversed(ids))
        assert s.list(limit=3)["total"] == 7
        with pytest.raises(InvalidInputError, match="cursor"):
            s.list(cursor="not-a-cursor")
        with pytest.raises(InvalidInputError, match="cursor"):
            s.list(cursor=page["items"][0]["updated_at"], order="importance")


def test_growth_counts_live_memories_by_period_kind_and_namespace(db_path, config):
    now = [1_800_000_000.0]
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj", clock=lambda: now[0]) as s:
        s.remember("an old decision: use sqlite", kind="decision")
        now[0] += 30 * 86400
        s.remember("a recent fact about ports", kind="fact")
        gone = s.remember("a recent note to forget", kind="note")["id"]
        s.forget(gone)
        report = s.growth(bucket_days=7, buckets=2)
        assert report["before"]["by_kind"] == {"decision": 1}
        assert [b["by_kind"] for b in report["buckets"]] == [{}, {"fact": 1}]
        assert report["buckets"][1]["by_namespace"] == {"proj": 1}
        with pytest.raises(InvalidInputError):
            s.growth(buckets=0)


def test_the_relevance_threshold_has_an_off_switch_per_call_and_in_the_settings(store):
    memory = store.remember("Redis key convention: ledgerly:{env}:{domain}:{id}; iterate with SCAN.")
    store.config.settings["ranking"]["relevance_floor"] = 0      # the threshold alone decides here
    query = "how do we shard the elasticsearch cluster"
    gated = store.recall(query, touch=False)
    assert gated["results"] == [] and "nothing relevant" in gated["note"]
    off = store.recall(query, relevance_threshold=0, touch=False)
    assert ids(off) == [memory["id"]] and off["results"][0]["relevance"] < store.rank_config(query).threshold
    store.config.settings["ranking"]["relevance_threshold"] = 0
    assert ids(store.recall(query, touch=False)) == [memory["id"]]
    with pytest.raises(InvalidInputError):
        store.recall(query, relevance_threshold=2)


def test_a_query_word_no_candidate_holds_lowers_the_pooled_coverage(store):
    store.remember("ledgerly deploys to ECS Fargate; a deploy registers a new task definition.")
    store.remember("Staging deploys automatically on every merge to main.")
    known = store.recall("deploy staging fargate", explain=True, gates=False, touch=False)["results"][0]["features"]
    unknown = store.recall("deploy staging zanzibar", explain=True, gates=False, touch=False)["results"][0]["features"]
    assert known["pooled_coverage"] == pytest.approx(1.0)
    assert 0 < unknown["pooled_coverage"] < 1.0 and unknown["pooled_coverage"] >= unknown["best_coverage"]


def test_only_a_meaningful_embedder_the_model_was_not_fitted_on_keeps_its_vector_only_hits(db_path, config):
    from conftest import FakeEmbedder

    class OtherSemanticEmbedder(FakeEmbedder):    # stands in for e.g. the openai provider
        provider_id = "other"
        semantic = True

    for embedder, expected in ((FakeEmbedder(), False), (OtherSemanticEmbedder(), True)):
        with MemoryStore(db_path, config=config, embedder=embedder, namespace="proj") as s:
            assert s.rank_config("deploy", has_vectors=True).uncalibrated_cosines is expected
            assert s.rank_config("deploy", has_vectors=False).uncalibrated_cosines is False


def _recalled(store: MemoryStore, query: str, namespace: str) -> list:
    page = store.recall(query, namespace=namespace, limit=8, explain=True, touch=False)
    return [(r["id"], r["score"], r["relevance"], r["features"]) for r in page["results"]]


def test_a_server_s_warm_recall_answers_exactly_as_a_cold_one(tmp_path):
    """The server keeps live vectors in RAM and takes the candidates' vectors from there, not from the
    BLOB table: same ids, same relevance, and a write by another process is seen on the next recall."""
    home = tmp_path / "home"
    db = home / "memory.db"
    rng = random.Random(5)
    words = ["cache", "deploy", "schema", "queue", "token", "index", "client", "retry", "backoff", "shard",
             "lease", "vacuum", "cursor", "webhook", "quota", "replica"]
    cold = MemoryStore(db, config=Config(home=home), embedder=HashProvider(), namespace="proj")
    for n in range(60):
        cold.remember(f"note {n}: " + " ".join(rng.sample(words, 5)), namespace="proj" if n % 3 else "other",
                      create_namespace=True)
    warm = MemoryStore(db, config=Config(home=home), embedder=HashProvider(), namespace="proj", cache_vectors=True)
    queries = ["deploy retry backoff", "schema index", "token shard cache", "queue client"]
    try:
        for ns in ("proj", "other", "*"):
            for q in queries:
                assert _recalled(warm, q, ns) == _recalled(cold, q, ns)
        assert warm.context.matrix_cache    # the RAM path was taken
        writer = MemoryStore(db, config=Config(home=home), embedder=HashProvider(), namespace="proj")
        new = writer.remember("deploy retry backoff shard: the one written by another process")["id"]
        writer.close()
        for q in queries:
            assert _recalled(warm, q, "proj") == _recalled(cold, q, "proj")
        assert new in [r[0] for r in _recalled(warm, "deploy retry backoff shard", "proj")]
    finally:
        warm.close()
        cold.close()


def test_another_namespace_s_matches_never_crowd_out_this_one_s(tmp_path):
    """The lexical cut (`ranking.candidates` rows) is taken inside the asked namespaces when the store holds
    others; it is only left out when the asked ones hold every live memory."""
    from supermemory.store import search_index

    home = tmp_path / "home"
    store = MemoryStore(home / "memory.db", config=Config(home=home), embedder=HashProvider(), namespace="mine")
    try:
        for n in range(40):      # far better bm25 matches than the one memory of `mine`
            store.remember(f"kubernetes kubernetes kubernetes rollout {n}", namespace="theirs", create_namespace=True)
        mine = store.remember("a long note about many things: the kubernetes cluster, staging, billing, the "
                              "release train, who is on call and where the dashboards live")["id"]
        store.config.settings["ranking"]["candidates"] = 10
        assert not search_index.covers_all(store.context, ["mine", "global"])
        assert search_index.covers_all(store.context, ["mine", "theirs", "global"])
        assert search_index.covers_all(store.context, None)
        found = store.recall("kubernetes", limit=3, touch=False, channels=("lexical",))
        assert [r["id"] for r in found["results"]] == [mine]
    finally:
        store.close()


def test_recall_answers_while_another_process_holds_the_write_lock(db_path, config, caplog):
    """Its statistics are dropped after a short wait (a warning), not waited for through the 30 s busy timeout;
    the store's own writes keep their full timeout."""
    import time

    from supermemory.store import db as dbm
    from supermemory.store.search_log import STATS_WAIT_MS

    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="p")
    memory = s.remember("The nightly export job writes parquet files to the archive bucket.")
    task = s.remember("Move the export job to the new bucket", kind="task", status="open")
    holder = dbm.connect(str(db_path), dbm.choose_driver(None))
    holder.execute("BEGIN EXCLUSIVE")      # another process in the middle of a long write
    try:
        started = time.monotonic()
        with caplog.at_level("WARNING"):
            found = s.recall("nightly export parquet archive")
            listed = s.recall("open tasks")  # a broad question, answered by retrieval/broad.py
        waited = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert ids(found)[0] == memory["id"] and ids(listed) == [task["id"]]
    assert waited < 2 * 10 * STATS_WAIT_MS / 1000 + 5, waited           # was 30 s each
    assert "could not record recall statistics" in caplog.text
    assert s.conn.execute("PRAGMA busy_timeout").fetchone()[0] == dbm.BUSY_TIMEOUT_MS
    def recalled() -> int:
        return s.conn.execute("SELECT recall_count FROM memories WHERE id = ?", (int(memory["id"][1:]),)).fetchone()[0]

    assert recalled() == 0                                               # dropped, not half-written
    s.recall("nightly export parquet archive")
    assert recalled() == 1                                               # recorded once the lock is free
    s.close()


def _long_text(sections: int) -> str:
    """A text of `sections` sentences, each with words of its own."""
    return " ".join(f"Section {n}: the ingest worker{n} retries batch{n} after timeout{n} errors." for n in range(sections))


def _vector_rows(store) -> tuple[int, int, int]:
    conn = store.context.conn
    return (conn.execute("SELECT count(*) FROM chunks").fetchone()[0],
            conn.execute("SELECT count(*) FROM vectors").fetchone()[0],
            conn.execute("SELECT count(*) FROM vec_mem").fetchone()[0] if store.context.driver.vec else -1)


def test_a_long_text_is_answered_after_its_first_chunks_and_the_rest_gets_vectors_later(store):
    store.config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0,
                                                         write_embed_chunks=2)
    out = store.remember(_long_text(12))
    chunks, vectors, indexed = _vector_rows(store)
    assert out["chunks"] == chunks > 4 and vectors == 2 and out["vectors_pending"] == chunks - 2
    assert indexed == (2 if store.context.driver.vec else -1)
    assert store.health()["vectors_pending"] == chunks - 2
    assert store.recall("worker11 timeout11")["results"][0]["id"] == out["id"]   # words find the rest at once
    assert store.fill_vectors(limit=1) == FILL_SLICE                                 # one slice
    assert store.maintenance()["vectors_embedded"] == chunks - 2 - FILL_SLICE
    assert _vector_rows(store) == (chunks, chunks, chunks if indexed != -1 else -1)
    assert store.fill_vectors() == 0 and store.context.vectors_pending is False
    assert store.health()["vectors_pending"] == 0


def test_filling_in_vectors_leaves_forgotten_memories_alone_and_a_short_text_is_embedded_whole(store):
    store.config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0,
                                                         write_embed_chunks=1)
    long_one = store.remember(_long_text(6))
    short = store.remember("Deploys run on Tuesdays")
    assert short["vectors_pending"] == 0 and long_one["vectors_pending"] > 0
    store.forget([long_one["id"]])
    assert store.fill_vectors() == 0
    assert store.context.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2


def test_an_update_keeping_the_text_keeps_the_vectors_it_has_and_the_rest_follow(store):
    store.config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0,
                                                         write_embed_chunks=2)
    first = store.remember(_long_text(8))
    updated = store.update(first["id"], importance=0.9)
    assert updated["vectors_pending"] == first["vectors_pending"]
    assert store.fill_vectors() == first["vectors_pending"]
    assert store.health()["vectors_pending"] == 0


def test_without_an_embedder_filling_in_says_so_once_and_stops(store, monkeypatch, caplog):
    store.config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0,
                                                         write_embed_chunks=1)
    store.remember(_long_text(6))

    def unavailable(texts, progress=None):
        raise EmbeddingUnavailableError("model missing")

    monkeypatch.setattr(store.context.embedder, "embed_multi", unavailable)
    with caplog.at_level("INFO", logger="supermemory"):
        assert store.fill_vectors(limit=1) == 0
    assert store.context.vectors_pending is False and "model missing" in caplog.text


def test_a_long_hit_carries_the_passage_that_answers_and_a_short_one_none(store):
    store.config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0)
    manual = store.remember(" ".join(f"Section {n}: the relay{n} forwards queue{n} messages to sink{n}." for n in range(12)))
    short = store.remember("The relay7 owner is the platform team")
    hits = {r["id"]: r for r in store.recall("where does relay9 forward messages", touch=False)["results"]}
    passage = hits[manual["id"]]["passage"]
    assert passage["chunks"] == manual["chunks"] > 4 and "relay9" in passage["text"] and "relay3" not in passage["text"]
    stored = store.context.conn.execute("SELECT text FROM chunks WHERE memory_id = ? AND seq = ?",
                                        (int(manual["id"][1:]), passage["chunk"] - 1)).fetchone()[0]
    assert passage["text"].strip("…") in " ".join(stored.split())   # an excerpt of that chunk
    assert all("passage" not in r for r in store.recall("relay7 owner", touch=False)["results"] if r["id"] == short["id"])


def test_passages_go_to_hits_relevant_on_their_own_and_count_in_the_token_budget(store, monkeypatch):
    from supermemory.retrieval import ranking

    store.config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0)
    answer = store.remember(" ".join(f"Section {n}: the relay{n} forwards queue{n} messages to sink{n}." for n in range(12)))
    filler = store.remember(" ".join(f"Part {n}: the garden{n} grows tomatoes{n} in summer{n}." for n in range(12)))
    ask = dict(text="where does relay9 forward messages", touch=False, gates=False)
    monkeypatch.setattr(ranking, "shipped_threshold", lambda configured: 0.0)   # every long hit gets its passage
    hits = {r["id"]: r for r in store.recall(**ask)["results"]}
    assert "passage" in hits[filler["id"]] and hits[answer["id"]]["relevance"] > hits[filler["id"]]["relevance"]
    between = (hits[answer["id"]]["relevance"] + hits[filler["id"]]["relevance"]) / 2
    monkeypatch.setattr(ranking, "shipped_threshold", lambda configured: between)
    page = store.recall(**ask)
    hits = {r["id"]: r for r in page["results"]}
    assert "passage" in hits[answer["id"]] and "passage" not in hits[filler["id"]]   # filler stays a pointer
    cost = estimate_tokens(hits[answer["id"]]["title"]) + estimate_tokens(hits[answer["id"]]["summary"]) + 12
    cost += estimate_tokens(hits[answer["id"]]["passage"]["text"])
    tight = store.recall(**ask, max_tokens=cost + 5, explain_all=True)
    assert [r["id"] for r in tight["results"]] == [answer["id"]]       # the passage is counted: nothing else fits
    assert any(d["reason"].startswith("token budget") for d in tight["dropped"])
    store.config.settings.setdefault("recall", {})["max_tokens"] = cost + 5   # the setting is the default budget
    assert [r["id"] for r in store.recall(**ask)["results"]] == [answer["id"]]
    assert len(store.recall(**ask, max_tokens=10_000)["results"]) > 1
    alone = store.recall(**ask, max_tokens=cost - 5)["results"]       # the first hit fits, its passage does not
    assert [r["id"] for r in alone] == [answer["id"]] and "passage" not in alone[0]


def test_a_pin_or_status_change_to_an_old_version_goes_to_the_current_one_and_text_changes_are_refused(store):
    # Found by a fresh-user run: after `update M1 --pin` (new version M2), `update M1 --status done` was refused,
    # though the agent only held the id its recall gave it.
    from supermemory.render import render_update

    first = store.remember("TODO: add retries to the webhook sender", kind="task")["id"]
    pinned = store.update(first, pinned=True)
    closed = store.update(first, status="done")
    assert closed["asked"] == first and closed["previous"] == pinned["id"]
    assert f"{first} was superseded: the change went to its current version." in render_update(closed)
    current = store.get([closed["id"]])["memories"][0]
    assert current["pinned"] and current["status"] == "done"
    assert "asked" not in store.update(closed["id"], importance=0.9)
    with pytest.raises(InvalidInputError, match="current version"):
        store.update(first, content="TODO: add retries and a dead-letter queue")


def test_an_exact_repeat_counts_case_and_old_stores_are_rehashed(store):
    # Found by a fresh-user run: the hash folded case, so "ls -a (not ls -A)" after "ls -A (not ls -a)" was
    # answered "Already stored (exact duplicate)" and the opposite fact was lost.
    from supermemory.store import schema
    from supermemory.store.records import content_hash

    first = store.remember("To list hidden files run ls -A (not ls -a)", kind="gotcha")
    second = store.remember("To list hidden files run ls -a (not ls -A)", kind="gotcha")
    assert second["id"] != first["id"] and second["status"] != "duplicate"
    assert store.remember("To list hidden files run ls -a (not ls -A)", kind="gotcha")["status"] == "duplicate"
    conn = store.context.conn
    conn.execute("UPDATE memories SET content_hash = 'case-folded'")     # a store hashed the old way
    schema.m006_case_sensitive_hashes(conn)
    for kind, title, body, digest in conn.execute("SELECT kind, title, body, content_hash FROM memories"):
        assert digest == content_hash(kind, title, body)
