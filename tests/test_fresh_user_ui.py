"""What a fresh-user run of `supermemory ui` in headless chromium found: editing, errors, diffs, layout, slow pages.

Each test drives the page like a user (one chromium for the module, a server per test) and checks the
store afterwards. Skipped when chromium is missing on a developer machine; a failure in CI (`CI` set).
"""
from __future__ import annotations

import json
import os
import re
import threading

import pytest

from helpers.cdp import Browser, find_chromium
from supermemory.core import MemoryStore
from supermemory.ui import api, diff
from supermemory.ui.server import UIServer

from conftest import FakeEmbedder

LISTED = 50   # the contradicts links `MemoryStore.health` lists (its max_pairs); it counts them all


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    binary = find_chromium()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: .ci/run must `apt-get install chromium` for the browser tests")
        pytest.skip("chromium not installed (Debian: apt-get install chromium)")
    b = Browser(binary, tmp_path_factory.mktemp("profile"))
    yield b
    b.close()


@pytest.fixture
def ui(db_path, config):
    store = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="shop")
    server = UIServer(store, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield store, server
    server.shutdown()
    server.server_close()
    store.close()


def _open(b: Browser, server: UIServer, page: str, ready: str) -> None:
    b.navigate(server.url + page)
    b.wait_for(ready, timeout=10)


def _edit(b: Browser, fields: dict) -> None:
    """Open the editor, set the given fields as a user typing would, press Save."""
    sets = "".join(f"document.querySelector('#editor [name={name}]').value = {json.dumps(value)};"
                   for name, value in fields.items())
    b.js("document.getElementById('edit').click();" + sets + "document.getElementById('save').click()")


def test_editing_the_text_of_an_untitled_memory_gives_the_new_version_a_title_from_the_new_text(browser, ui):
    store, server = ui
    old = store.remember("The billing service talks to the Postgres 9.6 cluster.", kind="fact")["id"]
    _open(browser, server, f"#/memory/{old}", "document.getElementById('memory-body')")
    _edit(browser, {"content": "Billing now runs on Postgres 16 behind pgbouncer."})
    new = browser.wait_for(f"!location.hash.endsWith('/{old}') && document.getElementById('memory-body') "
                           "&& location.hash.split('/').pop()", timeout=10)
    title = store.get(new)["memories"][0]["title"]
    assert "Postgres 16" in title, title
    # the page may be between two renders of the new version: wait for its title, do not read it once
    assert browser.wait_for("(document.getElementById('memory-title') || {}).textContent", timeout=10) == title


def test_an_explicit_title_stays_when_only_the_text_is_edited(browser, ui):
    store, server = ui
    old = store.remember("Deploys go out on Tuesdays.", kind="fact", title="Deploy day")["id"]
    _open(browser, server, f"#/memory/{old}", "document.getElementById('memory-body')")
    _edit(browser, {"content": "Deploys go out on Wednesdays since March."})
    new = browser.wait_for(f"!location.hash.endsWith('/{old}') && document.getElementById('memory-body') "
                           "&& location.hash.split('/').pop()", timeout=10)
    memory = store.get(new)["memories"][0]
    assert (memory["title"], memory["body"]) == ("Deploy day", "Deploys go out on Wednesdays since March.")


def test_an_emptied_importance_field_leaves_the_importance_as_it_was(browser, ui):
    store, server = ui
    old = store.remember("Always run the linters before committing.", kind="preference", importance=0.9)["id"]
    _open(browser, server, f"#/memory/{old}", "document.getElementById('memory-body')")
    _edit(browser, {"importance": "", "content": "Always run `make lint` before committing."})
    new = browser.wait_for(f"!location.hash.endsWith('/{old}') && document.getElementById('memory-body') "
                           "&& location.hash.split('/').pop()", timeout=10)
    assert store.get(new)["memories"][0]["importance"] == 0.9


def test_saving_without_a_change_says_so_and_writes_no_version(browser, ui):
    store, server = ui
    old = store.remember("Four queue workers run per host.", kind="fact")["id"]
    _open(browser, server, f"#/memory/{old}", "document.getElementById('memory-body')")
    _edit(browser, {})
    note = browser.wait_for("document.getElementById('edit-note') && document.getElementById('edit-note').textContent",
                            timeout=10)
    assert "nothing changed" in note.lower()
    assert len(store.history(old)["versions"]) == 1
    assert browser.js("location.hash") == f"#/memory/{old}"


def test_a_bad_filter_value_is_named_under_the_filters_which_stay_to_correct_it(browser, ui):
    store, server = ui
    store.remember("Production deploys happen on Tuesdays.", kind="fact")
    _open(browser, server, "#/memories?since=garbage", "document.querySelector('#view .error')")
    assert "garbage" in browser.js("document.querySelector('#view .error').textContent")
    assert browser.js("document.querySelector('.filters input[name=since]').value") == "garbage"
    browser.js("document.querySelector('.filters input[name=since]').value = '7d';"
               "document.querySelector('.filters button[type=submit]').click()")
    assert browser.wait_for("document.querySelectorAll('#memory-list tbody tr').length", timeout=10) == 1
    assert browser.js("document.querySelector('#view .error')") is None


def test_a_stopped_server_is_named_as_such_and_the_search_form_stays(browser, ui):
    store, server = ui
    store.remember("The job queue runs 4 workers.", kind="fact")
    _open(browser, server, "#/memories", "document.querySelectorAll('#memory-list tbody tr').length")
    server.shutdown()
    server.server_close()
    browser.js("location.hash = '#/search?q=queue'")
    message = browser.wait_for("document.querySelector('#view .error') && "
                               "document.querySelector('#view .error').textContent", timeout=10)
    assert "supermemory ui" in message and "Failed to fetch" not in message, message
    assert browser.js("document.querySelector('input[name=q]').value") == "queue"


def test_a_few_words_changed_in_a_long_paragraph_are_marked_as_those_words():
    # Found in the page: a 69 KB one-paragraph memory with 20 words changed per version showed, for
    # every version, the whole text struck out and the whole new text added (long texts were diffed
    # line by line, and it was one line), a 440 000-pixel history where the change could not be found.
    words = [f"w{i % 97}" for i in range(12000)]
    before = " ".join(words)
    words[100], words[6000], words[11990] = "alpha", "beta", "gamma"
    after = " ".join(words)
    result = diff.text_diff(before, after)
    assert "".join(t for op, t in result if op != "+") == before
    assert "".join(t for op, t in result if op != "-") == after
    assert [piece for piece in result if piece[0] != "="] == [["-", "w3"], ["+", "alpha"], ["-", "w83"], ["+", "beta"],
                                                              ["-", "w59"], ["+", "gamma"]]


def test_one_word_changed_in_one_line_of_a_long_text_is_marked_as_that_word():
    lines = [f"step {i}: the worker {i % 13} finished its batch without errors\n" for i in range(600)]
    before = "".join(lines)
    lines[300] = lines[300].replace("without", "with")
    result = diff.text_diff(before, "".join(lines))
    assert [piece for piece in result if piece[0] != "="] == [["-", "without"], ["+", "with"]]


def test_the_history_of_a_long_memory_shows_the_changed_words_with_a_little_context(browser, ui):
    # Found in the page: each version of a 69 KB memory repeated all 69 KB of unchanged text around
    # its changes, so the history of 30 versions was 226 000 pixels tall.
    store, server = ui
    words = [f"w{i % 97}" for i in range(12000)]
    old = store.remember(" ".join(words), kind="note", title="A long build log")["id"]
    words[6000] = "CHANGED"
    new = store.update(old, content=" ".join(words))["id"]
    _open(browser, server, f"#/memory/{new}", "document.querySelector('#history .change .diff')")
    shown = browser.js("document.querySelector('#history .change .diff').textContent")
    assert "CHANGED" in shown and "w83" in shown
    assert len(shown) < 2000, len(shown)
    full = browser.js("document.querySelector('#history .vtext pre').textContent")
    assert full == " ".join(words), "the whole text of each version stays one click away"


def test_an_empty_store_says_how_memories_get_there_and_an_empty_filter_says_it_is_the_filter(browser, ui):
    store, server = ui
    _open(browser, server, "#/memories", "document.getElementById('list-summary').textContent")
    assert "No memories yet" in browser.js("document.getElementById('list-summary').textContent")
    assert browser.js("document.getElementById('memory-list').hidden")
    store.remember("Deploys go out on Tuesdays.", kind="fact")
    browser.js("location.hash = '#/memories?kind=task'")
    assert "match these filters" in browser.wait_for(
        "location.hash.includes('kind=task') && document.getElementById('list-summary').textContent", timeout=10)


def test_a_long_unbroken_title_or_tag_wraps_instead_of_pushing_the_page_sideways(browser, ui):
    # Found in the page: a title made of one 300-character path pushed the list to 2 461 px, the
    # namespace, age and recall columns off screen; the memory page to 3 604 px.
    store, server = ui
    mid = store.remember("/srv/app/" + "module/" * 80 + "handler.py raises on empty input", kind="gotcha",
                         title="averyveryverylongunbrokentitle_" * 10, tags=["tag-" + "y" * 150])["id"]
    _open(browser, server, "#/memories", "document.querySelectorAll('#memory-list tbody tr').length")
    width = browser.js("window.innerWidth")
    assert browser.js("document.documentElement.scrollWidth") <= width
    assert browser.js("document.querySelector('#memory-list tbody td.ns-cell').getBoundingClientRect().right") <= width
    browser.js(f"location.hash = '#/memory/{mid}'")
    browser.wait_for("document.getElementById('memory-title')", timeout=10)
    assert browser.js("document.documentElement.scrollWidth") <= width


GRAPH_OF = """(() => {
  const nodes = [], edges = [];
  for (let i = 0; i < %d; i++) nodes.push({ id: "M" + i });
  for (let i = 0; i < %d; i++) edges.push({ src: "M" + ((i * 7919) %% %d), dst: "M" + ((i * 104729 + 1) %% %d) });
  const hypot = Math.hypot;
  let distances = 0;   // the layout measures one distance per pair of nodes it compares
  Math.hypot = (...args) => { distances += 1; return hypot(...args); };
  let pos;
  try { pos = layout(nodes, edges, 1000, 560); } finally { Math.hypot = hypot; }
  const xs = [...pos.values()].map((p) => p.x), ys = [...pos.values()].map((p) => p.y);
  return { distances, x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys),
           finite: xs.concat(ys).every(Number.isFinite) };
})()"""


def test_the_graph_of_a_thousand_memories_is_laid_out_without_freezing_the_page(browser, ui):
    # Found in the page: 500 links among 977 memories (the most the page asks for) froze the tab for
    # 7.5 s in the layout, which compared every pair of nodes in each of its 400 steps (600 nodes:
    # 72 million distances); now only nodes in neighbouring cells are compared.
    store, server = ui
    _open(browser, server, "#/graph", "document.querySelector('#view h1')")
    small = browser.js(GRAPH_OF % (100, 60, 100, 100))
    big = browser.js(GRAPH_OF % (600, 300, 600, 600))
    for result in (small, big):
        assert result["finite"] and 0 <= result["x0"] and result["x1"] <= 1000 and 0 <= result["y0"] and result["y1"] <= 560
        assert result["x1"] - result["x0"] > 400 and result["y1"] - result["y0"] > 300, "spread over the picture"
    assert big["distances"] < 15_000_000, big["distances"]


def test_a_slow_page_left_before_it_answered_never_overwrites_the_page_opened_since(browser, ui, monkeypatch):
    # Found in the page: Health on a 20 000-memory store answers after 12 s; a user who went to
    # Memories meanwhile saw the list replaced by "Cannot read properties of null (reading 'remove')".
    store, server = ui
    store.remember("Deploys go out on Tuesdays.", kind="fact")
    entered, release = threading.Event(), threading.Event()
    health = api.GET["/api/health"]

    def slow_health(store_, params):
        entered.set()
        release.wait(10)
        return health(store_, params)

    monkeypatch.setitem(api.GET, "/api/health", slow_health)
    _open(browser, server, "#/memories", "document.querySelectorAll('#memory-list tbody tr').length")
    browser.js("location.hash = '#/health'")
    assert entered.wait(10)
    browser.js("location.hash = '#/memories'")
    release.set()
    browser.wait_for("document.querySelectorAll('#memory-list tbody tr').length && "
                     "performance.getEntriesByType('resource').some((e) => e.name.includes('/api/health'))", timeout=10)
    # let the health answer's own code run to its end (a few turns of the page's event loop, no timer)
    browser.js("(async () => { for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0)); })()")
    assert browser.js("document.querySelectorAll('#view .error').length") == 0
    assert browser.js("document.querySelectorAll('#memory-list tbody tr').length") == 1
    assert browser.js("document.getElementById('health-cards')") is None


def test_the_chosen_namespace_survives_a_reload_of_the_page(browser, ui):
    # Found in the page: after choosing a project and pressing F5 the list showed every namespace
    # again (the choice lived only in the script), under the same filters and address.
    store, server = ui
    store.remember("Deploys go out on Tuesdays.", kind="fact")
    store.remember("Invoices are sent on the 1st.", kind="fact", namespace="billing", create_namespace=True)
    # The page opens on the project it runs in ("shop"), not on every project's memories (fu23 D8).
    _open(browser, server, "#/memories", "document.querySelectorAll('#memory-list tbody tr').length === 1")
    assert browser.js("document.getElementById('namespace').value") == "shop"
    browser.js("(() => { const s = document.getElementById('namespace'); s.value = '*';"
               " s.dispatchEvent(new Event('change')); })()")
    browser.wait_for("document.querySelectorAll('#memory-list tbody tr').length === 2", timeout=10)
    browser.js("(() => { const s = document.getElementById('namespace'); s.value = 'billing';"
               " s.dispatchEvent(new Event('change')); })()")
    browser.wait_for("[...document.querySelectorAll('.ns-cell')].map((c) => c.textContent).join() === 'billing'",
                     timeout=10)
    browser.navigate("about:blank")
    _open(browser, server, "#/memories", "document.querySelectorAll('#memory-list tbody tr').length")
    assert browser.js("document.getElementById('namespace').value") == "billing"
    assert browser.js("[...document.querySelectorAll('.ns-cell')].map((c) => c.textContent)") == ["billing"]


def test_a_memory_in_the_graph_can_be_reached_and_opened_with_the_keyboard(browser, ui):
    # Found in the page: the graph's nodes took clicks only; Tab skipped them all.
    store, server = ui
    a = store.remember("The job queue runs 4 workers.", kind="fact")["id"]
    b = store.remember("Use SQLite with WAL for the job queue.", kind="decision")["id"]
    store.link(a, b, relation="depends-on")
    _open(browser, server, "#/graph", "document.querySelectorAll('#graph .node').length === 2")
    browser.js("document.getElementById('zoom-in').focus()")
    for _ in range(3):   # zoom-out, reset, then the first node
        browser.call("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Tab", "code": "Tab",
                                                "windowsVirtualKeyCode": 9}, session=True)
    focused = browser.js("document.activeElement.dataset.id || document.activeElement.tagName")
    assert focused in (a, b), focused
    browser.call("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Enter", "code": "Enter",
                                            "windowsVirtualKeyCode": 13}, session=True)
    browser.wait_for(f"location.hash === '#/memory/{focused}' && document.getElementById('memory-body')", timeout=10)


