"""Defects of the fresh-user run fu30 (twenty-fourth session): namespaces kept apart by `link` and `export`, and an
import line whose `superseded_by` names no memory."""
from __future__ import annotations

import json

import pytest

from supermemory.errors import InvalidInputError
from tests.test_fresh_user_s20 import two_projects  # noqa: F401  (fixture)
from tests.test_mcp_server import call


def test_link_refuses_to_join_two_projects_as_merge_does(two_projects):  # noqa: F811
    """D1: with '*', `link` joined a projA note to a projB decision, which left projB's briefing."""
    store, billing, dashboard = two_projects
    mine = store.remember("Deploys go through Argo CD.", kind="decision")["id"]
    theirs = store.remember("Dashboards deploy with Vercel.", kind="decision", namespace="dashboard-web")["id"]
    with pytest.raises(InvalidInputError, match="a link joins memories of one namespace"):
        store.link(mine, theirs, relation="supersedes", namespace="*")
    answer = call(store, "memory_link", {"src": mine, "dst": theirs, "relation": "related", "namespace": "*"})
    assert answer["result"]["isError"] and "one namespace" in answer["result"]["content"][0]["text"]
    assert store.history(theirs, namespace="*")["links"] == []
    other = store.remember("Deploys need a green CI run.", kind="gotcha")["id"]
    assert store.link(mine, other, relation="related")["relation"] == "related"   # within one project: as before


def test_export_writes_the_current_project_and_global_unless_every_project_is_asked_for(
        two_projects, tmp_path):  # noqa: F811
    """D2: `export FILE` and MCP `memory_export` without namespaces wrote every project's memories."""
    store, billing, dashboard = two_projects
    store.remember("Prefer small PRs.", kind="preference", namespace="global")
    result = store.export(tmp_path / "mine.jsonl")
    assert result["namespaces"] == {"billing-api": 1, "global": 1}
    lines = [json.loads(line) for line in (tmp_path / "mine.jsonl").read_text().splitlines()]
    assert {line["namespace"] for line in lines} == {"billing-api", "global"}
    answer = call(store, "memory_export", {"path": "mine.jsonl"})
    assert answer["result"]["structuredContent"]["namespaces"] == {"billing-api": 1, "global": 1}
    assert store.export(tmp_path / "all.jsonl", namespaces=["*"])["namespaces"] == {
        "billing-api": 1, "dashboard-web": 1, "global": 1}


def _exported_line(store, tmp_path) -> dict:
    """One memory stored and exported: its export line, to damage."""
    store.remember("Webhook retries back off exponentially.", kind="fact")
    good = tmp_path / "good.jsonl"
    store.export(good)
    return json.loads(good.read_text().splitlines()[0])


def test_an_import_line_superseded_by_a_memory_it_does_not_hold_is_refused(store, tmp_path):
    """D4: a head whose `superseded_by` named no memory was imported as an invisible old version, and `history` of
    it crashed with a traceback."""
    line = _exported_line(store, tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**line, "id": "M40", "superseded_by": "M777"}) + "\n")
    with pytest.raises(InvalidInputError, match="superseded by nothing"):
        store.import_file(bad)
    older = {**line, "id": "M41", "superseded_by": "M777"}
    bad.write_text(json.dumps({**line, "id": "M42", "history": [older]}) + "\n")
    with pytest.raises(InvalidInputError, match="M41 is superseded by M777, which is not a version of this line"):
        store.import_file(bad)
    assert store.stats()["memories"] == 1


def test_history_of_a_chain_that_points_nowhere_ends_where_it_exists(store):
    from supermemory.store.versions import head
    mid = int(store.remember("Webhook retries back off exponentially.")["id"][1:])
    store.context.conn.execute("UPDATE memories SET superseded_by = 777 WHERE id = ?", (mid,))
    assert head(store.context, mid) == mid
    assert store.history(f"M{mid}", namespace="*")["current"] == f"M{mid}"


