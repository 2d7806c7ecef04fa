"""Fresh-user test fu20, D2 and D7–D9: a `supersedes` link that closes a cycle is refused and `health` reports one
already stored; failed queries are shown short and counted once; namespace arguments that are paths follow one
rule; small wording fixes (the `?;` of the create-namespace hint, `update` says what it wrote, unquoted recall
words, the scope `stats` counts, `get` of a found and a missing id)."""
from __future__ import annotations

import json

import pytest

from supermemory import cli
from supermemory.errors import InvalidInputError
from supermemory.render import render_health
from tests.test_mcp_server import call


# --- D2: supersedes cycles ---------------------------------------------------------------------------------------

def _logging_pair(store):
    old = store.remember("Logging uses logrus with the JSON formatter; every request logs request_id.", kind="fact")
    new = store.remember("We moved from logrus to log/slog (standard library) for structured logging.",
                         kind="decision")
    return old["id"], new["id"]


def test_a_supersedes_link_that_closes_a_cycle_is_refused_naming_the_link_and_how_to_reverse_it(store):
    old, new = _logging_pair(store)
    store.link(new, old, relation="supersedes")
    with pytest.raises(InvalidInputError) as caught:
        store.link(old, new, relation="supersedes")
    message = str(caught.value)
    assert f"{new} already supersedes {old}" in message and "cycle" in message
    assert f"supermemory unlink {new} {old} --relation supersedes" in message
    assert store.health()["supersedes_cycles"] == []           # nothing was written
    store.link(new, old, relation="supersedes", weight=0.5)     # the same direction again: fine (weight updated)
    store.link(old, new, relation="related")                    # another relation: no cycle


def test_a_longer_supersedes_cycle_is_refused_too_through_mcp(store):
    a = store.remember("Invoices are rendered to PDF with gofpdf.")["id"]
    b = store.remember("Integration tests share one Postgres container.")["id"]
    c = store.remember("State management uses Zustand in the dashboard.")["id"]
    store.link(c, b, relation="supersedes")
    store.link(b, a, relation="supersedes")
    answer = call(store, "memory_link", {"src": a, "dst": c, "relation": "supersedes"})["result"]
    assert answer["isError"] is True
    text = answer["content"][0]["text"]
    assert f"{c} already supersedes {a} (through {b})" in text and f"unlink {b} {a} --relation supersedes" in text


def test_health_reports_a_supersedes_cycle_already_in_the_store_and_how_to_break_it(store):
    old, new = _logging_pair(store)
    ids = [int(old[1:]), int(new[1:])]
    with store.context.txn():   # a store written before `link` refused cycles
        for src, dst in (ids, ids[::-1]):
            store.context.conn.execute("INSERT OR IGNORE INTO links(src, dst, relation, weight, created_at) "
                                       "VALUES (?, ?, 'supersedes', 1.0, 0)", (src, dst))
    health = store.health()
    assert health["clean"] is False
    assert [c["ids"] for c in health["supersedes_cycles"]] == [[old, new]]
    text = render_health(health)
    assert "supersedes cycles" in text and "needs attention" in text
    assert f"`supermemory unlink {old} {new} --relation supersedes`" in text
    assert f"`supermemory unlink {new} {old} --relation supersedes`" in text
    store.unlink(old, new, relation="supersedes")
    assert store.health()["supersedes_cycles"] == []


def test_health_reports_a_longer_supersedes_cycle_once_in_link_order(store):
    ids = [store.remember(text)["id"] for text in ("Invoices are rendered to PDF with gofpdf.",
                                                    "Integration tests share one Postgres container.",
                                                    "State management uses Zustand in the dashboard.")]
    loop = [int(i[1:]) for i in ids]
    with store.context.txn():   # M_a supersedes M_b supersedes M_c supersedes M_a, written before `link` refused it
        for src, dst in zip(loop, loop[1:] + loop[:1]):
            store.context.conn.execute("INSERT INTO links(src, dst, relation, weight, created_at) "
                                       "VALUES (?, ?, 'supersedes', 1.0, 0)", (src, dst))
    assert [c["ids"] for c in store.health()["supersedes_cycles"]] == [ids]


# --- D7: failed queries shown short, each once ---------------------------------------------------------------------