def test_editing_the_text_keeps_a_tag_that_holds_a_comma(browser, ui):
    # Found while fixing the editor: the tags field is split on commas, so any save split an agent's
    # tag "db,staging" into two tags even when the user had only edited the text.
    store, server = ui
    old = store.remember("Staging Postgres listens on 5433.", kind="fact", tags=["db,staging", "ports"])["id"]
    _open(browser, server, f"#/memory/{old}", "document.getElementById('memory-body')")
    _edit(browser, {"content": "Staging Postgres listens on 5434 since the move."})
    new = browser.wait_for(f"!location.hash.endsWith('/{old}') && document.getElementById('memory-body') "
                           "&& location.hash.split('/').pop()", timeout=10)
    assert store.get(new)["memories"][0]["tags"] == ["db,staging", "ports"]


def test_a_graph_cut_at_the_page_limit_says_how_many_links_it_left_out(browser, ui):
    # Found on a 20k-memory store: the page drew the 500 links the server sends and said "… with 500 typed
    # links", while the store held 40,000.
    store, server = ui
    ids = [store.remember(f"service number {i} talks to the queue", kind="fact")["id"] for i in range(24)]
    for a in ids:
        for b in ids:
            if a != b:
                store.link(a, b, relation="related")
    _open(browser, server, "#/graph", "document.getElementById('graph-note')")
    note = browser.js("document.getElementById('graph-note').textContent")
    assert "Showing the 500 newest of 552 typed links (24 memories); open a memory to see its own links." in note, note
    assert browser.js("document.querySelectorAll('#graph line.edge').length") == 500


