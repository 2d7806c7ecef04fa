#!/usr/bin/env python3
"""Score the write-time supersession rule on labelled memory pairs (`bench/revision_pairs.jsonl`): precision and recall.

Each pair is stored alone through `MemoryStore.remember` (older first, then newer, both decisions), and
the rule says "revision" when the newer memory's answer lists the older one under `supersedes`
(`store/supersession.py` with the shipped settings, or `--set supersession.cosine=0.7 …`). A second line
scores the change marker alone (does the newer text announce a change?). `--grid` replays the
cosine/overlap thresholds on features gathered once. Run with the real model:

    .venv/bin/python bench/revisions.py [--provider hash] [--grid] [--pairs other.jsonl]
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from supermemory.config import Config, load_config  # noqa: E402
from supermemory.core import MemoryStore  # noqa: E402
from supermemory.settings import coerce_value  # noqa: E402
from supermemory.text import has_revision_marker  # noqa: E402

PAIRS = Path(__file__).with_name("revision_pairs.jsonl")


def embedder_for(config: Config, provider: str | None):
    """One embedding provider for every pair (the model loads once, not once per pair's store)."""
    from supermemory.embed import get_provider

    return get_provider(config, provider) if provider else get_provider(config)


def judge(pair: dict, config: Config, embedder, *, loose: bool = False) -> dict:
    """The rule's verdict on one pair, with the closeness it measured (`loose`: every threshold at 0)."""
    settings = json.loads(json.dumps(config.settings))
    if loose:
        settings["supersession"].update(cosine=0.0, cosine_with_overlap=0.0, overlap=0.0, overlap_cjk=0.0)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Config(home=Path(tmp), settings=settings, model_dir_override=config.model_dir)
        clock = iter([1_000_000.0, 1_000_100.0] + [1_000_200.0] * 10)
        store = MemoryStore(Path(tmp) / "m.db", config=cfg, namespace="pairs",
                            embedder=embedder, clock=lambda: next(clock))
        try:
            old = store.remember(pair["older"], kind="decision")["id"]
            new = store.remember(pair["newer"], kind="decision")
        finally:
            store.close()
    return {"rule": old in new["supersedes"], "marker": has_revision_marker(pair["newer"])}


def features(pair: dict, config: Config, embedder) -> dict:
    """Cosine and word overlap the rule sees for one pair (thresholds at 0, marker still required)."""
    from supermemory.store import supersession

    captured = {}
    real = supersession.judge

    def spy(cosine, overlap, cjk, cfg, *, weak=False):
        captured.update(cosine=cosine, overlap=overlap, cjk=cjk, weak=weak)
        return real(cosine, overlap, cjk, cfg, weak=weak)

    supersession.judge = spy
    try:
        judge(pair, config, embedder, loose=True)
    finally:
        supersession.judge = real
    return captured


def scores(labels: list[bool], said: list[bool]) -> dict:
    tp = sum(1 for y, p in zip(labels, said) if y and p)
    fp = sum(1 for y, p in zip(labels, said) if not y and p)
    fn = sum(1 for y, p in zip(labels, said) if y and not p)
    return {"precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "recall": round(tp / (tp + fn), 3) if tp + fn else None, "tp": tp, "fp": fp, "fn": fn}


def grid(pairs: list[dict], config: Config, provider: str | None) -> list[dict]:
    """Every threshold combination replayed on features gathered once, best F0.5 first (precision counts double)."""
    from supermemory.store.supersession import judge as rule

    embedder = embedder_for(config, provider)
    feats = [features(p, config, embedder) for p in pairs]
    min_overlap = config.settings["supersession"].get("min_overlap", 0.0)
    labels = [p["revision"] for p in pairs]
    rows = []
    for cos, cos_lo, overlap, overlap_cjk in itertools.product(
            [0.70, 0.72, 0.74, 0.75, 0.76, 0.78, 0.80], [0.60, 0.65, 0.70, 1.0], [0.4, 0.5, 0.6, 0.75],
            [0.25, 0.35, 0.5]):
        cfg = {"cosine": cos, "cosine_with_overlap": cos_lo, "overlap": overlap, "overlap_cjk": overlap_cjk}
        said = [bool(f) and rule(f["cosine"], f["overlap"], f["cjk"], {**cfg, "min_overlap": min_overlap}, weak=f["weak"])
                for f in feats]
        s = scores(labels, said)
        p, r = s["precision"] or 0.0, s["recall"] or 0.0
        rows.append({**cfg, **s, "f0.5": round(1.25 * p * r / (0.25 * p + r), 3) if p + r else 0.0})
    return sorted(rows, key=lambda row: -row["f0.5"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", help="embedding provider (default: the configured one)")
    parser.add_argument("--pairs", type=Path, default=PAIRS, help="labelled pairs (default: revision_pairs.jsonl)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a setting")
    parser.add_argument("--grid", action="store_true", help="replay threshold combinations instead")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in args.pairs.read_text(encoding="utf-8").splitlines() if line.strip()]
    config = load_config()
    for item in args.set:
        key, _, value = item.partition("=")
        section, name = key.strip().split(".", 1)
        config.settings[section][name] = coerce_value(value.strip())
    if args.grid:
        print(json.dumps(grid(pairs, config, args.provider)[:15], indent=1))
        return 0
    embedder = embedder_for(config, args.provider)
    results = [judge(p, config, embedder) for p in pairs]
    labels = [p["revision"] for p in pairs]
    report = {"pairs": len(pairs), "revisions": sum(labels),
              "rule": scores(labels, [r["rule"] for r in results]),
              "marker_only": scores(labels, [r["marker"] for r in results]),
              "misjudged": [p["id"] for p, r in zip(pairs, results) if r["rule"] != p["revision"]]}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
