"""Namespace isolation, randomized (seeded): ~300 memories over 16 look-alike namespaces (Chinese ones too).

Every memory carries its namespace's marker token plus words shared by all namespaces. From
namespace A, recall / list / get / export / briefing / stats / history never show a row of
namespace B unless B is `global` or the caller asked for `*`, and writes aimed at B's ids
through A fail without touching them. Checked in-process on both vector paths (sqlite-vec
and numpy brute force) and through `supermemory mcp` with SUPERMEMORY_NAMESPACE set.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from helpers.common import McpClient, check_consistency, memory_states
from supermemory.config import GLOBAL_NAMESPACE, KINDS, Config
from supermemory.core import MemoryStore, parse_id
from supermemory.render_briefing import briefing_view
from supermemory.embed import HashProvider
from supermemory.errors import NotFoundError

SEED = 1130
NAMESPACES = ["global", "proj", "proj-2", "proj.2", "ns", "ns_global", "global-2", "alpha", "beta", "team7", "x",
              "zeta-zeta", "客户系统", "支付网关", "café", "cafe"]   # the last two are one token in FTS (diacritics off)
SHARED = ["cache", "build", "deploy", "index", "schema", "token", "server", "client", "queue", "config"]


def marker(ns: str) -> str:
    return "mk" + "".join(chr(97 + (NAMESPACES.index(ns) * 7 + i) % 26) for i in range(5)) + "q"


def _populate(store: MemoryStore, rng: random.Random, count: int = 300) -> dict[str, set[int]]:
    """Memories spread over every namespace; some revised, some forgotten. Returns the live ids per namespace."""
    live: dict[str, set[int]] = {ns: set() for ns in NAMESPACES}
    for n in range(count):
        ns = NAMESPACES[n % len(NAMESPACES)] if n < len(NAMESPACES) else rng.choice(NAMESPACES)
        words = " ".join(rng.choice(SHARED) for _ in range(8))
        kind = rng.choice([k for k in KINDS if k != "session"])
        result = store.remember(f"{marker(ns)} note {n} about {words}", kind=kind, namespace=ns, create_namespace=True,
                                pinned=rng.random() < 0.1, title=f"{marker(ns)} {rng.choice(SHARED)} {n}")
        assert result["status"] == "created" and result["namespace"] == ns
        live[ns].add(parse_id(result["id"]))
    for ns in NAMESPACES:
        ids = sorted(live[ns])
        for memory_id in rng.sample(ids, min(2, len(ids) - 1)):
            new = parse_id(store.update(memory_id, content=f"{marker(ns)} revised {memory_id} {rng.choice(SHARED)}",
                                        namespace=ns)["id"])
            live[ns].discard(memory_id)
            live[ns].add(new)
        victim = rng.choice(sorted(live[ns]))
        store.forget([victim], namespace=ns)
        live[ns].discard(victim)
    return live


def _allowed(ns: str) -> set[str]:
    return {ns, GLOBAL_NAMESPACE}


def _check_reads_from(store: MemoryStore, ns: str, live: dict[str, set[int]], states: dict[int, tuple],
                      tmp_path: Path) -> int:
    """Every read from `ns`; returns how many were checked."""
    allowed, checks = _allowed(ns), 0
    visible = set().union(*(live[n] for n in allowed))
    # recall: shared words, each other namespace's marker, and a positive control
    for query in [" ".join(SHARED[:4])] + [marker(b) for b in NAMESPACES]:
        found = store.recall(query, namespace=ns, limit=100, min_similarity=0, relative_cutoff=0, touch=False)
        names = {r["namespace"] for r in found["results"]}
        assert names <= allowed, (ns, query, names - allowed)
        assert {parse_id(r["id"]) for r in found["results"]} <= visible
        checks += 1
    own = store.recall(marker(ns), namespace=ns, limit=100, touch=False)
    assert {parse_id(r["id"]) for r in own["results"]} & live[ns], f"recall in {ns} cannot find its own marker"
    # list: exactly the live rows of ns (+ global)
    listed = store.list(namespace=ns, limit=1000)
    assert {parse_id(i["id"]) for i in listed["items"]} == visible and listed["total"] == len(visible)
    # get: ns and global rows (current and superseded, not deleted) are found, everything else is missing
    every = sorted(states)
    found_ids = set()
    for start in range(0, len(every), 100):
        got = store.get(every[start:start + 100], namespace=ns)
        assert {m["namespace"] for m in got["memories"]} <= allowed
        found_ids |= {parse_id(m["id"]) for m in got["memories"]}
    assert found_ids == {i for i, row in states.items() if row[0] in allowed and row[3] is None}
    # export of ns alone holds ns alone (head, history, links)
    target = tmp_path / f"export-{ns}.jsonl"
    result = store.export(target, namespaces=[ns])
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert result["memories"] == len(lines)
    assert all(line["namespace"] == ns and all(h["namespace"] == ns for h in line["history"]) for line in lines)
    assert {parse_id(line["id"]) for line in lines if line["deleted_at"] is None} == live[ns]
    # briefing and stats
    briefing = briefing_view(store.briefing(namespace=ns, max_tokens=100_000))
    shown = {parse_id(i) for items in briefing["items"].values() for i in items}
    assert shown <= visible, (ns, shown - visible)
    assert store.stats(namespace=ns)["memories"] == len(visible)
    return checks + 5


def _check_writes_through(store: MemoryStore, ns: str, live: dict[str, set[int]], db_path: Path,
                          vectors: str) -> int:
    """Revising, forgetting, linking or reading the history of another namespace's ids from `ns` fails."""
    before = memory_states(db_path, vectors)
    mine = sorted(live[ns])[0]
    attempts = 0
    for other in NAMESPACES:
        if other in _allowed(ns) or not live[other]:
            continue
        theirs = sorted(live[other])[0]
        for attempt in (lambda: store.update(theirs, content="hijacked", namespace=ns),
                        lambda: store.forget([theirs], namespace=ns),
                        lambda: store.forget([theirs], namespace=ns, hard=True),
                        lambda: store.link(mine, theirs, namespace=ns),
                        lambda: store.history(theirs, namespace=ns)):
            with pytest.raises(NotFoundError):
                attempt()
            attempts += 1
    assert memory_states(db_path, vectors) == before
    return attempts


