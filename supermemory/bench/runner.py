"""Retrieval benchmark runs (`supermemory bench`): read a labelled set, seed a throw-away store, query, report.

Two input forms: our `cases.jsonl` (memory and query lines in one file) and the shared
`--corpus/--queries` pair. Each run seeds a temporary store with the configured embedder.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from supermemory.bench.metrics import as_docs, docs_of_memories, gate_failures, query_metrics, render, summarise
from supermemory.jsonl import read_jsonl

MODES = ("full", "lexical", "vector")


def add_arguments(parser) -> None:
    """CLI flags of `supermemory bench` (kept here so the benchmark owns its interface)."""
    parser.add_argument("cases", nargs="?", help="cases.jsonl (memory + query lines)")
    parser.add_argument("--corpus", help="shared-format corpus.jsonl")
    parser.add_argument("--queries", help="shared-format queries.jsonl")
    parser.add_argument("--json", action="store_true", help="print metrics as JSON")
    parser.add_argument("--mode", choices=MODES, default="full",
                        help="full ranker, or the lexical-only / vector-only baseline")
    parser.add_argument("--limit", type=int, default=10, help="results per query (default 10)")
    parser.add_argument("--max-queries", type=int, help="evaluate only the first N queries (bounded CI runs)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a setting for this run, e.g. ranking.mmr_lambda=0.3")
    parser.add_argument("--provider", help="embedding provider for this run (onnx, hash)")
    parser.add_argument("--fail-under-recall", type=float, help="exit 1 if Recall@5 is below this")
    parser.add_argument("--fail-under-mrr", type=float, help="exit 1 if MRR@10 is below this")
    parser.add_argument("--fail-over-negative", type=float,
                        help="exit 1 if the share of negative queries returning any hit is above this")
    parser.add_argument("--perf", action="store_true",
                        help="run the performance benchmark instead (supermemory/bench/perf.py); exit 1 when "
                             "initialize, the SessionStart hook, warm recall or warm remember is over 3x its target")
    parser.add_argument("--quick", action="store_true", help="with --perf: 1k memories only, bounded time")
    parser.add_argument("--details", help="write per-query results to this JSONL file")
    parser.add_argument("--store", metavar="DIR", help="keep the seeded store in DIR and reuse it for the same documents")
    parser.add_argument("--ignore-times", action="store_true",
                        help="write every memory at the wall clock, ignoring created_at (figures as before times)")


CASE_TYPES = ("memory", "query", "include", "meta")   # the line types of a cases file


def load_cases(path) -> tuple[list[dict], list[dict]]:
    """Split a cases.jsonl into (memories, queries), normalised to the shared shapes."""
    docs, queries, _ = load_cases_file(path)
    return docs, queries


def load_cases_file(path) -> tuple[list[dict], list[dict], str | None]:
    """(memories, queries, query-time "now") of a cases-format file.

    Besides memory and query lines a file may hold `{"type": "meta", "now": ISO}` (the instant the
    queries are asked at) and `{"type": "include", "path": "cases.jsonl"}` (the memory lines and the
    meta "now" of another cases file, its path relative to this one; its queries are not taken).
    """
    from supermemory.errors import InvalidInputError

    docs, queries, now = [], [], None
    unknown = []
    for number, row in enumerate(read_jsonl(path), 1):
        kind = row.get("type") if isinstance(row, dict) else None
        if kind not in CASE_TYPES:
            unknown.append(number)
            continue
        if kind == "memory":
            docs.append({"id": row["id"], "text": row["text"], "title": row.get("title"),
                         "kind": row.get("kind", "note"), "tags": row.get("tags", []),
                         "importance": row.get("importance"), "pinned": bool(row.get("pinned", False)),
                         "created_at": row.get("created_at"), "status": row.get("status"),
                         "meta": row.get("meta", {})})
        elif kind == "query":
            queries.append({"id": row["id"], "query": row["query"], "relevant": row.get("relevant", []),
                            "meta": {"category_name": row.get("category", "uncategorised"), **row.get("meta", {})}})
        elif kind == "include":
            included, _, included_now = load_cases_file(Path(path).parent / row["path"])
            docs.extend(included)
            now = now or included_now
        elif kind == "meta" and row.get("now"):
            now = row["now"]
    if unknown:   # a file of another shape read as cases measured nothing and passed (fresh-user run fu34, D5)
        raise InvalidInputError(
            f"{path}: {len(unknown)} line(s) have no \"type\" of {', '.join(CASE_TYPES)} (JSON line {unknown[0]} first); "
            "a cases file holds memory and query lines (bench/README.md), a corpus and queries go to --corpus and --queries")
    return docs, queries, now


class BenchClock:
    """A store clock the bench sets: each memory is written at its `created_at`, queries run at one
    fixed "now"; while unset it is the wall clock."""

    def __init__(self):
        self.at: float | None = None

    def __call__(self) -> float:
        return self.at if self.at is not None else time.time()


def query_now(docs: list[dict], now: str | None) -> float | None:
    """The instant queries are asked at: `now` (ISO) when given, else the latest `created_at` + 1 day,
    None when no memory carries a time (the wall clock, as before times existed)."""
    from supermemory.timeparse import from_iso

    if now:
        return from_iso(now)
    times = [from_iso(d["created_at"]) for d in docs if d.get("created_at")]
    return max(times) + 86400 if times else None


def scope_namespace(scope) -> str:
    """The namespace a bench set's `meta.scope` is seeded into and searched in."""
    from supermemory.config import normalize_namespace

    return normalize_namespace("s-" + str(scope))


