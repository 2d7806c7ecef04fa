#!/usr/bin/env python3
"""Score the supersession rule on labelled memory pairs (`bench/revision_pairs.jsonl`): precision and recall.

Each pair is stored alone (older first, then newer), the older text is the query, and the rule is the
ranker's own (`ranking.superseded_by` over the gathered candidates, with the shipped settings); a second
line scores the change-marker alone (does the newer text announce a change?). Run with the real model:

    .venv/bin/python bench/revisions.py [--provider hash]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from supermemory.config import load_config  # noqa: E402
from supermemory.core import MemoryStore  # noqa: E402
from supermemory.retrieval import ranking  # noqa: E402
from supermemory.retrieval.pipeline import dot  # noqa: E402
from supermemory.text import has_revision_marker  # noqa: E402

PAIRS = Path(__file__).with_name("revision_pairs.jsonl")


def judge(pair: dict, config, provider: str | None) -> tuple[bool, bool]:
    """(the rule says revision, the marker alone says revision) for one pair."""
    from supermemory.embed import get_provider

    with tempfile.TemporaryDirectory() as tmp:
        clock = iter([1_000_000.0, 1_000_100.0] + [1_000_200.0] * 10)
        store = MemoryStore(Path(tmp) / "m.db", config=config, namespace="pairs",
                            embedder=get_provider(config, provider) if provider else None, clock=lambda: next(clock))
        old = int(store.remember(pair["older"], kind="decision")["id"][1:])
        new = int(store.remember(pair["newer"], kind="decision")["id"][1:])
        query, found = store.candidates(pair["older"], n_cand=10)
        cfg = store.rank_config(pair["older"], has_vectors=found.query_vec is not None, doc_freq=found.doc_freq)
        stale = ranking.superseded_by(found.candidates, cfg, cosine_fn=dot if found.query_vec is not None else None)
        store.close()
    return stale.get(old) == new, has_revision_marker(pair["newer"])


def scores(labels: list[bool], said: list[bool]) -> dict:
    tp = sum(1 for y, p in zip(labels, said) if y and p)
    fp = sum(1 for y, p in zip(labels, said) if not y and p)
    fn = sum(1 for y, p in zip(labels, said) if y and not p)
    return {"precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "recall": round(tp / (tp + fn), 3) if tp + fn else None, "tp": tp, "fp": fp, "fn": fn}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", help="embedding provider (default: the configured one)")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    config = load_config()
    results = [judge(p, config, args.provider) for p in pairs]
    labels = [p["revision"] for p in pairs]
    report = {"pairs": len(pairs), "revisions": sum(labels),
              "rule": scores(labels, [r for r, _ in results]),
              "marker_only": scores(labels, [m for _, m in results]),
              "misjudged": [p["id"] for p, (r, _) in zip(pairs, results) if r != p["revision"]]}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
