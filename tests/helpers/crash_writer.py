"""The victim of the crash-safety test: writes forever and acknowledges each committed write.

Usage: crash_writer.py DB_PATH HOME SEED MAX_OPS

Prints "ready" once the store is open, then one line per write, only after the method returned
(so after COMMIT), flushed:  "R <id>" remember, "U <old> <new>" update, "F <id>" forget.
It picks memories to revise or forget from the database itself, so a write that committed but
was never acknowledged (killed in between) is picked up like any other. Exits 0 after MAX_OPS.
"""
from __future__ import annotations

import random
import sys
from pathlib import Path

from supermemory.config import Config
from supermemory.core import MemoryStore, parse_id
from supermemory.embed import HashProvider

NAMESPACE = "crash"


def main() -> int:
    db_path, home, seed, max_ops = sys.argv[1:5]
    rng = random.Random(int(seed))
    store = MemoryStore(db_path, config=Config(home=Path(home)), embedder=HashProvider(), namespace=NAMESPACE)
    print("ready", flush=True)
    for n in range(int(max_ops)):
        live = [r[0] for r in store.conn.execute(
            "SELECT id FROM memories WHERE namespace = ? AND superseded_by IS NULL AND deleted_at IS NULL",
            (NAMESPACE,))]
        op = "R" if len(live) < 3 else rng.choices("RUF", (0.7, 0.18, 0.12))[0]
        if op == "R":
            text = f"crash memory seed {seed} op {n} token zz{seed}x{n}zz about durable writes"
            if rng.random() < 0.2:  # a multi-chunk memory: a longer transaction to be killed in
                text += " " + " ".join(f"word{seed}w{i}" for i in range(rng.randint(300, 1500)))
            result = store.remember(text, kind="fact", tags=["crash"])
            print(f"R {parse_id(result['id'])}", flush=True)
        elif op == "U":
            old = rng.choice(live)
            result = store.update(old, content=f"revised by seed {seed} op {n} zzrev{seed}x{n}zz")
            print(f"U {old} {parse_id(result['id'])}", flush=True)
        else:
            victim = rng.choice(live)
            store.forget([victim])
            print(f"F {victim}", flush=True)
        if n % 25 == 24:
            store.recall("durable writes crash memory", limit=3)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