def seed(store, docs: list[dict], progress=None, clock: BenchClock | None = None) -> dict:
    """Insert corpus docs (batch-embedded) and return {doc id: memory id}.

    With a `clock` (the store's) and docs that carry `created_at`, the docs are written oldest first,
    each at its own time; docs without one come first, at the wall clock. Without a clock times are
    ignored and all docs go in one batch.
    """
    from supermemory.timeparse import from_iso

    items = []
    for doc in docs:
        scope = (doc.get("meta") or {}).get("scope")
        items.append({"content": doc["text"], "title": doc.get("title") or None, "kind": doc.get("kind", "note"),
                      "tags": doc.get("tags") or [], "importance": doc.get("importance"),
                      "pinned": doc.get("pinned", False), "status": doc.get("status"),
                      "namespace": scope_namespace(scope) if scope is not None else "bench"})
    times = [from_iso(doc.get("created_at")) for doc in docs]
    if clock is None or not any(t is not None for t in times):
        ids = store.remember_many(items, progress=progress, create_namespace=True)
        return {doc["id"]: mid for doc, mid in zip(docs, ids)}
    groups: dict = {}
    for index, at in enumerate(times):
        groups.setdefault(at, []).append(index)
    mapping = {}
    for at in sorted(groups, key=lambda t: (t is not None, t or 0.0)):
        clock.at = at
        ids = store.remember_many([items[i] for i in groups[at]], create_namespace=True)
        mapping.update({docs[i]["id"]: mid for i, mid in zip(groups[at], ids)})
    clock.at = None
    return mapping


def evaluate(store, docs, queries, *, mode: str = "full", limit: int = 10, details=None,
             clock: BenchClock | None = None, now: str | None = None, seeded: dict | None = None) -> dict:
    """Run each query and aggregate the metrics (overall, per category, negatives).

    :param clock: the store's `BenchClock`: memories are written at their `created_at` and the
        queries asked at `query_now(docs, now)`, so "this week" means the same on every run.
    """
    from supermemory.errors import InvalidInputError

    from supermemory.progress import progress_printer

    doc_to_mem = seeded if seeded is not None else seed(
        store, docs, progress=progress_printer("seeding") if sys.stderr.isatty() else None, clock=clock)
    if clock is not None:
        clock.at = query_now(docs, now)
    docs_of = docs_of_memories(doc_to_mem)
    overrides = {}
    if mode != "full":
        overrides = {"relative_cutoff": 0.0}
    per_query = []
    latencies = []
    tokens = []
    for q in queries:
        scope = (q.get("meta") or {}).get("scope")
        namespace = scope_namespace(scope) if scope is not None else "bench"
        started = time.perf_counter()
        try:
            result = store.recall(q["query"], limit=limit, namespace=namespace, touch=False,
                                  channels=("lexical",) if mode == "lexical" else ("vector",) if mode == "vector"
                                  else ("lexical", "vector"), origin="bench", **overrides)
        except InvalidInputError as exc:  # e.g. an empty query in third-party data: counts as a miss
            sys.stderr.write(f"query {q['id']}: {exc}\n")
            result = {"results": [], "tokens": 0}
        latencies.append((time.perf_counter() - started) * 1000)
        tokens.append(result["tokens"])
        relevant = set(q.get("relevant") or [])
        ranked = as_docs([r["id"] for r in result["results"]], docs_of, relevant)
        row = {"id": q["id"], "category": (q.get("meta") or {}).get("category_name"), "hits": len(ranked),
               "relevant": sorted(relevant), "ranked": ranked[:limit]}
        row.update(query_metrics(ranked, relevant))
        per_query.append(row)
        if details is not None:
            details.write(json.dumps(row, ensure_ascii=False) + "\n")
    return summarise(per_query, latencies, tokens, mode=mode, n_docs=len(docs))