def test_the_health_page_counts_every_contradiction_and_tells_pending_vectors_from_orphans(browser, ui):
    # Found on a 20k-memory store with a 1 MB memory: the page listed all 8,044 contradicts links and
    # showed "orphans live_chunks_without_vector 1424" for vectors that come later by design.
    store, server = ui
    store.config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0,
                                                         write_embed_chunks=1)
    long_one = store.remember("\n\n".join(f"Worker {i} retries the job after a backoff of {i} seconds." for i in range(8)))
    ids = [store.remember(f"service {i} owns the queue")["id"] for i in range(9)]
    for a, b in [(a, b) for a in ids for b in ids if a != b][:LISTED + 5]:
        store.link(a, b, relation="contradicts")
    _open(browser, server, "#/health", "document.querySelectorAll('#health-cards .card').length")
    text = browser.js("document.getElementById('view').textContent")
    assert f"Contradicts links ({LISTED + 5}; the first {LISTED} listed)" in text
    assert browser.js("document.querySelectorAll('#view ul.links li').length") == LISTED
    facts = browser.js("document.querySelector('#view .facts').textContent")
    assert "vectors pending" in facts and f"{long_one['vectors_pending']} chunks of long texts" in facts, facts
    assert re.search(r"orphans\s*none", facts) and "live_chunks_without_vector" not in facts