def test_import_says_which_links_it_could_not_keep(store, tmp_path):
    """D7: a link to a memory missing from the file and the store was dropped without a word."""
    from supermemory.render import render_import
    old = store.remember("Webhook retries back off from 1s.", kind="fact")["id"]
    new = store.remember("Webhook retries now back off from 2s instead of 1s.", kind="fact")["id"]
    store.link(new, old, relation="supersedes")
    dump = tmp_path / "dump.jsonl"
    store.export(dump)
    only_new = tmp_path / "only_new.jsonl"
    only_new.write_text("".join(line + "\n" for line in dump.read_text().splitlines()
                                if json.loads(line)["id"] == new))
    from supermemory.core import MemoryStore
    from tests.conftest import FakeEmbedder
    with MemoryStore(tmp_path / "other.db", config=store.context.config, embedder=FakeEmbedder(),
                     namespace=store.context.namespace) as other:
        result = other.import_file(only_new)
    assert result["links_dropped"] == [{"src": new, "dst": old, "relation": "supersedes", "why": "no such memory here"}]
    assert f"1 link not kept: {new} -supersedes→ {old} (no such memory here)" in render_import(result)


def test_a_path_in_supermemory_namespace_is_read_as_namespace_arguments_are(tmp_path, monkeypatch):
    """D3: SUPERMEMORY_NAMESPACE=/tmp/x/projB wrote to a new namespace `tmp-x-projb`; `--namespace` refuses such a
    path and maps a known project's root to its name."""
    from supermemory.config import Config
    from supermemory.errors import ConfigError
    project = tmp_path / "work" / "projB"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    config = Config(home=tmp_path / "home", project_dir=project, explicit_namespace=str(project))
    assert config.default_namespace() == "projb"
    with pytest.raises(ConfigError, match="namespaces are names, not paths"):
        Config(home=tmp_path / "home", project_dir=project,
               explicit_namespace=str(tmp_path / "elsewhere" / "projB")).default_namespace()
    with pytest.raises(ConfigError, match="not the root folder"):
        Config(home=tmp_path / "home", project_dir=project, explicit_namespace="../../etc/passwd").default_namespace()
    named = Config(home=tmp_path / "home", project_dir=project, explicit_namespace="Billing")
    assert named.default_namespace() == "billing"


def test_an_import_line_whose_namespace_is_a_path_is_refused(store, tmp_path):
    line = _exported_line(store, tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**line, "id": "M40", "namespace": "../../etc"}) + "\n")
    with pytest.raises(InvalidInputError, match="namespace: names, not paths"):
        store.import_file(bad)


def test_a_memory_already_here_still_brings_its_links_in(store, tmp_path):
    """fu31 N3: after "1 link not kept" (its target missing), importing the whole file, target included, skipped the
    memory as already present and never wrote its link."""
    old = store.remember("CI runs on Jenkins.", kind="decision")["id"]
    new = store.remember("We moved CI from Jenkins to GitHub Actions.", kind="decision")["id"]
    store.link(new, old, relation="supersedes")
    dump = tmp_path / "dump.jsonl"
    store.export(dump)
    lines = dump.read_text().splitlines()
    only_new = tmp_path / "only_new.jsonl"
    only_new.write_text("".join(line + "\n" for line in lines if json.loads(line)["id"] == new))
    from supermemory.core import MemoryStore
    from tests.conftest import FakeEmbedder
    with MemoryStore(tmp_path / "other.db", config=store.context.config, embedder=FakeEmbedder(),
                     namespace=store.context.namespace) as other:
        assert other.import_file(only_new)["links_dropped"]
        result = other.import_file(dump)
        assert (result["imported"], result["skipped"]) == (1, 1) and "links_dropped" not in result
        assert other.get(old)["memories"][0]["superseded_by"] == new


def test_the_briefing_orders_memories_of_one_second_by_id_in_any_store(store, tmp_path):
    """fu31 N7: after an export/import round trip, decisions written in the same second came in the other order."""
    ids = [store.remember(f"Decision {n}: service {n} owns its own schema.", kind="decision")["id"] for n in range(3)]
    with store.context.txn():
        store.conn.execute("UPDATE memories SET updated_at = 1800000000, created_at = 1800000000")
    assert [m["id"] for m in store.briefing()["sections"]["decisions"]] == ids[::-1]


def test_a_hard_forget_of_an_old_version_is_refused_and_names_the_current_one(store):
    """fu32 D5: `forget --hard <old version>` erased the current version too, naming only the old id."""
    old = store.remember("The blorptastic queue retries three times.")["id"]
    new = store.update(old, content="The blorptastic queue retries five times.")["id"]
    with pytest.raises(InvalidInputError, match=f"{old} is an old version; forget the current one, {new} "
                                                 r"\(a hard delete erases its whole history with it\)"):
        store.forget([old], hard=True)
    assert store.get(new)["memories"][0]["id"] == new
    assert store.forget([new], hard=True)["forgotten"] == [new]
    assert store.get(new, namespace="*").get("missing") == [new]


