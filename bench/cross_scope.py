#!/usr/bin/env python3
"""Cross-scope negatives: questions of one conversation asked against another's store, which cannot answer them.

For every query of scope A a seeded other scope B is chosen; speaker names are swapped for B's (in
LoCoMo nearly every question names a speaker, and a name no memory of B mentions would be turned away by
the name gate for free); a pair is left out when B's text contains A's answer. Scopes are split into a
`fit` and a `report` half (seeded), named in `meta.category_name` so `supermemory bench` reports each.
The output (shared-format queries: the positives as they are plus the negatives) is evaluation data:
write it outside the repository.

    python3 bench/cross_scope.py --corpus ../shared/bench/locomo-dev/corpus.jsonl \\
        --queries ../shared/bench/locomo-dev/queries.jsonl --out /tmp/locomo-cross.jsonl
"""
from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter, defaultdict
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _read(path: str) -> list[dict]:
    from supermemory.jsonl import read_jsonl

    return read_jsonl(path)


def speakers(corpus: list[dict]) -> dict[str, list[str]]:
    """Each scope's speakers, most frequent first (LoCoMo docs carry `meta.speaker`)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for doc in corpus:
        meta = doc.get("meta") or {}
        if meta.get("speaker"):
            counts[meta["scope"]][meta["speaker"]] += 1
    return {scope: [name for name, _ in c.most_common()] for scope, c in counts.items()}


def swap_names(text: str, ours: list[str], theirs: list[str]) -> str:
    """Replace A's speaker names by B's, in rank order (one pass, so names never chain)."""
    mapping = dict(zip(ours, theirs))
    if not mapping:
        return text
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(mapping, key=len, reverse=True)) + r")\b")
    return pattern.sub(lambda m: mapping[m.group(1)], text)


def build(corpus: list[dict], queries: list[dict], *, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    scopes = sorted(({(q.get("meta") or {}).get("scope") for q in queries}
                     | {(d.get("meta") or {}).get("scope") for d in corpus}) - {None})
    shuffled = scopes[:]
    rng.shuffle(shuffled)
    half = {scope: ("fit" if i < len(shuffled) // 2 else "report") for i, scope in enumerate(shuffled)}
    text_of: dict[str, str] = defaultdict(str)
    for doc in corpus:
        text_of[(doc.get("meta") or {}).get("scope")] += "\n" + doc["text"].lower()
    names = speakers(corpus)
    out = [dict(q, meta={**(q.get("meta") or {}), "category_name": "positive"}) for q in queries]
    for q in queries:
        scope = (q.get("meta") or {}).get("scope")
        others = [s for s in scopes if s != scope]
        if scope is None or not others:
            continue
        other = rng.choice(others)
        answer = str((q.get("meta") or {}).get("answer") or "").strip().lower()
        if len(answer) >= 3 and answer in text_of[other]:
            continue
        text = swap_names(q["query"], names.get(scope, []), names.get(other, []))
        out.append({"id": f"neg:{q['id']}:{other}", "query": text, "relevant": [],
                    "meta": {"scope": other, "asked_in": scope, "category_name": f"cross-scope-{half[other]}"}})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = build(_read(args.corpus), _read(args.queries), seed=args.seed)
    Path(args.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    negatives = [r for r in rows if not r["relevant"]]
    print(f"{len(rows) - len(negatives)} positives, {len(negatives)} cross-scope negatives → {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
