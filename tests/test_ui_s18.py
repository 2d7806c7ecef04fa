"""The UI in headless chromium: a search hit shows its calibrated relevance; the graph's links point from source to
target and the labels of linked pairs do not cover each other (fresh.md s17 #17, #18)."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helpers.cdp import Browser, find_chromium
from supermemory.core import MemoryStore
from supermemory.ui.server import UIServer

from conftest import FakeEmbedder

ARTEFACTS = Path(__file__).resolve().parent / "artefacts" / "ui"

# The fresh user's graph: pairs of one change each (the newer supersedes the older), one triple, two other links.
MEMORIES = [
    ("decision", "Use Poetry for dependency management."),
    ("decision", "Switched from Poetry to uv for dependency management."),
    ("gotcha", "pytest-asyncio 0.23 requires the asyncio_mode setting."),
    ("task", "Write integration tests for the refund webhook."),
    ("decision", "We deploy the frontend to Netlify."),
    ("decision", "We no longer deploy the frontend to Netlify; it goes to Cloudflare Pages."),
    ("decision", "Search uses OpenSearch 2.11 for product search."),
    ("decision", "Search was migrated from OpenSearch to Meilisearch in December."),
    ("decision", "OpenSearch was replaced by Meilisearch for product search."),
    ("fact", "DB password is kept in the vault under shop/db."),
    ("task", "Migrate OrderRepository.find_by_customer to the new index."),
    ("decision", "The dev proxy is nginx."),
    ("decision", "nginx was replaced by Caddy."),
    ("decision", "Frontend bundling uses webpack 5."),
]
LINKS = [(1, 0, "supersedes"), (3, 2, "related"), (5, 4, "supersedes"), (7, 6, "supersedes"), (8, 7, "supersedes"),
         (10, 9, "depends-on"), (12, 11, "supersedes")]


@pytest.fixture
def page(db_path, config, tmp_path):
    binary = find_chromium()
    if binary is None:
        pytest.skip("chromium not installed (Debian: apt-get install chromium)")
    store = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="shop")
    ids = [store.remember(text, kind=kind)["id"] for kind, text in MEMORIES]
    for linked in (store.get(i)["memories"][0]["links"] for i in ids):   # remember's own supersedes links go
        for link in linked:
            store.unlink(link["src"], link["dst"], relation=link["relation"])
    for src, dst, relation in LINKS:
        store.link(ids[src], ids[dst], relation=relation)
    server = UIServer(store, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    browser = Browser(binary, tmp_path / "profile", width=1300, height=1000)
    try:
        yield browser, server, store, ids
    finally:
        browser.close()
        server.shutdown()
        server.server_close()
        store.close()


def test_graph_links_point_at_their_target_and_labels_cover_no_other_label_or_node(page):
    b, server, store, ids = page
    b.navigate(server.url + "#/graph")
    assert b.wait_for("document.querySelectorAll('#graph .node').length") == 13
    b.screenshot(ARTEFACTS / "graph-s18.png")
    edges = b.js("""[...document.querySelectorAll('#graph line.edge')].map(l => {
        const title = l.querySelector('title').textContent, [src, , dst] = title.split(' ');
        const ref = (l.getAttribute('marker-end') || '').match(/^url\\(#(.+)\\)$/);
        const at = (id) => document.querySelector(`#graph .node[data-id="${id}"]`).transform.baseVal[0].matrix;
        const s = at(src), d = at(dst), end = [l.x2.baseVal.value, l.y2.baseVal.value];
        return {title, marker: !!(ref && document.getElementById(ref[1])?.tagName === 'marker'),
                toDst: Math.hypot(end[0] - d.e, end[1] - d.f), toSrc: Math.hypot(end[0] - s.e, end[1] - s.f)};
    })""")
    assert sorted(e["title"] for e in edges) == sorted(f"{ids[src]} {rel} {ids[dst]}" for src, dst, rel in LINKS)
    # Each link ends in an arrowhead at its target (a memory's rim), so it points from src to dst.
    undirected = [e for e in edges if not (e["marker"] and e["toDst"] < 15 < e["toSrc"])]

    boxes = b.js("""[...document.querySelectorAll('#graph .node')].map(n => {
        const t = n.querySelector('text').getBoundingClientRect(), c = n.querySelector('circle').getBoundingClientRect();
        return {id: n.dataset.id, text: [t.left, t.top, t.right, t.bottom], dot: [c.left, c.top, c.right, c.bottom]};
    })""")

    def overlap(a, c):
        return max(0, min(a[2], c[2]) - max(a[0], c[0])) * max(0, min(a[3], c[3]) - max(a[1], c[1]))

    clashes = [(x["id"], y["id"], what) for x in boxes for y in boxes if x is not y
               for what, other in (("label", y["text"]), ("node", y["dot"]))
               if (what == "node" or x["id"] < y["id"]) and overlap(x["text"], other) > 4]
    assert (undirected, clashes) == ([], [])

    # A linked pair side by side, as the fresh user's nginx / Caddy pair was drawn: the left one's label goes left.
    placed = b.js("placeLabels([{x: 300, y: 200, width: 170}, {x: 390, y: 202, width: 170}], 1000, 560)")
    assert placed[0]["anchor"] == "end" and placed[1]["anchor"] == "start", placed


def test_search_hits_show_their_relevance_next_to_the_score(page):
    b, server, store, ids = page
    b.navigate(server.url + "#/search?q=webpack")
    b.wait_for("document.querySelectorAll('.hit').length > 0")
    shown = b.js("[...document.querySelectorAll('.hit')].map(h => [h.querySelector('.id').textContent, "
                 "h.querySelector('.relevance') && h.querySelector('.relevance').textContent, "
                 "h.querySelector('header').textContent])")
    found = store.recall("webpack", touch=False)["results"]
    assert [row[0] for row in shown] == [hit["id"] for hit in found]
    for (_id, relevance, header), hit in zip(shown, found):
        assert relevance == f"relevance {hit['relevance']:.2f}", shown
        assert header.index("relevance") < header.index("score"), header   # the figure that counts comes first
    b.screenshot(ARTEFACTS / "search-s18.png")