def test_stats_shows_a_long_failed_query_cut_short_and_once_with_how_many_times(store):
    from supermemory.render import render_stats

    store.remember("Invoices are rendered to PDF with gofpdf.")
    for _ in range(2):
        store.recall("x" * 9999)
    store.recall("zzqv nothing matches this")
    text = render_stats(store.stats())
    failed = [line for line in text.splitlines() if "no result:" in line]
    assert len(failed) == 2 and max(len(line) for line in failed) < 200
    assert failed[1].strip() == "no result: " + "x" * 120 + "…(9,999 characters)  (2×)"
    assert failed[0].strip() == "no result: zzqv nothing matches this"


def test_the_no_result_answer_does_not_echo_a_long_query_whole(store):
    store.remember("Invoices are rendered to PDF with gofpdf.")
    answer = call(store, "memory_recall", {"query": "x" * 9999})["result"]
    text = answer["content"][0]["text"]
    assert "No relevant memories for '" + "x" * 120 + "…(9,999 characters)'." in text and len(text) < 1000


def test_the_ui_health_page_gets_the_failed_queries_short_and_counted(store):
    from supermemory.ui import api

    store.remember("Invoices are rendered to PDF with gofpdf.")
    for _ in range(3):
        store.recall("y" * 5000)
    failed = api.health(store, {})["recall"]["recent_empty_queries"]
    assert failed == [{"query": "y" * 120 + "…(5,000 characters)", "times": 3}]


# --- D8: namespace arguments that are paths ----------------------------------------------------------------------