def test_a_broad_question_lists_its_memories_without_figures_instead_of_an_error(browser, ui):
    # fu24 D9: "gotchas", "what's still open" answer with a listing whose hits carry no score, attention or
    # relevance (null); the page called null.toFixed and showed only "Cannot read properties of null".
    store, server = ui
    gotcha = store.remember("tests/fixtures/api/*.json are generated by `make fixtures`; hand edits are overwritten.",
                            kind="gotcha", title="The fixtures folder is generated")["id"]
    store.remember("Production deploys happen on Tuesdays at 10:00 UTC.", kind="fact")
    store.remember("Rotate the staging API keys before the audit.", kind="task")
    found = api.search(store, {"q": "gotchas"})
    assert [r["id"] for r in found["results"]] == [gotcha] and found["results"][0]["score"] is None
    for query, expected in (("gotchas", "The fixtures folder is generated"),
                            ("what's still open", "Rotate the staging API keys before the audit.")):
        if query == "gotchas":
            _open(browser, server, "#/search?q=gotchas", "document.querySelector('#results, #view .error')")
        else:   # the same page again: only the hash changes
            browser.js(f"location.hash = '#/search?q=' + encodeURIComponent({json.dumps(query)})")
            browser.wait_for("document.querySelector('#results .hit a.mlink, #view .error') && "
                             "!document.querySelector('#results .hit a.mlink[href$=\"%s\"]')" % gotcha, timeout=10)
        assert browser.js("document.querySelector('#view .error')") is None, \
            browser.js("document.querySelector('#view .error').textContent")
        assert browser.js("[...document.querySelectorAll('.hit a.mlink')].map(a => a.textContent)") == [expected]
        figures = browser.js("document.querySelector('.hit .figures').textContent")
        assert "listed" in figures and "null" not in figures and "NaN" not in figures, figures
