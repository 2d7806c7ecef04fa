"""The benchmarks: retrieval metrics (`metrics`), the labelled-set runner (`runner`), performance (`perf`).

`supermemory bench` builds its flags with `add_arguments` and runs `main`. The package imports
nothing heavy: the CLI builds its parser (this package included) on every start, hooks too;
`perf` is loaded only for `bench --perf` (import it as `supermemory.bench.perf`).
"""
from __future__ import annotations

from supermemory.bench.metrics import gate_failures, query_metrics, render, summarise
from supermemory.bench.runner import MODES, add_arguments, evaluate, load_cases, main, run, scope_namespace, seed
from supermemory.jsonl import read_jsonl

__all__ = [
    "MODES",
    "add_arguments",
    "evaluate",
    "gate_failures",
    "load_cases",
    "main",
    "query_metrics",
    "read_jsonl",
    "render",
    "run",
    "scope_namespace",
    "seed",
    "summarise",
]
