"""Grid-search ranker settings on a labelled set, gathering candidates once per query.

Usage (dev tool, not part of CI):
    python bench/tune.py --corpus C.jsonl --queries Q.jsonl [--cases bench/cases.jsonl] \
        --grid ranking.temperature=0.05,0.1 --grid ranking.mmr_lambda=0,0.3 [--cache /tmp/x.db]

Candidates (bm25, cosine, coverage, …) do not depend on ranker settings, so each query's
candidate set is fetched once and re-ranked for every combination with the pure ranker.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from supermemory.retrieval import ranking  # noqa: E402
from supermemory.bench import load_cases, read_jsonl, scope_namespace, seed  # noqa: E402
from supermemory.config import Config, load_config  # noqa: E402
from supermemory.settings import coerce_value  # noqa: E402
from supermemory.core import MemoryStore  # noqa: E402
from supermemory.retrieval.pipeline import dot  # noqa: E402


def gather_all(store, queries, n_cand=60):
    out = []
    for q in queries:
        scope = (q.get("meta") or {}).get("scope")
        ns = scope_namespace(scope) if scope is not None else "bench"
        query, found = store.candidates(q["query"], namespace=ns, n_cand=n_cand)
        out.append((q, found.candidates, store.query_context(q["query"], found.doc_freq)))
    return out


def score(gathered, mem_to_doc, settings, limit=10):
    r5 = mrr = neg_empty = 0.0
    npos = nneg = 0
    for q, cands, context in gathered:
        cfg = ranking.RankConfig.from_settings(settings, **context)
        selected, _ = ranking.rank(cands, cfg, limit=limit, cosine_fn=dot)
        ranked = [mem_to_doc.get(f"M{r.candidate.id}") for r in selected]
        rel = set(q.get("relevant") or [])
        if rel:
            npos += 1
            r5 += len(rel & set(ranked[:5])) / len(rel)
            first = next((i for i, r in enumerate(ranked[:10]) if r in rel), None)
            mrr += 1 / (first + 1) if first is not None else 0
        else:
            nneg += 1
            neg_empty += 1 if not ranked else 0
    return {"r5": round(r5 / max(1, npos), 4), "mrr": round(mrr / max(1, npos), 4),
            "neg_empty": round(neg_empty / nneg, 4) if nneg else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus")
    ap.add_argument("--queries")
    ap.add_argument("--cases")
    ap.add_argument("--grid", action="append", default=[])
    ap.add_argument("--cache", help="reuse/keep the seeded DB here")
    args = ap.parse_args()
    if args.cases:
        docs, queries = load_cases(args.cases)
    else:
        docs, queries = read_jsonl(args.corpus), read_jsonl(args.queries)
    base = load_config()
    tmp = tempfile.mkdtemp()
    db = Path(args.cache) if args.cache else Path(tmp) / "t.db"
    fresh = not db.exists()
    config = Config(home=Path(tmp), settings=base.settings, model_dir_override=base.model_dir,
                    explicit_namespace="bench")
    store = MemoryStore(db, config=config, namespace="bench")
    if fresh:
        mapping = seed(store, docs)
        db.with_suffix(".map.json").write_text(json.dumps(mapping))
    mapping = json.loads(db.with_suffix(".map.json").read_text())
    mem_to_doc = {v: k for k, v in mapping.items()}
    import pickle

    pick = db.with_suffix(".cands.pkl")
    if pick.exists() and not fresh:
        gathered = pickle.loads(pick.read_bytes())
    else:
        gathered = gather_all(store, queries)
        pick.write_bytes(pickle.dumps(gathered))
    keys, values = [], []
    for g in args.grid:
        k, _, v = g.partition("=")
        keys.append(k)
        values.append([coerce_value(x) for x in v.split(",")])
    for combo in itertools.product(*values) if values else [()]:
        settings = json.loads(json.dumps(base.settings["ranking"]))
        for k, v in zip(keys, combo):
            node = settings
            parts = k.split(".")[1:] if k.startswith("ranking.") else k.split(".")
            for p in parts[:-1]:
                node = node[p]
            node[parts[-1]] = v
        if settings.get("vector_floor", "auto") == "auto":
            settings["vector_floor"] = 0.6  # the store's calibrated floor for onnx
        print(dict(zip(keys, combo)), score(gathered, mem_to_doc, settings), flush=True)


if __name__ == "__main__":
    main()
