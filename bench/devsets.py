"""The dev sets as one list, each seeded once into a cached store and its candidates gathered once.

Ranker settings are chosen on all of them together (bench/fit_relevance.py); seeding embeds every
document, so the seeded stores are kept under `--cache` and reused (a tokenizer change only
re-tokenizes the full-text index when a cached store is opened). Candidates do not depend on ranker
settings, so they are gathered once per query and pickled next to the store.

    python3 bench/devsets.py seed [--data ../shared/bench] [--cache /tmp/sm-dev] [--only locomo-dev]
"""
from __future__ import annotations

import argparse
import atexit
import json
import pickle
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SHARED = ("locomo-dev", "longmemeval-dev", "scifact-train", "codesearch-dev", "cmrc2018")
OURS = ("cases", "agent-notes")   # written for this project, kept in bench/ (the others are in ../shared/bench)
SETS = OURS + SHARED + ("small-stores",)   # small-stores: built from the others (bench/small_stores.py)
GATHER_LIMIT = {"cmrc2018": 1000}   # of 4221 questions: enough to fit, a quarter of the memory
CROSS_SCOPE = ("locomo-dev", "longmemeval-dev")   # sets whose scopes give cross-scope negatives
# Bump when a gathered row gains a field or a feature changes meaning, so old caches are re-gathered
# (2: pooled_coverage, 3: code share, 4: after_question, 5: content_terms, 6: compounds covered by their parts,
# 7: a candidate maps to every doc with its text, 8: query_code, 9: lone Chinese characters weigh less in coverage,
# 10: code share reads indented blocks, 11: word statistics of the namespaces read, 12: answer types,
# 13: a question about a name alone is no short query).
GATHER_FORMAT = 13


def default_data() -> Path:
    return ROOT.parent / "shared" / "bench"


def load(name: str, data: Path) -> tuple[list[dict], list[dict]]:
    """(docs, queries) of one set; the chat sets get their cross-scope negatives added (seed 7)."""
    from supermemory.bench import load_cases
    from supermemory.jsonl import read_jsonl

    if name in OURS:
        return load_cases(ROOT / "bench" / (name.replace("-", "_") + ".jsonl"))
    if name == "small-stores":
        import small_stores

        return small_stores.build(lambda source: load(source, data), seed=7)
    docs = read_jsonl(data / name / "corpus.jsonl")
    queries = read_jsonl(data / name / "queries.jsonl")
    if name in CROSS_SCOPE:
        import cross_scope

        queries = cross_scope.build(docs, queries, seed=7)
    return docs, queries


def open_store(db: Path, settings: dict | None = None, clock=None):
    """A store over a cached dev DB with the user's config (model dir) and optional settings; `clock` is
    the bench's (memories written at their `created_at`, queries asked at one "now"), as `supermemory bench`."""
    from supermemory.config import Config, load_config
    from supermemory.core import MemoryStore

    base = load_config()
    home = tempfile.mkdtemp(prefix="sm-dev-")     # the config's home: nothing is kept there
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    config = Config(home=Path(home), settings=settings or base.settings,
                    model_dir_override=base.model_dir, explicit_namespace="bench")
    return MemoryStore(db, config=config, namespace="bench", cache_vectors=True, clock=clock)


def seeded(name: str, data: Path, cache: Path):
    """The cached store of a set (seeded on first use) and {memory id: its doc ids} (identical docs share one)."""
    from supermemory.bench import seed
    from supermemory.bench.metrics import docs_of_memories
    from supermemory.bench.runner import BenchClock

    cache.mkdir(parents=True, exist_ok=True)
    db = cache / f"{name}.db"
    mapping_file = cache / f"{name}.map.json"
    if not mapping_file.exists():
        for stale in (db, Path(str(db) + "-wal"), Path(str(db) + "-shm")):
            stale.unlink(missing_ok=True)
        docs, _ = load(name, data)
        clock = BenchClock()
        store = open_store(db, clock=clock)
        try:
            mapping = seed(store, docs, clock=clock)     # with their times, as `supermemory bench` seeds
        finally:
            store.close()
        mapping_file.write_text(json.dumps(mapping))
    mapping = json.loads(mapping_file.read_text())
    return db, docs_of_memories(mapping)


def rank_config(row: dict, settings: dict | None = None):
    """The ranker's config for one gathered query, as recall builds it (`ranking` settings, default the
    shipped ones, plus the query's own context)."""
    from supermemory.retrieval import ranking
    from supermemory.settings import DEFAULTS

    fields = ranking.RankConfig.__dataclass_fields__
    context = {k: v for k, v in row["context"].items() if k in fields}
    return ranking.RankConfig.from_settings(DEFAULTS["ranking"] if settings is None else settings, **context,
                                            use_cosine=row["has_vectors"],
                                            pooled_coverage=row.get("pooled_coverage", 0.0))


def gathered_path(name: str, cache: Path) -> Path:
    """Where a set's gathered candidates are kept (per tokenizer version and gather format)."""
    from supermemory.text import TOKENIZER_VERSION

    return cache / f"{name}.t{TOKENIZER_VERSION}.g{GATHER_FORMAT}.cands.pkl"


def gathered(name: str, data: Path, cache: Path, *, refresh: bool = False) -> list[dict]:
    """Per query: the query row, its analysed ranker context and its unranked candidates (cached)."""
    from supermemory.bench import scope_namespace

    db, docs_of = seeded(name, data, cache)
    pick = gathered_path(name, cache)
    if pick.exists() and not refresh:
        return pickle.loads(pick.read_bytes())
    from supermemory.bench.runner import BenchClock, query_now

    docs, queries = load(name, data)
    queries = queries[:GATHER_LIMIT.get(name)]
    clock = BenchClock()
    clock.at = query_now(docs, None)     # as `supermemory bench` asks: a day after the last memory, or now
    store = open_store(db, clock=clock)
    out = []
    try:
        for q in queries:
            scope = (q.get("meta") or {}).get("scope")
            ns = scope_namespace(scope) if scope is not None else "bench"
            query, found = store.candidates(q["query"], namespace=ns, n_cand=60)
            for cand in found.candidates:   # the pickles stay small (CJK passages have thousands of terms)
                cand.text, cand.terms = "", frozenset()
            ranked_docs = {c.id: docs_of.get(f"M{c.id}", [None]) for c in found.candidates}
            out.append({"query": q, "candidates": found.candidates, "docs": ranked_docs,
                        "context": store.query_context(q["query"], found.doc_freq),
                        "pooled_coverage": found.pooled_coverage,
                        "has_vectors": found.query_vec is not None})
    finally:
        store.close()
    pick.write_bytes(pickle.dumps(out))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("seed", "gather"))
    parser.add_argument("--data", type=Path, default=default_data())
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "sm-dev")
    parser.add_argument("--only", action="append", choices=SETS)
    args = parser.parse_args()
    for name in args.only or SETS:
        if args.action == "seed":
            seeded(name, args.data, args.cache)
        else:
            rows = gathered(name, args.data, args.cache, refresh=True)
            print(f"{name}: {len(rows)} queries gathered", flush=True)
        print(f"{name}: ready", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
