"""Interleaved A/B of warm recall latency at 10k memories: two source trees, one store, the same queries.

Why: `supermemory bench --perf` gives one tree's figures, and on a shared 2-core machine two such runs
taken minutes apart differ by more than a ranking change costs. To show a change is "no slower than
before", this runs both trees against the same store in alternating order (AB, BA, AB, ...), so drift
in the machine's load falls on both sides alike, and reports the ratio B/A.

    git worktree add /tmp/sm-base HEAD~1          # side A: the tree before the change
    python bench/ab_recall.py --a /tmp/sm-base --b .   [--n 10000] [--others 0] [--rounds 7] [--queries 200]
                                                       [--store DIR] [--json]

The store is built once with B's `supermemory.bench.perf.build_store` (generated text, synthetic unit vectors;
`--store DIR` keeps it and reuses it on the next run); give the older tree as B when the newer one has migrations it
lacks (a tree refuses a store a newer schema extended; the newer one migrates its copy), and read the ratio
inverted. Every run is a subprocess with PYTHONPATH at its side's tree that opens a fresh copy of the store exactly
as `run_perf` measures "warm_recall_ms" (after filling in what a server fills at its idle turns): the synthetic
embedder (no model, no network), `cache_vectors=True`, the first `WARMUP` queries asked once untimed, then each
query timed with `recall(q, touch=False)`. The query list (B's `fake_query`, seeded) is the same on both sides. Settings are each tree's defaults.

Report per side: the median of the per-round medians and of the per-round p95s; the ratio of B's to
A's median, each round's ratio and their median (the paired, steadier figure); `results same`: both
sides returned the same ids for every query (expected for an A/A run; a ranking change may differ).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WARMUP = 5
NAMESPACE = "perf"
QUERY_SEED = 7


def worker(home: str, queries_file: str) -> None:
    """One timed run on this process's tree (PYTHONPATH): prints the run's p50/p95 as one JSON line."""
    import time

    import supermemory
    from supermemory.bench.perf import _summary, synthetic_embedder
    from supermemory.config import Config
    from supermemory.core import MemoryStore

    queries = json.loads(Path(queries_file).read_text())
    config = Config(home=Path(home), explicit_namespace=NAMESPACE)
    store = MemoryStore(config.db_path, config=config, embedder=synthetic_embedder(), namespace=NAMESPACE,
                        cache_vectors=True)   # as the MCP server runs it
    # What a server fills in at its idle turns (a tree that keeps sentence windows embeds those of its copy here,
    # untimed); a tree from before `fill_vectors` has nothing to fill.
    getattr(store, "fill_vectors", lambda: None)()
    for q in queries[:WARMUP]:
        store.recall(q, touch=False)
    timings, digest = [], hashlib.sha1()
    for q in queries:
        t = time.perf_counter()
        page = store.recall(q, touch=False)
        timings.append((time.perf_counter() - t) * 1000)
        digest.update(json.dumps([r["id"] for r in page["results"]]).encode())
    store.close()
    print(json.dumps({**_summary(timings), "results": digest.hexdigest()[:12],
                      "package": str(Path(supermemory.__file__).parent)}))


def run_side(tree: Path, store_home: Path, queries_file: Path, scratch: Path) -> dict:
    """Copy the store, time one run of `tree` on the copy in a subprocess, return its figures."""
    home = scratch / "home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    for f in store_home.glob("memory.db*"):
        shutil.copy2(f, home / f.name)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(home), str(queries_file)]
    out = subprocess.run(command, env=env, cwd=scratch, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise SystemExit(f"run on {tree} failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if Path(result["package"]) != tree / "supermemory":
        raise SystemExit(f"the run meant for {tree} imported {result['package']}")
    return result


def ensure_store(home: Path, n: int, others: int = 0) -> None:
    """Build the `n`-memory store in `home` with the driver's tree (B) unless one of that size is there; `others`
    more memories go to another namespace (a user with several projects: recall then reads the statistics of
    its own namespaces, not the FTS vocabulary's)."""
    from supermemory.bench.perf import build_store
    from supermemory.config import Config

    marker = home / "ab_recall.json"
    shape = {"n": n, "others": others}
    if marker.exists() and {"others": 0, **json.loads(marker.read_text())} == shape and (home / "memory.db").exists():
        return
    home.mkdir(parents=True, exist_ok=True)
    for f in home.glob("memory.db*"):
        f.unlink()
    sys.stderr.write(f"building a {n}-memory store in {home}" + (f" (+{others} in another namespace)" if others else "")
                     + "…\n")
    config = Config(home=home, explicit_namespace=NAMESPACE)
    build_store(config.db_path, config, n, namespace=NAMESPACE).close()
    if others:
        build_store(config.db_path, config, others, seed=2, namespace=NAMESPACE + "-other").close()
    marker.write_text(json.dumps(shape))


def summarize(runs: dict) -> dict:
    """Per side the median of the round medians and p95s; B/A of those medians, per round and their median.

    The median of the per-round ratios pairs runs taken back to back, so it is the steadier figure
    when the machine's load drifts between rounds.
    """
    sides = {side: {"p50": round(statistics.median(r["p50"] for r in rs), 2),
                    "p95": round(statistics.median(r["p95"] for r in rs), 2),
                    "round_p50": [r["p50"] for r in rs]} for side, rs in runs.items()}
    ratios = [round(b["p50"] / a["p50"], 3) for a, b in zip(runs["a"], runs["b"])]
    return {**sides, "ratio_b_a": round(sides["b"]["p50"] / sides["a"]["p50"], 3), "round_ratios": ratios,
            "median_round_ratio": round(statistics.median(ratios), 3),
            "results_same": all(a["results"] == b["results"] for a, b in zip(runs["a"], runs["b"]))}


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:2] == ["--worker"]:
        worker(*sys.argv[2:4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--a", required=True, type=Path, help="side A's source tree (e.g. the commit before)")
    parser.add_argument("--b", required=True, type=Path, help="side B's source tree (e.g. the working tree)")
    parser.add_argument("--n", type=int, default=10_000, help="memories in the store (default 10000)")
    parser.add_argument("--others", type=int, default=0,
                        help="memories in another namespace beside them (default 0: recall reads the whole store)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds, each one run per side (default 7)")
    parser.add_argument("--queries", type=int, default=200, help="timed recalls per run (default 200)")
    parser.add_argument("--store", type=Path, help="keep the store in this folder and reuse it (default: temp)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    trees = {"a": args.a.resolve(), "b": args.b.resolve()}
    for side, tree in trees.items():
        if not (tree / "supermemory" / "__init__.py").exists():
            parser.error(f"--{side} {tree} is not a supermemory source tree")
    sys.path.insert(0, str(trees["b"]))
    import supermemory
    from supermemory.bench.perf import fake_query

    if Path(supermemory.__file__).parent != trees["b"] / "supermemory":
        raise SystemExit(f"imported supermemory from {supermemory.__file__}, not from --b {trees['b']}")

    with tempfile.TemporaryDirectory(prefix="ab-recall-") as tmp:
        tmp = Path(tmp)
        store_home = args.store.resolve() if args.store else tmp / "store"
        ensure_store(store_home, args.n, args.others)
        rng = random.Random(QUERY_SEED)
        queries_file = tmp / "queries.json"
        queries_file.write_text(json.dumps([fake_query(rng) for _ in range(args.queries)]))
        runs: dict = {"a": [], "b": []}
        for i in range(args.rounds):
            order = "ab" if i % 2 == 0 else "ba"
            for side in order:
                runs[side].append(run_side(trees[side], store_home, queries_file, tmp))
            sys.stderr.write(f"round {i + 1}/{args.rounds} ({order.upper()}): A p50 {runs['a'][-1]['p50']} ms · "
                             f"B p50 {runs['b'][-1]['p50']} ms\n")
    report = {"tree_a": str(trees["a"]), "tree_b": str(trees["b"]), "n": args.n, "others": args.others,
              "rounds": args.rounds,
              "queries": args.queries, **summarize(runs)}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"warm recall, {args.n:,} memories" + (f" (+{args.others:,} in another namespace)" if args.others else "")
          + f", {args.rounds} rounds x {args.queries} queries (interleaved AB/BA)")
    for side in "ab":
        s = report[side]
        print(f"  {side.upper()} {report['tree_' + side]}: p50 {s['p50']} ms · p95 {s['p95']} ms "
              f"(round p50s {s['round_p50']})")
    print(f"  B/A {report['ratio_b_a']} · per round {report['round_ratios']} "
          f"(median {report['median_round_ratio']}) · results same: {report['results_same']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