def main(args) -> int:
    """Entry point of `supermemory bench`."""
    from supermemory.errors import InvalidInputError

    if args.perf:
        from supermemory.bench.perf import run_perf

        return run_perf(args)
    now = None
    if args.cases:
        docs, queries, now = load_cases_file(args.cases)
    elif args.corpus and args.queries:
        docs, queries = read_jsonl(args.corpus), read_jsonl(args.queries)
    else:
        raise InvalidInputError("give CASES.jsonl, or --corpus and --queries")
    if args.max_queries:
        queries = queries[: args.max_queries]
    summary = run(docs, queries, mode=args.mode, limit=args.limit, overrides=args.set, provider=args.provider,
                  details_path=args.details, now=now, times=not args.ignore_times, store_dir=args.store)
    print(json.dumps(summary, indent=2, ensure_ascii=False) if args.json else render(summary))
    failed = gate_failures(summary, min_recall=args.fail_under_recall, min_mrr=args.fail_under_mrr,
                           max_negative=args.fail_over_negative)
    for message in failed:
        sys.stderr.write(f"bench gate failed: {message}\n")
    return 1 if failed else 0


def run(docs, queries, *, mode="full", limit=10, overrides=(), provider=None, details_path=None, now=None,
        times: bool = True, store_dir=None) -> dict:
    """Seed a throw-away store under a temp dir and evaluate; settings from the user's config + overrides.

    :param store_dir: keep the seeded store there and reuse it on the next run over the same documents
        (embedding the corpus is most of a run; the three modes and every setting share one store).
    """
    import copy
    import tempfile

    from supermemory.config import Config, load_config
    from supermemory.settings import coerce_value
    from supermemory.core import MemoryStore

    base = load_config()
    settings = copy.deepcopy(base.settings)
    for item in overrides or ():
        key, _, value = item.partition("=")
        node = settings
        parts = key.strip().split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = coerce_value(value.strip())
    if provider:
        settings["embedder"]["provider"] = provider
    settings["search_log"]["enabled"] = False
    if mode != "full":  # a baseline is one signal alone: no other features, no gates
        settings["ranking"]["weights"] = {name: 0.0 for name in settings["ranking"]["weights"]}
        settings["ranking"].update({"relevance_threshold": 0, "relevance_floor": 0.0, "vector_floor": 0.0, "mmr_lambda": 0.0,
                                    "relative_cutoff": 0.0, "glossary": False,
                                    "baseline": mode})
        settings["embedder"]["query_instruction_code_below"] = 0.0
    with tempfile.TemporaryDirectory(prefix="supermemory-bench-") as tmp:
        config = Config(home=Path(tmp), settings=settings, model_dir_override=base.model_dir,
                        explicit_namespace="bench")
        clock = BenchClock()
        db, seeded = Path(tmp) / "bench.db", None
        if store_dir:
            db, seeded = _kept_store(Path(store_dir), docs, provider or settings["embedder"]["provider"], times)
        store = MemoryStore(db, config=config, namespace="bench", cache_vectors=True, clock=clock)
        try:
            if store_dir and seeded is None:
                seeded = seed(store, docs, clock=clock if times else None)
                db.with_suffix(".map.json").write_text(json.dumps(seeded))
            handle = open(details_path, "w", encoding="utf-8") if details_path else None
            try:
                return evaluate(store, docs, queries, mode=mode, limit=limit, details=handle,
                                clock=clock if times else None, now=now, seeded=seeded)
            finally:
                if handle:
                    handle.close()
        finally:
            store.close()


def _kept_store(folder: Path, docs: list[dict], provider: str, times: bool) -> tuple[Path, dict | None]:
    """The kept store of these documents (by content) and its {doc id: memory id}, None until seeded."""
    import hashlib

    from supermemory.store.windows import WINDOWS_VERSION

    digest = hashlib.sha256(json.dumps([provider, times, docs, WINDOWS_VERSION], sort_keys=True, ensure_ascii=False)
                            .encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"bench-{digest}.db"
    mapping = db.with_suffix(".map.json")
    if mapping.exists():
        return db, json.loads(mapping.read_text())
    for stale in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        stale.unlink(missing_ok=True)
    return db, None
