"""A CLI-like writer process for the concurrency test: a loop of MemoryStore calls on a shared DB.

Usage: store_worker.py DB_PATH HOME NAME OPS SEED NAMESPACE

Prints "ready" once the store is open, waits for one line on stdin ("go"), runs OPS random
operations (remember / update / recall / forget on its own memories, a fresh store per
operation as the CLI does), then prints one JSON report line: what it did, the ids it
created, the ids it expects to be live, and every error it saw.
"""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from supermemory.config import Config
from supermemory.core import MemoryStore, parse_id
from supermemory.embed import HashProvider
from supermemory.errors import StorageError, SupermemoryError

WORDS = ("cache", "build", "deploy", "sqlite", "index", "vector", "lock", "writer", "reader", "schema",
         "migration", "token", "budget", "ranking", "namespace", "session", "hook", "server", "client", "queue")


def content(rng: random.Random, name: str, n: int, big: bool) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(12))
    text = f"{name} memory {n} zz{name}{n}zz about {words}."
    if big:  # several chunks: longer write transactions
        text += " " + " ".join(f"{rng.choice(WORDS)}{i}" for i in range(900))
    return text


def main() -> int:
    db_path, home, name, ops, seed, namespace = sys.argv[1:7]
    ops, rng = int(ops), random.Random(int(seed))
    config = Config(home=Path(home))

    def store() -> MemoryStore:
        return MemoryStore(db_path, config=config, embedder=HashProvider(), namespace=namespace)

    with store():
        pass
    print("ready", flush=True)
    sys.stdin.readline()
    report = {"name": name, "created": [], "updated": 0, "forgotten": [], "recalls": 0, "errors": [],
              "versions": 0}
    live: list[int] = []
    for n in range(ops):
        op = "remember" if not live else rng.choices(("remember", "update", "recall", "forget"),
                                                     (0.4, 0.25, 0.2, 0.15))[0]
        try:
            with store() as s:
                if op == "remember":
                    result = s.remember(content(rng, name, n, big=rng.random() < 0.08), kind="fact",
                                        tags=[name], source={"platform": "cli"})
                    assert result["status"] == "created", result
                    live.append(parse_id(result["id"]))
                    report["created"].append(live[-1])
                elif op == "update":
                    index = rng.randrange(len(live))
                    result = s.update(live[index], content=content(rng, name, n, big=False) + " (revised)")
                    assert result["status"] == "updated", result
                    live[index] = parse_id(result["id"])
                    report["updated"] += 1
                elif op == "recall":
                    s.recall(f"{rng.choice(WORDS)} {rng.choice(WORDS)} memory", limit=5)
                    report["recalls"] += 1
                else:
                    victim = live.pop(rng.randrange(len(live)))
                    result = s.forget([victim])
                    assert result["forgotten"], result
                    report["forgotten"].append(victim)
        except StorageError as exc:
            report["errors"].append(f"StorageError during {op}: {exc}")
        except SupermemoryError as exc:
            report["errors"].append(f"{type(exc).__name__} during {op}: {exc}")
    report["live"] = sorted(live)
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
