"""`supermemory index` under its line cap: durable memories before routine ones, superseded ones last."""
import os
import subprocess
import sys
from pathlib import Path

from supermemory.render import render_index_md

ROOT = Path(__file__).resolve().parents[1]


def _project(store):
    """A gotcha, two current decisions, an open task, a done task, a decision superseded by a link, then a
    burst of newer routine facts (importance as given: the default)."""
    ids = {"gotcha": store.remember("psql needs PGSSLMODE=disable locally", kind="gotcha")["id"],
           "old": store.remember("Use Poetry for dependency management.", kind="decision")["id"],
           "decision": store.remember("Orders live in PostgreSQL 15 for JSONB.", kind="decision")["id"],
           "task": store.remember("Migrate find_by_customer to the customer_id index.", kind="task")["id"],
           "done": store.remember("Write the refund webhook tests.", kind="task", status="done")["id"],
           "new": store.remember("Dependencies are managed with uv.", kind="decision")["id"]}
    store.link(ids["new"], ids["old"], relation="supersedes")
    for i in range(8):
        store.remember(f"Concurrency probe number {i} noted widget-{i} on port 90{i:02d}.", kind="fact")
    return ids


def test_open_tasks_and_decisions_come_before_routine_facts_and_superseded_ones_last(store):
    ids = _project(store)
    full = [item["id"] for item in store.memory_index()["items"]]
    assert full[0] == ids["gotcha"]
    assert set(full[1:4]) == {ids["decision"], ids["task"], ids["new"]}    # open tasks and current decisions
    assert full.index(ids["done"]) > 3                                     # a finished task is routine
    assert full[-1] == ids["old"]                                          # superseded: the first to go
    capped = store.memory_index(max_lines=5)
    assert [item["id"] for item in capped["items"]] == full[:4]
    assert capped["more"] == len(full) - 4
    assert capped["left_out"] == {"fact": 8, "task": 1, "superseded": 1}
    out = render_index_md(capped)
    assert out["left_out"] == "8 fact, 1 task, 1 superseded"
    assert out["text"].splitlines()[-1].startswith(f"…and {len(full) - 4} more")


def test_the_cli_says_what_the_cap_left_out(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY")}
    env.update(SUPERMEMORY_HOME=str(tmp_path / "home"), SUPERMEMORY_EMBED_PROVIDER="hash", PYTHONPATH=str(ROOT))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "supermemory", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120, check=True).stdout

    run("remember", "Orders live in PostgreSQL 15.", "-k", "decision")
    for i in range(3):
        run("remember", f"probe fact {i}", "-k", "fact")
    out = tmp_path / "MEMORY.md"
    said = run("index", "--out", str(out), "--max-lines", "2")
    assert said == f"wrote 2 lines to {out} (3 memories left out: 3 fact)\n"
    assert out.read_text().startswith("- [M1 decision]")
