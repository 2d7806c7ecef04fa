"""Retrieval metrics, pure: per-query Recall@k / MRR / nDCG, their aggregation, the CI gates, the text report."""
from __future__ import annotations

import math
from collections import defaultdict

from supermemory.stats import percentile

METRICS = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "hit@5")


def _dcg(gains: list[int]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def docs_of_memories(doc_to_mem: dict) -> dict:
    """{memory id: its doc ids, in corpus order}: the store keeps identical text once, so docs with the same
    text share one memory."""
    out: dict = defaultdict(list)
    for doc, memory in doc_to_mem.items():
        out[memory].append(doc)
    return dict(out)


def as_docs(memory_ids: list, docs_of: dict, relevant: set) -> list:
    """Each result as the docs it stands for: a memory is the text of every doc it holds, so it counts for
    the relevant ones among them (each in turn), else it is its first doc (None: no labelled doc)."""
    ranked: list = []
    for memory in memory_ids:
        docs = docs_of.get(memory) or [None]
        hits = [d for d in docs if d in relevant]
        ranked.extend(hits or docs[:1])
    return ranked


def query_metrics(ranked: list, relevant: set) -> dict:
    """Recall@1/5/10, MRR@10, binary nDCG@10 and hit@5 (1 when any relevant id is in the top 5) of
    one ranked id list; {} when nothing is relevant.

    :param ranked: result ids, best first (None for a hit that maps to no labelled doc).
    :param relevant: the ids that count as correct answers.
    """
    relevant = set(relevant)
    if not relevant:
        return {}
    metrics = {f"recall@{k}": len(relevant & set(ranked[:k])) / len(relevant) for k in (1, 5, 10)}
    first = next((i for i, r in enumerate(ranked[:10]) if r in relevant), None)
    metrics["mrr@10"] = 1 / (first + 1) if first is not None else 0.0
    ideal = _dcg([1] * min(len(relevant), 10))
    metrics["ndcg@10"] = _dcg([1 if r in relevant else 0 for r in ranked[:10]]) / ideal
    metrics["hit@5"] = 1.0 if relevant & set(ranked[:5]) else 0.0
    return metrics


def summarise(rows: list[dict], latencies: list[float], tokens: list[int], *, mode: str, n_docs: int) -> dict:
    """Aggregate per-query rows into the reported metrics.

    :param rows: one dict per query: `relevant`, `hits`, `category` and the `query_metrics` keys.
    :param latencies: milliseconds per query (p50 / p95 are nearest-rank, `stats.percentile`).
    :param tokens: tokens of each result page.
    """
    positives = [r for r in rows if r["relevant"]]
    negatives = [r for r in rows if not r["relevant"]]

    def mean(values):
        return round(sum(values) / len(values), 4) if values else None

    out = {"mode": mode, "n": len(positives), "docs": n_docs}
    for m in METRICS:
        out[m] = mean([r[m] for r in positives])
    out["negatives"] = len(negatives)
    out["negative_empty_rate"] = mean([1.0 if r["hits"] == 0 else 0.0 for r in negatives])
    out["negative_hit_rate"] = mean([1.0 if r["hits"] > 0 else 0.0 for r in negatives])
    out["negative_mean_hits"] = mean([r["hits"] for r in negatives])
    out["mean_hits"] = mean([r["hits"] for r in positives])
    out["answered_rate"] = mean([1.0 if r["hits"] > 0 else 0.0 for r in positives])
    out["tokens_per_page"] = mean(tokens)
    out["latency_ms_p50"] = percentile(latencies, 50, digits=2)
    out["latency_ms_p95"] = percentile(latencies, 95, digits=2)
    cats = defaultdict(list)
    for r in rows:
        if r.get("category"):
            cats[r["category"]].append(r)
    if cats:
        out["categories"] = {}
        for name, group in sorted(cats.items()):
            pos = [r for r in group if r["relevant"]]
            entry = {"n": len(group)}
            if pos:
                entry.update({m: mean([r[m] for r in pos]) for m in ("recall@1", "recall@5", "mrr@10", "hit@5")})
                entry["answered_rate"] = mean([1.0 if r["hits"] > 0 else 0.0 for r in pos])
            neg = [r for r in group if not r["relevant"]]
            if neg:
                entry["empty_rate"] = mean([1.0 if r["hits"] == 0 else 0.0 for r in neg])
            out["categories"][name] = entry
    return out


def gate_failures(summary: dict, *, min_recall: float | None = None, min_mrr: float | None = None,
                  max_negative: float | None = None) -> list[str]:
    """The CI gates a summary fails, one message each ([] when it passes or no gate is set).

    :param min_recall: Recall@5 must be at least this (`--fail-under-recall`).
    :param min_mrr: MRR@10 must be at least this (`--fail-under-mrr`).
    :param max_negative: the share of negative queries with any hit must be at most this (`--fail-over-negative`).
    """
    failed = []
    if min_recall is not None and (summary["recall@5"] or 0) < min_recall:
        failed.append(f"Recall@5 {summary['recall@5']} < {min_recall}")
    if min_mrr is not None and (summary["mrr@10"] or 0) < min_mrr:
        failed.append(f"MRR@10 {summary['mrr@10']} < {min_mrr}")
    if max_negative is not None and summary["negatives"] and summary["negative_hit_rate"] > max_negative:
        failed.append(f"negative hit rate {summary['negative_hit_rate']} > {max_negative}")
    return failed


def render(summary: dict) -> str:
    """The text report of a summary (what `supermemory bench` prints without --json)."""
    lines = [f"mode {summary['mode']}: {summary['n']} queries over {summary['docs']} docs",
             "  " + "  ".join(f"{m} {summary[m]:.3f}" for m in METRICS if summary.get(m) is not None)]
    if summary.get("answered_rate") is not None:
        lines.append(f"  answered {summary['answered_rate']:.0%} of positive queries, mean hits {summary['mean_hits']}")
    if summary["negatives"]:
        lines.append(f"  negatives {summary['negatives']}: empty {summary['negative_empty_rate']:.0%}, "
                     f"mean hits {summary['negative_mean_hits']}")
    lines.append(f"  tokens/page {summary['tokens_per_page']}  latency p50 {summary['latency_ms_p50']} ms  "
                 f"p95 {summary['latency_ms_p95']} ms")
    for name, entry in (summary.get("categories") or {}).items():
        parts = [f"{k} {v:.3f}" for k, v in entry.items() if k != "n" and v is not None]
        lines.append(f"  {name:<14} n={entry['n']:<4} " + "  ".join(parts))
    return "\n".join(lines)
