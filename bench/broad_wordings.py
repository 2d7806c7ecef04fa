#!/usr/bin/env python3
"""Broad questions in everyday words (issue 16, item 3): does a question that asks by kind, task status or time, worded
as people type it, get the matching memories back rather than nothing?

bench/broad.jsonl holds the broad questions the cases memories were labelled with; this set measures wording. Its
170 questions were written by three engineers who never saw the intent lexicon (`text/lexicons/intent_words.txt`),
each told only the memory kinds and what a broad question is: `dev-1` and `dev-2` were then used to widen the
lexicon, `held-out` was not (bench/RESULTS.md, "Broad questions in everyday words"). Each line's `want` says which
memories answer it (kinds, task status, age in days); a question no memory of the store answers counts as right
when it comes back empty. The store is sixteen memories of one project, dated relative to a fixed Friday noon.

    python3 bench/broad_wordings.py [--set held-out] [--show] [--fail-under 0.8]
"""
from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

NOW = dt.datetime(2026, 12, 4, 12, 0).timestamp()    # a Friday noon, local time (the sets' authors assumed a Friday)
DAY = 86400.0
MEMORIES = [   # kind, task status, age in days, text
    ("task", "open", 1, "Migrate the billing worker from Celery to RQ; the retry logic in billing/tasks.py still needs porting."),
    ("task", "open", 3, "Add pagination to GET /v2/invoices before the partner launch."),
    ("task", "done", 9, "Upgrade Postgres from 14 to 16 in staging."),
    ("task", "open", 20, "Write a runbook for rotating the Stripe webhook secret."),
    ("decision", None, 2, "We chose ruff over flake8+isort for linting; config lives in pyproject.toml."),
    ("decision", None, 15, "Decided to keep feature flags in the database instead of LaunchDarkly to avoid the cost."),
    ("decision", None, 40, "API responses use snake_case keys everywhere, including the mobile endpoints."),
    ("gotcha", None, 4, "pytest-xdist breaks the fixtures that share the local redis; run tests/integration with -n 0."),
    ("gotcha", None, 30, "The Docker image must pin libpq 15 or psycopg fails to connect to RDS with SCRAM."),
    ("preference", None, 10, "User prefers small commits with imperative subject lines and no emoji."),
    ("preference", None, 50, "User wants type hints on every public function and mypy --strict to pass."),
    ("note", None, 1, "Staging deploys happen from the release/* branches via the deploy-staging GitHub workflow."),
    ("note", None, 25, "The analytics dashboard queries the read replica, never the primary."),
    ("fact", None, 6, "The invoices table has 40M rows; adding an index needs CREATE INDEX CONCURRENTLY."),
    ("note", None, 0.1, "Paired with Dana on the flaky checkout test; the fix is a retry around the payment sandbox call."),
    ("fact", None, 60, "Our SLA for the public API is 99.9% monthly uptime."),
]


def answers(want: dict, kind: str, status: str | None, age: float) -> bool:
    return ((want.get("kinds") is None or kind in want["kinds"]) and (want.get("status") is None or status == want["status"])
            and (want.get("max_age_days") is None or age <= want["max_age_days"])
            and (want.get("min_age_days") is None or age >= want["min_age_days"]))


def main(argv: list[str] | None = None) -> int:
    from supermemory.config import Config, load_config
    from supermemory.core import MemoryStore

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", help="only this set (dev-1, dev-2, held-out)")
    parser.add_argument("--show", action="store_true", help="print every question that goes wrong")
    parser.add_argument("--fail-under", type=float, help="exit 1 when the share answered right, all sets together, is lower")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in open(Path(__file__).with_name("broad_wordings.jsonl"), encoding="utf-8")]
    base = load_config()
    settings = copy.deepcopy(base.settings)
    settings["search_log"]["enabled"] = False
    with tempfile.TemporaryDirectory(prefix="supermemory-broad-") as tmp:
        config = Config(home=Path(tmp), settings=settings, model_dir_override=base.model_dir, explicit_namespace="p")
        store = MemoryStore(Path(tmp) / "m.db", config=config, namespace="p", clock=lambda: NOW)
        meta = {}
        for kind, status, age, text in MEMORIES:
            made = store.remember(text, kind=kind, status=status, at=NOW - age * DAY)
            meta[made["id"]] = (kind, status, age)
        totals: dict[str, list] = {}
        for row in rows:
            if args.set and row["set"] != args.set:
                continue
            got = [r["id"] for r in store.recall(row["query"], limit=5, touch=False)["results"]]
            right = [i for i in got if answers(row["want"], *meta[i])]
            possible = any(answers(row["want"], *m) for m in meta.values())
            ok = bool(right) if possible else not got
            totals.setdefault(row["set"], []).append((ok, len(right) / len(got) if got else float(not possible)))
            if args.show and not ok:
                print(f"  wrong [{row['set']}] {row['query']!r}: {len(got)} results, {len(right)} matching")
        store.close()
    for name, marks in totals.items():
        print(f"{name:9} {sum(ok for ok, _ in marks)}/{len(marks)} answered right, "
              f"precision@5 {sum(p for _, p in marks) / len(marks):.3f}")
    marks = [ok for group in totals.values() for ok, _ in group]
    share = sum(marks) / max(1, len(marks))
    print(f"all       {share:.3f} answered right")
    if args.fail_under is not None and share < args.fail_under:
        print(f"FAIL: {share:.3f} < {args.fail_under}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
