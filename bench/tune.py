#!/usr/bin/env python3
"""Grid-search ranker settings on the dev sets together, re-ranking candidates gathered once (bench/devsets.py).

Usage (dev tool, not part of CI):
    python3 bench/tune.py --cache /tmp/sm-dev --set cases --set locomo-dev \
        --grid relevance_floor=0,0.003,0.01 --grid mmr_lambda=0,0.2

Candidates (bm25, cosine, coverage, …) do not depend on ranker settings, so each query's
candidate set comes from the cache and is re-ranked for every combination with the pure ranker.
Prints R@5, MRR@10 and the share of negatives that return nothing, per set.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import devsets  # noqa: E402

from supermemory.bench.metrics import as_docs, query_metrics  # noqa: E402
from supermemory.retrieval import ranking  # noqa: E402
from supermemory.retrieval.pipeline import dot  # noqa: E402
from supermemory.settings import DEFAULTS, coerce_value  # noqa: E402


def score(rows: list[dict], settings: dict, limit: int = 10) -> dict:
    """R@5, MRR@10 and negatives empty of one set under `settings` (the `ranking` section)."""
    r5 = mrr = empty = 0.0
    positives = negatives = 0
    for row in rows:
        cfg = devsets.rank_config(row, settings)
        selected, _ = ranking.rank(row["candidates"], cfg, limit=limit, cosine_fn=dot)
        relevant = set(row["query"].get("relevant") or [])
        ranked = as_docs([r.candidate.id for r in selected], row["docs"], relevant)
        if relevant:
            m = query_metrics(ranked, relevant)
            positives += 1
            r5 += m["recall@5"]
            mrr += m["mrr@10"]
        else:
            negatives += 1
            empty += not ranked
    return {"r5": round(r5 / max(1, positives), 4), "mrr": round(mrr / max(1, positives), 4),
            "neg_empty": round(empty / negatives, 4) if negatives else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=devsets.default_data())
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--set", action="append", choices=devsets.SETS, help="default: all six")
    parser.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                        help="a ranking setting and the values to try (key without the `ranking.` prefix)")
    args = parser.parse_args()
    data = {name: devsets.gathered(name, args.data, args.cache) for name in args.set or devsets.SETS}
    keys, values = [], []
    for item in args.grid:
        key, _, listed = item.partition("=")
        keys.append(key.removeprefix("ranking."))
        values.append([coerce_value(v) for v in listed.split(",")])
    for combo in itertools.product(*values):
        settings = {**json.loads(json.dumps(DEFAULTS["ranking"])), **dict(zip(keys, combo))}
        print(json.dumps({"settings": dict(zip(keys, combo)),
                          **{name: score(rows, settings) for name, rows in data.items()}}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
