"""Bench: the first page of `supermemory ui`'s memories list on a large store, over real HTTP.

    python bench/ui_bench.py                       # 100k memories in a temp folder, 30 requests per case
    python bench/ui_bench.py --n 100000 --db /tmp/ui100k.db --repeat 50   # keep (and reuse) the store

Seeds with `MemoryStore.remember_many` and the offline hash embedder (no model), 5 namespaces and
every kind, then times GET /api/memories (the page's first request, counted total included) against
a `UIServer` on 127.0.0.1, plus a filtered first page and a page deep in the cursor chain. Reports the
median and p95 in ms; the target is a first page under 300 ms (issue 17).
"""
from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from supermemory.config import KINDS, Config  # noqa: E402
from supermemory.core import MemoryStore  # noqa: E402
from supermemory.embed import HashProvider  # noqa: E402
from supermemory.stats import percentile  # noqa: E402
from supermemory.ui.server import UIServer  # noqa: E402

WORDS = ("cache", "build", "deploy", "sqlite", "index", "vector", "lock", "writer", "reader", "schema", "migration",
         "token", "budget", "ranking", "namespace", "session", "hook", "server", "client", "queue", "postgres",
         "port", "release", "branch", "linter", "fixture", "worker", "latency", "timeout", "retry")
TARGET_MS = 300.0


def seed(store: MemoryStore, n: int, batch: int = 5000) -> float:
    started = time.perf_counter()
    have = store.stats(namespace="*")["memories"]
    kinds = [k for k in KINDS if k != "session"]
    for start in range(have, n, batch):
        items = []
        for i in range(start, min(n, start + batch)):
            words = " ".join(WORDS[(i * 7 + j * 13) % len(WORDS)] for j in range(14))
            items.append({"content": f"memory {i}: {words} (case {i % 97})", "kind": kinds[i % len(kinds)],
                          "namespace": f"project-{i % 5}", "tags": [WORDS[i % len(WORDS)]]})
        store.remember_many(items, create_namespace=True)
        print(f"  seeded {min(n, start + batch)}/{n}", file=sys.stderr, flush=True)
    return time.perf_counter() - started


def timed(port: int, token: str, path: str, repeat: int) -> tuple[list[float], dict]:
    times, last = [], {}
    for _ in range(repeat):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        started = time.perf_counter()
        conn.request("GET", path, headers={"X-Supermemory-Token": token})
        response = conn.getresponse()
        body = response.read()
        times.append((time.perf_counter() - started) * 1000)
        conn.close()
        assert response.status == 200, body[:300]
        last = json.loads(body)
    return times, last


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="memories in the store")
    parser.add_argument("--db", help="database file to create or reuse (default: a temp folder)")
    parser.add_argument("--repeat", type=int, default=30, help="requests per case")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    folder = Path(args.db).parent if args.db else Path(tempfile.mkdtemp(prefix="ui-bench-"))
    db = Path(args.db) if args.db else folder / "memory.db"
    store = MemoryStore(db, config=Config(home=folder), embedder=HashProvider(), namespace="project-0")
    seconds = seed(store, args.n)
    total = store.stats(namespace="*")["memories"]
    server = UIServer(store, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        timed(server.port, server.token, "/api/memories?limit=50", 3)   # warm the page cache once
        cases = {"first page (all namespaces, total counted)": "/api/memories?limit=50",
                 "first page, kind=task in project-3": "/api/memories?limit=50&kind=task&namespace=project-3",
                 "first page, tag=postgres": "/api/memories?limit=50&tag=postgres"}
        results = {}
        for label, path in cases.items():
            times, page = timed(server.port, server.token, path, args.repeat)
            results[label] = {"median_ms": round(statistics.median(times), 1), "p95_ms": percentile(times, 95, digits=1),
                              "total": page["total"]}
        _, page = timed(server.port, server.token, "/api/memories?limit=50", 1)
        cursor = page["next_cursor"]
        deep = 1
        while deep < 200 and page["next_cursor"]:   # up to 200 pages in: 10k rows deep
            previous = cursor
            _, page = timed(server.port, server.token, f"/api/memories?limit=50&cursor={quote(cursor)}", 1)
            cursor, deep = page["next_cursor"] or previous, deep + 1
        times, _ = timed(server.port, server.token, f"/api/memories?limit=50&cursor={quote(cursor)}", args.repeat)
        results[f"page {deep} by cursor ({deep * 50} rows deep)"] = {"median_ms": round(statistics.median(times), 1),
                                                         "p95_ms": percentile(times, 95, digits=1), "total": None}
    finally:
        server.shutdown()
        server.server_close()
        store.close()
    first = results["first page (all namespaces, total counted)"]["median_ms"]
    report = {"memories": total, "seed_seconds": round(seconds, 1), "repeat": args.repeat, "cases": results,
              "target_ms": TARGET_MS, "ok": first < TARGET_MS}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{total} memories (seeding took {seconds:.1f} s), {args.repeat} requests per case")
        for label, figures in results.items():
            print(f"  {label:45s} median {figures['median_ms']:7.1f} ms   p95 {figures['p95_ms']:7.1f} ms")
        print(f"first page median {first:.1f} ms: {'OK' if first < TARGET_MS else 'OVER'} the {TARGET_MS:.0f} ms target")
    return 0 if first < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
