#!/usr/bin/env python3
"""Fit the ranker's relevance model (supermemory/retrieval/relevance.json) on the dev sets together (bench/devsets.py).

Every set gets the same weight in the loss and every query the same weight within its set, so no set
decides alone. Queries are split into a `fit` and a `report` half: by scope for the chat sets (the same
seeded halves as their cross-scope negatives, bench/cross_scope.py), by a hash of the query id for the
others. The model is fitted on the fit halves only; every figure is printed for the report half (and for
all queries), with the lexical-only and vector-only orders of the same candidates beside it, and the
abstention trade-off curve (share of negatives returning nothing vs share of positive queries that lose
their answer from the top 5).

    python3 bench/devsets.py seed --cache /tmp/sm-dev        # once: embeds every document
    python3 bench/fit_relevance.py --cache /tmp/sm-dev [--write] [--curve]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import devsets  # noqa: E402

from supermemory.bench.metrics import as_docs, query_metrics  # noqa: E402
from supermemory.retrieval import ranking, relevance  # noqa: E402

KEY = {"scifact-train": "ndcg@10"}      # the set's headline metric beside R@5 (MRR@10 elsewhere)


def half_of(name: str, row: dict, scope_half: dict) -> str:
    q = row["query"]
    meta = q.get("meta") or {}
    if str(meta.get("category_name", "")).startswith("cross-scope-"):
        return meta["category_name"].rsplit("-", 1)[1]
    if name in devsets.CROSS_SCOPE and meta.get("scope") in scope_half:
        return scope_half[meta["scope"]]
    digest = hashlib.sha256(f"{name}:{q['id']}".encode()).digest()
    return "fit" if digest[0] % 2 == 0 else "report"


def matrices(name: str, rows: list[dict]):
    """Per query: (X, labels, docs, relevant, half, is_negative)."""
    import numpy as np

    scope_half = {}
    for row in rows:
        meta = row["query"].get("meta") or {}
        if str(meta.get("category_name", "")).startswith("cross-scope-"):
            scope_half[meta["scope"]] = meta["category_name"].rsplit("-", 1)[1]
    out = []
    for row in rows:
        cands = row["candidates"]
        relevant = set(row["query"].get("relevant") or [])
        ev = ranking.query_evidence(cands, devsets.rank_config(row))     # as recall reads it
        rows_x = (relevance.features(c, ev) for c in cands)
        X = np.array([[x[f] for f in relevance.FEATURES] for x in rows_x], dtype=float) \
            if cands else np.zeros((0, len(relevance.FEATURES)))
        docs = [as_docs([c.id], row["docs"], relevant)[0] for c in cands]   # one doc per candidate
        y = np.array([1.0 if d in relevant else 0.0 for d in docs])
        extra = {"bm25": [c.bm25 for c in cands], "cosine": [c.cosine for c in cands]}
        out.append({"X": X, "y": y, "docs": docs, "relevant": relevant, "half": half_of(name, row, scope_half),
                    "negative": not relevant, "extra": extra, "id": row["query"]["id"]})
    return out


def cached_matrices(name: str, data: Path, cache: Path):
    """`matrices` of a set, cached per relevance.py source and per gathered candidates (a re-gather, e.g. after
    a change to how a candidate's inputs are read, makes new matrices)."""
    import pickle

    rows = devsets.gathered(name, data, cache)     # gathers first if needed, so its file exists below
    gathered = devsets.gathered_path(name, cache).stat()
    key = hashlib.sha256(Path(relevance.__file__).read_bytes()
                         + f"{gathered.st_mtime_ns}:{gathered.st_size}".encode()).hexdigest()[:10]
    path = cache / f"{name}.{key}.mat.pkl"
    if not path.exists():
        path.write_bytes(pickle.dumps(matrices(name, rows)))
    return pickle.loads(path.read_bytes())


COMPETITORS = 20   # irrelevant candidates each query's softmax holds: the strongest, re-chosen every step
# The weight the order's score gets in the calibration, fixed at what it was fitted to before bench/agent_notes.jsonl
# joined the sets (0.66). The log-odds gaps between one query's hits set its softmax attention, the relative
# cutoff against filler, the other hits' relevance and how much the priors move the order; a free fit with the
# agent notes put it at 0.47, flattening every page (a seven-memory store listed all seven under an exact
# answer). The calibration of the best hit's probability is fitted around it (bench/RESULTS.md, "Coding notes of
# ten projects: the relevance model recalibrated").
ORDER_SCALE = 0.66


def _listwise(chosen: dict, cand_idx: list, *, steps: int = 1500, competitors: int = COMPETITORS):
    """Candidate weights by a listwise objective: the softmax over each query's relevant candidates and its
    `competitors` highest-scoring irrelevant ones should put its mass on the relevant ones. Only the
    contest at the top of the list counts (a result list is read from the top): the weak tail of sixty
    candidates no longer pulls the weights. Each set weight 1, each query 1/queries in its set."""
    import numpy as np

    width = max(len(q["y"]) for qs in chosen.values() for q in qs)
    competitors = max(1, min(competitors, width))
    X3, M, Y, W = [], [], [], []
    for name, qs in chosen.items():
        pos = [q for q in qs if q["y"].sum() > 0]
        for q in pos:
            n = len(q["y"])
            x = np.zeros((width, len(cand_idx)))
            x[:n] = q["X"][:, cand_idx]
            m = np.zeros(width)
            m[:n] = 1
            y = np.zeros(width)
            y[:n] = q["y"]
            X3.append(x), M.append(m), Y.append(y), W.append(1.0 / (len(pos) * len(chosen)))
    X3, M, Y, W = map(np.array, (X3, M, Y, W))
    w = np.zeros(len(cand_idx))
    m1, v1 = np.zeros_like(w), np.zeros_like(w)
    for t in range(1, steps + 1):          # Adam on the listwise log-likelihood
        z = np.where(M > 0, X3 @ w, -1e9)
        rivals = np.where(Y > 0, -1e9, z)
        kth = -np.sort(-rivals, axis=1)[:, competitors - 1:competitors]
        live = M * ((Y > 0) | (rivals >= kth))       # the relevant ones and the strongest rivals
        z = np.where(live > 0, z, -1e9)
        z -= z.max(1, keepdims=True)
        e = np.exp(z) * live
        p_all = e / e.sum(1, keepdims=True)
        p_rel = e * Y / (e * Y).sum(1, keepdims=True)
        g = ((p_all - p_rel) * W[:, None])[:, :, None] * X3
        g = g.sum((0, 1)) + 1e-3 * w
        m1, v1 = 0.9 * m1 + 0.1 * g, 0.999 * v1 + 0.001 * g * g
        w -= 0.05 * (m1 / (1 - 0.9 ** t)) / (np.sqrt(v1 / (1 - 0.999 ** t)) + 1e-8)
    return w


def _logistic(X, y, sw, *, l2: float, iters: int = 50, offset=0.0):
    """Weighted, L2-regularised logistic regression by Newton steps; column 0 of X is the intercept; `offset` is
    added to every row's log-odds (a term whose weight is fixed)."""
    import numpy as np

    beta = np.zeros(X.shape[1])
    beta[0] = -float(np.median(offset))     # start where the fixed term is centred (Newton from a saturated start diverges)
    reg = np.full(X.shape[1], l2)
    reg[0] = 0.0
    for _ in range(iters * 4):
        p = 1 / (1 + np.exp(-np.clip(X @ beta + offset, -30, 30)))
        grad = X.T @ (sw * (p - y)) + reg * beta
        H = (X * (sw * p * (1 - p))[:, None]).T @ X + np.diag(reg)
        step = np.linalg.solve(H, grad)
        step *= min(1.0, 5.0 / max(1e-12, float(np.abs(step).max())))   # damped: at most 5 log-odds per step
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def fit(sets: dict, *, l2: float = 1.0, order_scale: float | None = ORDER_SCALE):
    """Two steps, one linear model. (1) The candidate-level weights by a listwise objective (`_listwise`).
    (2) Calibration, on each query's best candidate: P(the query has its answer in the top 5) from [that
    candidate's score, the query-level features], positive queries whose answer the order finds against the
    negatives (cases negatives and cross-scope questions), each set weight 1. So the best hit's
    probability is what the nothing-relevant threshold reads. The result folds back into one intercept and
    one weight per feature; the query-level features never change the order. `order_scale` fixes the weight of
    the order's score in step 2 (None: fitted with the rest)."""
    import numpy as np

    names = relevance.FEATURES
    cand_idx = [names.index(f) for f in relevance.CANDIDATE_FEATURES]
    query_idx = [names.index(f) for f in relevance.QUERY_FEATURES]
    chosen = {name: [q for q in queries if q["half"] == "fit" and len(q["y"])] for name, queries in sets.items()}
    w = _listwise(chosen, cand_idx)
    rows, ys, ws = [], [], []
    for name, qs in chosen.items():
        answered, negatives = [], []
        for q in qs:
            score = q["X"][:, cand_idx] @ w
            order_ = np.argsort(-score, kind="stable")
            row = [score[order_[0]], *q["X"][order_[0], query_idx]]
            if q["negative"]:
                negatives.append(row)
            elif q["y"][order_[:5]].any():
                answered.append(row)
        for group, label in ((answered, 1.0), (negatives, 0.0)):
            rows += group
            ys += [label] * len(group)
            ws += [1.0 / max(1, len(answered) + len(negatives))] * len(group)
    X = np.hstack([np.ones((len(rows), 1)), np.array(rows)])
    if order_scale:     # the order's weight is fixed: calibration fits the intercept and the query-level features
        rest = _logistic(np.delete(X, 1, axis=1), np.array(ys), np.array(ws) * 1000, l2=l2, offset=order_scale * X[:, 1])
        beta = np.concatenate([rest[:1], [order_scale], rest[1:]])
    else:
        beta = _logistic(X, np.array(ys), np.array(ws) * 1000, l2=l2)
    weights = {names[i]: float(beta[1] * w[k]) for k, i in enumerate(cand_idx)}
    weights.update({names[i]: float(beta[2 + k]) for k, i in enumerate(query_idx)})
    return float(beta[0]), weights


def order(q, how: str, model=None):
    import numpy as np

    n = len(q["docs"])
    if how == "lexical":
        idx = sorted((i for i in range(n) if q["extra"]["bm25"][i] is not None), key=lambda i: q["extra"]["bm25"][i])
        return idx, None
    if how == "vector":
        idx = sorted((i for i in range(n) if q["extra"]["cosine"][i] is not None), key=lambda i: -q["extra"]["cosine"][i])
        return idx, None
    z = model.intercept + q["X"] @ np.array([model.weights[f] for f in relevance.FEATURES]) if n else np.zeros(0)
    idx = sorted(range(n), key=lambda i: -z[i])
    return idx, 1 / (1 + np.exp(-z))


def evaluate(sets: dict, model, *, half: str | None, threshold: float = 0.0) -> dict:
    """Per set: metrics of lexical / vector / model order; with a threshold, negatives empty and answers lost."""
    report = {}
    for name, queries in sets.items():
        chosen = [q for q in queries if half is None or q["half"] == half]
        row = {}
        for how in ("lexical", "vector", "model"):
            ms, lost, empty_neg, n_neg, n_pos_hit = [], 0, 0, 0, 0
            for q in chosen:
                idx, p = order(q, how, model)
                if how == "model" and threshold > 0:   # nothing relevant: the best candidate is below it
                    idx = idx if len(idx) and p[idx[0]] >= threshold else []
                ranked = [q["docs"][i] for i in idx][:10]
                if q["negative"]:
                    n_neg += 1
                    empty_neg += not ranked
                    continue
                m = query_metrics(ranked, q["relevant"])
                ms.append(m)
                if how == "model":
                    full_idx, _ = order(q, how, model)
                    had = any(q["docs"][i] in q["relevant"] for i in full_idx[:5])
                    n_pos_hit += had
                    lost += had and not any(r in q["relevant"] for r in ranked[:5])
            key = KEY.get(name, "mrr@10")
            row[how] = {"r5": round(sum(m["recall@5"] for m in ms) / max(1, len(ms)), 4),
                        key: round(sum(m[key] for m in ms) / max(1, len(ms)), 4)}
            if how == "model":
                row[how]["negatives"] = n_neg
                row[how]["neg_empty"] = round(empty_neg / n_neg, 4) if n_neg else None
                row[how]["answers_lost"] = round(lost / max(1, n_pos_hit), 4)
        report[name] = row
    return report


def curve(sets: dict, model, *, half: str = "report") -> list[dict]:
    """Negatives empty vs positives losing their answer, for a range of thresholds (all sets pooled by set)."""
    out = []
    for t in (0.02, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.22, 0.25, 0.27, 0.28, 0.29, 0.3, 0.35, 0.4, 0.5):
        rep = evaluate(sets, model, half=half, threshold=t)
        negs = [(r["model"]["neg_empty"], r["model"]["negatives"]) for r in rep.values() if r["model"]["negatives"]]
        lost = [r["model"]["answers_lost"] for r in rep.values()]
        out.append({"threshold": t, "neg_empty": {n: r["model"]["neg_empty"] for n, r in rep.items()
                                                   if r["model"]["negatives"]},
                    "answers_lost": {n: r["model"]["answers_lost"] for n, r in rep.items()},
                    "neg_empty_mean": round(sum(e for e, _ in negs) / len(negs), 4),
                    "answers_lost_max": max(lost)})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=devsets.default_data())
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--threshold", type=float, default=0.1)
    parser.add_argument("--curve", action="store_true")
    parser.add_argument("--only", action="append", choices=devsets.SETS, help="fit on these sets only (exploration)")
    parser.add_argument("--write", action="store_true", help="write supermemory/retrieval/relevance.json")
    args = parser.parse_args()
    sets = {name: cached_matrices(name, args.data, args.cache) for name in args.only or devsets.SETS}
    intercept, weights = fit(sets, l2=args.l2)
    model = relevance.Model(intercept=intercept, weights=weights, threshold=args.threshold)
    print(json.dumps({"intercept": round(intercept, 4), "weights": {k: round(v, 4) for k, v in weights.items()}}))
    for half in ("report", None):
        print(f"== {half or 'all'} (no threshold)")
        for name, row in evaluate(sets, model, half=half).items():
            print(name, json.dumps(row))
    print(f"== report, threshold {args.threshold}")
    for name, row in evaluate(sets, model, half="report", threshold=args.threshold).items():
        print(name, json.dumps(row["model"]))
    if args.curve:
        for point in curve(sets, model):
            print(json.dumps(point))
    if args.write:
        relevance.COEFFICIENTS.write_text(json.dumps({
            "fitted_by": "bench/fit_relevance.py", "sets": list(devsets.SETS), "l2": args.l2,
            "intercept": round(intercept, 6), "weights": {k: round(v, 6) for k, v in weights.items()},
            "threshold": args.threshold}, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {relevance.COEFFICIENTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