@pytest.mark.parametrize("vectors", ["auto", "numpy"])
def test_reads_and_writes_never_cross_namespaces(tmp_path, vectors):
    rng = random.Random(SEED)
    home = tmp_path / "home"
    db_path = home / "memory.db"
    store = MemoryStore(db_path, config=Config(home=home), embedder=HashProvider(), namespace="proj",
                        vectors=vectors)
    try:
        live = _populate(store, rng)
        states = memory_states(db_path, vectors)
        checks = sum(_check_reads_from(store, ns, live, states, tmp_path) for ns in NAMESPACES)
        checks += sum(_check_writes_through(store, ns, live, db_path, vectors)
                      for ns in NAMESPACES if ns != GLOBAL_NAMESPACE)
        # `*` reads everything
        for ns in NAMESPACES:
            found = store.recall(marker(ns), namespace="*", limit=100, touch=False)
            assert {parse_id(r["id"]) for r in found["results"]} & live[ns]
        assert store.list(namespace="*", limit=1000)["total"] == sum(len(v) for v in live.values())
        # the store's own default namespace is isolated the same way
        with MemoryStore(db_path, config=Config(home=home), embedder=HashProvider(), namespace="proj-2",
                         vectors=vectors) as other:
            assert {r["namespace"] for r in other.recall(marker("proj"), limit=100, touch=False)["results"]} \
                <= _allowed("proj-2")
            assert {parse_id(i["id"]) for i in other.list(limit=1000)["items"]} == live["proj-2"] | live["global"]
    finally:
        store.close()
    check_consistency(db_path, vectors=vectors)
    print(f"isolation[{vectors}]: {len(NAMESPACES)} namespaces, {len(states)} rows, {checks} checks")


def test_the_mcp_server_keeps_to_supermemory_namespace(tmp_path):
    rng = random.Random(SEED + 1)
    home = tmp_path / "home"
    db_path = home / "memory.db"
    with MemoryStore(db_path, config=Config(home=home), embedder=HashProvider(), namespace="proj") as store:
        live = _populate(store, rng, count=150)
    project = tmp_path / "unrelated-project"
    project.mkdir()
    checked = []
    for ns in rng.sample([n for n in NAMESPACES if n != GLOBAL_NAMESPACE], 3):
        allowed = _allowed(ns)
        visible = live[ns] | live[GLOBAL_NAMESPACE]
        client = McpClient(home, project, SUPERMEMORY_NAMESPACE=ns)
        try:
            client.initialize()
            for other in NAMESPACES:
                result = client.tool("memory_recall", {"query": marker(other), "limit": 100, "min_similarity": 0,
                                                       "relative_cutoff": 0})
                assert result["isError"] is False
                names = {r["namespace"] for r in result["structuredContent"]["results"]}
                assert names <= allowed, (ns, other, names)
            listed, offset = set(), 0
            while True:
                page = client.tool("memory_list", {"limit": 20, "offset": offset})["structuredContent"]
                assert {i["namespace"] for i in page["memories"]} <= allowed
                listed |= {parse_id(i["id"]) for i in page["memories"]}
                offset += len(page["memories"])
                if offset >= page["total"] or not page["memories"]:
                    break
            assert listed == visible
            foreign = sorted(i for n in NAMESPACES if n not in allowed for i in live[n])[:100]
            got = client.tool("memory_get", {"ids": [f"M{i}" for i in foreign]})["structuredContent"]
            assert got["memories"] == [] and len(got["missing"]) == len(foreign)
            hijack = client.tool("memory_update", {"id": f"M{foreign[0]}", "content": "hijacked"})
            assert hijack["isError"] is True
            everything = client.tool("memory_recall", {"query": marker("beta" if ns != "beta" else "alpha"),
                                                       "namespace": "*", "limit": 100})["structuredContent"]
            assert {r["namespace"] for r in everything["results"]} - allowed
            stored = client.tool("memory_remember", {"content": f"written through the server in {ns}"})
            assert stored["structuredContent"]["namespace"] == ns
            code, err = client.close()
            assert code == 0, err
        finally:
            client.kill()
        checked.append(ns)
    states = memory_states(db_path)
    assert not [i for i, row in states.items() if row[4] == "hijacked"]
    check_consistency(db_path)
    print(f"isolation over MCP: SUPERMEMORY_NAMESPACE in {checked}")