@pytest.fixture
def two_projects(tmp_path, monkeypatch):
    """billing-api (the current project) and dashboard-web (a project that wrote here: its root is recorded)."""
    from supermemory.config import Config
    from supermemory.core import MemoryStore
    from tests.conftest import FakeEmbedder

    projects = tmp_path / "projects"
    billing, dashboard = projects / "billing-api", projects / "dashboard-web"
    for root in (billing, dashboard, tmp_path / "home" / "x"):
        (root / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home = tmp_path / "smhome"
    (home / "namespaces").mkdir(parents=True)
    (home / "namespaces" / "dashboard-web").write_bytes(bytes(dashboard))   # as the first write under it records
    store = MemoryStore(home / "memory.db", config=Config(home=home, project_dir=billing), embedder=FakeEmbedder(),
                        namespace="billing-api")
    store.remember("We use chi for HTTP routing.")
    store.remember("State management uses Zustand, not Redux.", namespace="dashboard-web", create_namespace=True)
    monkeypatch.chdir(billing / ".git")   # the cwd is not what relative paths are read from: the project is
    yield store, billing, dashboard
    store.close()


def _ids(result):
    return {hit["namespace"] for hit in result["results"]}


def test_a_path_of_a_known_project_root_is_read_as_that_projects_namespace(two_projects):
    store, billing, dashboard = two_projects
    for path in (str(dashboard), "../dashboard-web", f"{billing}/../dashboard-web/", "~/../projects/dashboard-web"):   # HOME is tmp_path/home
        assert store.list(namespace=path)["items"][0]["namespace"] == "dashboard-web", path
    assert _ids(store.recall("state management Zustand", namespace=str(dashboard), gates=False)) <= {"dashboard-web"}
    for path in (str(billing), ".", "./"):
        assert {m["namespace"] for m in store.list(namespace=path)["items"]} == {"billing-api"}, path
    written = store.remember("Dashboards refresh every 30 seconds.", namespace=str(dashboard))
    assert store.get([written["id"]])["memories"] == [] and \
        store.get([written["id"]], namespace="dashboard-web")["memories"][0]["namespace"] == "dashboard-web"
    assert store.list(namespace="dashboard-web")["items"]   # a plain name as before


def test_a_file_uri_of_a_known_project_root_is_read_as_that_projects_namespace(two_projects):
    """MCP clients name workspace folders as file:// URIs; one was read as a relative path under the current
    project, and the suggestion named the other project (fu21 N6)."""
    store, billing, dashboard = two_projects
    uri = dashboard.resolve().as_uri()
    assert {m["namespace"] for m in store.list(namespace=uri)["items"]} == {"dashboard-web"}
    assert {m["namespace"] for m in store.list(namespace=uri.replace("/dashboard-web", "/dashboard%2Dweb"))["items"]} \
        == {"dashboard-web"}                                                   # percent-encoded as clients may send it
    assert {m["namespace"] for m in store.list(namespace=billing.resolve().as_uri() + "/")["items"]} == {"billing-api"}


@pytest.mark.parametrize("path, meant", [
    ("https://example.com/dashboard-web", "did you mean 'dashboard-web'?"),   # another scheme: no local folder
    ("~/dashboard-web", "did you mean 'dashboard-web'?"),               # silently mapped before
    ("../../etc", "existing namespaces: billing-api, dashboard-web"),   # became 'etc' before
    ("/nonexistent/projects/dashboard-web", "did you mean 'dashboard-web'?"),   # became 'nonexistent-projects-…'
    ("~/x", "existing namespaces"),                                      # a git root no write recorded
])
def test_any_other_path_is_refused_as_not_a_name_with_the_name_it_may_have_meant(two_projects, path, meant):
    from supermemory.errors import NamespaceError

    store, billing, dashboard = two_projects
    for attempt in (lambda: store.recall("state management", namespace=path),
                    lambda: store.remember("A note", namespace=path, create_namespace=True)):
        with pytest.raises(NamespaceError, match="namespaces are names, not paths") as caught:
            attempt()
        assert meant in str(caught.value)
    assert sorted(store.stats(namespace="*")["by_namespace"]) == ["billing-api", "dashboard-web"]   # none made


def test_a_folder_inside_a_known_project_names_that_project_in_the_error(two_projects):
    from supermemory.errors import NamespaceError

    store, billing, dashboard = two_projects
    (dashboard / "src").mkdir()
    with pytest.raises(NamespaceError, match=r"did you mean 'dashboard-web' \(the project that folder is in\)"):
        store.list(namespace=str(dashboard / "src"))


def test_mcp_reads_a_project_root_path_as_its_namespace(two_projects):
    store, billing, dashboard = two_projects
    answer = call(store, "memory_recall", {"query": "state management Zustand", "namespace": str(dashboard)})
    assert answer["result"]["isError"] is False and "Zustand" in answer["result"]["content"][0]["text"]
    refused = call(store, "memory_recall", {"query": "chi", "namespace": "../../etc"})["result"]
    assert refused["isError"] is True and "namespaces are names, not paths" in refused["content"][0]["text"]


def test_export_reads_a_namespace_path_by_the_same_rule(two_projects, tmp_path):
    """`export --namespace` normalised a path argument the old way: '../../etc' exported as a namespace 'etc'
    that was never written, or named the path's last part (fu20 found-not-fixed)."""
    from supermemory.errors import NamespaceError

    store, billing, dashboard = two_projects
    out = tmp_path / "dash.jsonl"
    store.export(out, namespaces=[str(dashboard)])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines and {line["namespace"] for line in lines} == {"dashboard-web"}
    with pytest.raises(NamespaceError, match="namespaces are names, not paths"):
        store.export(tmp_path / "etc.jsonl", namespaces=["../../etc"])
    assert not (tmp_path / "etc.jsonl").exists()


def test_export_says_which_namespaces_the_file_holds(two_projects, tmp_path):
    """fu23 D7: run inside one project, `export` wrote every project's memories and said only "memories 107"."""
    from supermemory.render import render_export

    store, billing, dashboard = two_projects
    result = store.export(tmp_path / "all.jsonl", namespaces=["*"])     # every project only when asked (fu30 D2)
    assert result["namespaces"] == {"billing-api": 1, "dashboard-web": 1} and result["memories"] == 2
    text = render_export(result)
    assert "It holds 2 namespaces: billing-api 1, dashboard-web 1." in text
    answer = call(store, "memory_export", {"path": "mcp.jsonl", "namespaces": ["dashboard-web"]})   # to exports/
    assert answer["result"]["structuredContent"]["namespaces"] == {"dashboard-web": 1}
    assert "It holds 1 namespace: dashboard-web 1." in answer["result"]["content"][0]["text"]


def test_recall_across_projects_says_whose_each_hit_is(two_projects):
    """fu23 D8: `recall … --namespace '*'` listed three projects' CI answers with nothing to tell them apart."""
    from supermemory.render import render_recall

    store, billing, dashboard = two_projects
    text = render_recall(store.recall("chi routing Zustand state", namespace="*", gates=False))
    assert " · billing-api]" in text and " · dashboard-web]" in text
    assert " · " not in render_recall(store.recall("chi routing", gates=False)).split("\n")[0]   # one project


# --- D9: wording and consistency -----------------------------------------------------------------------------------

@pytest.fixture
def cli_project(tmp_path, isolated_home, monkeypatch):
    """The CLI in-process in a git project `billing-api`, hash vectors, one memory written there."""
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    project = tmp_path / "projects" / "billing-api"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    assert cli.main(["remember", "Logging uses logrus with the JSON formatter.", "--kind", "fact"]) == 0
    return project


def test_the_create_namespace_hint_has_no_stray_punctuation(store):
    from supermemory.errors import NamespaceError

    store.remember("The dashboard uses Zustand.", namespace="dashboard-web", create_namespace=True)
    with pytest.raises(NamespaceError) as caught:
        store.remember("A note", namespace="dashbord-web")
    message = str(caught.value)
    assert "?;" not in message and "did you mean 'dashboard-web'? To start it anyway, pass create_namespace=true" \
        in message
    with pytest.raises(NamespaceError, match=r"existing namespaces: dashboard-web; pass create_namespace=true "
                                             r"\(CLI: --create-namespace\) to start it$"):
        store.remember("A note", namespace="zzzzqqqq")


def test_update_says_which_version_it_wrote_and_keeps_the_id_alone_on_stdout(cli_project, capsys):
    capsys.readouterr()
    assert cli.main(["update", "M1", "--kind", "decision"]) == 0
    out, err = capsys.readouterr()
    assert out == "M2\n"
    assert "Updated: M2 is the new version and supersedes M1 (history kept)." in err.splitlines()
    assert cli.main(["update", "M2", "--importance", "0.9", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["id"] == "M3" and err == ""


def test_recall_joins_unquoted_words_into_the_query(cli_project, capsys):
    capsys.readouterr()
    assert cli.main(["recall", "which", "logging", "library", "--no-gates", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["query"] == "which logging library" and result["results"][0]["id"] == "M1"


def test_words_after_an_option_still_join_the_query_and_the_ids(cli_project, capsys):
    """`recall a --limit 3 b` failed with "unrecognized arguments: b" (fu21 found-not-fixed)."""
    capsys.readouterr()
    assert cli.main(["recall", "which", "--no-gates", "logging", "--json", "library"]) == 0
    assert json.loads(capsys.readouterr().out)["query"] == "which logging library"
    assert cli.main(["remember", "Deploys go through Argo CD."]) == 0
    capsys.readouterr()
    assert cli.main(["get", "M1", "--json", "M2"]) == 0
    assert [m["id"] for m in json.loads(capsys.readouterr().out)["memories"]] == ["M1", "M2"]
    with pytest.raises(SystemExit) as caught:   # an unknown option after the words is still refused
        cli.main(["recall", "logging", "--limit", "3", "--bogus"])
    assert caught.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_stats_says_which_namespaces_it_counts(cli_project, capsys):
    capsys.readouterr()
    assert cli.main(["stats"]) == 0
    assert "counting     billing-api + global (--namespace '*' counts every namespace)" in capsys.readouterr().out
    assert cli.main(["stats", "--namespace", "*"]) == 0
    assert "counting     every namespace" in capsys.readouterr().out



def test_memory_stats_says_which_namespaces_it_counts_in_mcp_words(store):
    store.remember("Invoices are rendered to PDF with gofpdf.")
    text = call(store, "memory_stats")["result"]["content"][0]["text"]
    assert text.splitlines()[0] == 'counting     proj + global (namespace "*" counts every namespace)'


def test_get_of_a_found_and_a_missing_id_prints_the_found_one_and_warns(cli_project, capsys):
    capsys.readouterr()
    assert cli.main(["get", "M1", "M999"]) == 0
    out, err = capsys.readouterr()
    assert "Logging uses logrus" in out and err.startswith("warning: no memory M999 in namespace(s) billing-api")
    assert cli.main(["get", "M999"]) == 1
    assert capsys.readouterr().err.startswith("error: no memory M999")