def test_the_pair_readers_health_calls_per_text_keep_a_store_of_10k_texts_cached():
    """fu32 D6: `health` took 4.9 s at 10k memories, re-reading each text for every close pair once the caches of
    1024 / 4096 texts had cycled (bench/RESULTS.md: 4.69 → 3.10 s median on that store)."""
    from supermemory.text import traits
    for reader in (traits.value_reading, traits.adds, traits._swap_words, traits._swap_reading):
        assert reader.cache_info().maxsize >= 10_000


@pytest.mark.parametrize("title", ["", None])
def test_an_imported_memory_without_a_title_gets_one_from_its_body(store, tmp_path, title):
    """fu32 D8: imported with "title": "" (or none), a memory showed as a blank line in recall, health and get."""
    line = _exported_line(store, tmp_path)
    line = {k: v for k, v in line.items() if k != "title"} if title is None else {**line, "title": title}
    bad = tmp_path / "untitled.jsonl"
    bad.write_text(json.dumps({**line, "id": "M40", "body": "Flaky test: the checkout e2e suite times out on CI."})
                   + "\n")
    store.import_file(bad)
    assert store.get("M40")["memories"][0]["title"].startswith("Flaky test: the checkout e2e suite")


def test_ids_are_ascii_and_each_counts_once(store):
    """fu32 D12: "M٣" (an Arabic-Indic digit) was read as M3, and `forget M1 M1` named M1 twice."""
    from supermemory.store.records import parse_id, parse_ids
    with pytest.raises(InvalidInputError, match="not a memory id"):
        parse_id("M\u0663")
    assert parse_ids(["M2", "m2", 2, "M1"]) == [2, 1]
    mid = store.remember("A note to forget.")["id"]
    assert store.forget([mid, mid])["forgotten"] == [mid]


def test_a_private_span_across_user_turns_is_dropped_from_the_captured_session(tmp_path):
    """fu32 D4: a span opened in one user turn and closed in a later one stored the turns in between."""
    from supermemory.capture import _redact_lines
    from tests.helpers.histories import ClaudeSession
    s = ClaudeSession("s1", str(tmp_path), "2026-12-01")
    s.user("Let's fix the checkout bug. <private>the next thing is confidential")
    s.say("Understood.")
    s.user("customer ACMECORP pays 2M a year </private> ok, go on")
    s.user("Run the tests for checkout VISIBLE3")
    s.user("open again <private> from here SECRETTAIL")
    s.user("and this too STILLHIDDEN")
    text = json.dumps(_redact_lines(s.lines))
    assert "ACMECORP" not in text and "Understood" not in text and "SECRETTAIL" not in text
    assert "STILLHIDDEN" not in text
    assert "ok, go on" in text and "VISIBLE3" in text and "Let's fix the checkout bug." in text
    assert '"type": "user"' in text and '"sessionId": "s1"' in text    # the lines themselves are intact


def test_a_private_span_still_open_when_one_capture_ends_goes_on_in_the_next(store, tmp_path):
    """fu32 D4, across hook runs: the span a Stop hook's read ended inside covers the lines the next read gets."""
    from tests.helpers.histories import ClaudeSession

    def open_spans() -> list:
        return json.loads(store.conn.execute("SELECT digest FROM capture_state").fetchone()[0])["state"].get(
            "private_open")

    path = tmp_path / "s1.jsonl"
    s = ClaudeSession("s1", str(tmp_path), "2026-12-01")
    s.user("Let's fix the checkout bug. <private>the next thing is confidential")
    s.write(path)
    first = store.capture_session(str(path), session_id="s1", platform="claude-code", cwd=str(tmp_path))
    assert "confidential" not in json.dumps(store.get(first["id"]))
    assert open_spans() == [str(path)]
    s.user("customer ACMECORP pays 2M a year </private> ok, go on")
    s.user("Run the tests for checkout VISIBLE3")
    s.write(path)
    second = store.capture_session(str(path), session_id="s1", platform="claude-code", cwd=str(tmp_path))
    stored = json.dumps(store.get(second["id"])) + store.conn.execute("SELECT digest FROM capture_state").fetchone()[0]
    assert "ACMECORP" not in stored and "ok, go on" in stored and "VISIBLE3" in stored
    assert open_spans() == []
