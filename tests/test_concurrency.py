"""Four processes write one WAL database at once: an MCP server, a hook, and two CLI-like workers.

Each reports what it did; afterwards the counts are exact, nothing ever saw `database is locked`
or a StorageError, and the FTS / vector indexes agree with the rows.
"""
from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from helpers.common import (LineReader, McpClient, check_consistency, close_pipes, python_script, run_slow,
                            subprocess_env)
from supermemory.config import Config
from supermemory.core import MemoryStore, parse_id
from supermemory.embed import HashProvider

NAMESPACE = "proj"
SESSION = "c0ffee00-0000-4000-8000-000000000001"


def _transcript_line(n: int, cwd: Path) -> str:
    kind = "user" if n % 2 == 0 else "assistant"
    content = (f"Request number {n}: please look at module{n}.py and fix the flaky check {n}" if kind == "user"
               else [{"type": "text", "text": f"Looked at module{n}.py; the fix for check {n} is in."}])
    return json.dumps({"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": str(cwd),
                       "sessionId": SESSION, "version": "2.0.50", "gitBranch": "main", "type": kind,
                       "message": {"role": kind, "content": content},
                       "uuid": f"a0000000-0000-4000-8000-{n:012d}", "timestamp": f"2026-11-30T10:{n // 60:02d}:"
                       f"{n % 60:02d}.000Z"}) + "\n"


class McpDriver(threading.Thread):
    """Drives remember / update / recall / forget through the live server; records what it did."""

    def __init__(self, client: McpClient, ops: int, seed: int):
        super().__init__(daemon=True)
        self.client, self.ops, self.rng = client, ops, random.Random(seed)
        self.created: list[int] = []
        self.forgotten: list[int] = []
        self.live: list[int] = []
        self.updated = 0
        self.errors: list[str] = []
        self.failure: BaseException | None = None

    def call(self, name: str, arguments: dict) -> dict:
        result = self.client.tool(name, arguments, timeout=120)
        if result.get("isError"):
            self.errors.append(f"{name}: {result['content'][0]['text']}")
            return {}
        return result["structuredContent"]

    def run(self) -> None:
        try:
            for n in range(self.ops):
                op = "remember" if not self.live else self.rng.choices(
                    ("remember", "update", "recall", "forget"), (0.4, 0.25, 0.2, 0.15))[0]
                if op == "remember":
                    out = self.call("memory_remember", {"content": f"mcp memory {n} zzmcp{n}zz about the server "
                                                                   f"cache {self.rng.random()}", "kind": "fact"})
                    if out:
                        assert out["status"] == "created", out
                        self.live.append(parse_id(out["id"]))
                        self.created.append(self.live[-1])
                elif op == "update":
                    index = self.rng.randrange(len(self.live))
                    out = self.call("memory_update", {"id": f"M{self.live[index]}",
                                                      "content": f"mcp memory {n} revised {self.rng.random()}"})
                    if out:
                        self.live[index] = parse_id(out["id"])
                        self.updated += 1
                elif op == "recall":
                    self.call("memory_recall", {"query": "server cache memory", "limit": 5})
                else:
                    victim = self.live.pop(self.rng.randrange(len(self.live)))
                    if self.call("memory_forget", {"ids": [f"M{victim}"]}):
                        self.forgotten.append(victim)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the test thread
            self.failure = exc


class HookDriver(threading.Thread):
    """Runs `supermemory hook session-end` repeatedly while the transcript grows."""

    def __init__(self, home: Path, project: Path, transcript: Path, rounds: int):
        super().__init__(daemon=True)
        self.home, self.project, self.transcript, self.rounds = home, project, transcript, rounds
        self.stderr: list[str] = []
        self.codes: list[int] = []
        self.captures: list[dict] = []  # each run's `captured: {...}` report (logged with -v)
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            n = 0
            for _ in range(self.rounds):
                with open(self.transcript, "a", encoding="utf-8") as handle:
                    for _ in range(4):
                        handle.write(_transcript_line(n, self.project))
                        n += 1
                payload = {"session_id": SESSION, "transcript_path": str(self.transcript), "cwd": str(self.project),
                           "hook_event_name": "SessionEnd", "reason": "exit"}
                done = subprocess.run([sys.executable, "-m", "supermemory", "-v", "hook", "session-end"],
                                      input=json.dumps(payload).encode(), capture_output=True, timeout=180,
                                      cwd=self.project, env=subprocess_env(self.home))
                self.codes.append(done.returncode)
                self.stderr.append(done.stderr.decode("utf-8", "replace"))
                for line in self.stderr[-1].splitlines():
                    if line.startswith("supermemory: captured: "):
                        self.captures.append(ast.literal_eval(line.split("captured: ", 1)[1]))
        except BaseException as exc:  # noqa: BLE001 - re-raised on the test thread
            self.failure = exc


def _hammer(tmp_path: Path, *, worker_ops: int, mcp_ops: int, hook_rounds: int) -> dict:
    home = tmp_path / "home"
    project = tmp_path / NAMESPACE
    project.mkdir()
    (project / ".git").mkdir()
    home.mkdir()
    # The hook's watchdog must not fire because the machine is busy: that is tested elsewhere.
    (home / "config.json").write_text(json.dumps({"hooks": {"budget_seconds": 300}}))
    db_path = home / "memory.db"
    with MemoryStore(db_path, config=Config(home=home), embedder=HashProvider(), namespace=NAMESPACE) as store:
        store.remember("seed memory so the database is pinned before the race", kind="fact")

    workers = []
    for index in range(2):
        proc = subprocess.Popen(python_script("store_worker.py", str(db_path), str(home), f"w{index}",
                                              str(worker_ops), str(1000 + index), NAMESPACE),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=project, env=subprocess_env(home))
        workers.append((proc, LineReader(proc.stdout), LineReader(proc.stderr)))
    client = McpClient(home, project)
    try:
        assert "result" in client.initialize()
        for proc, out, _ in workers:
            assert out.next(120) == b"ready\n"
        transcript = tmp_path / "transcripts" / f"{SESSION}.jsonl"
        transcript.parent.mkdir()
        mcp = McpDriver(client, mcp_ops, seed=7)
        hook = HookDriver(home, project, transcript, hook_rounds)
        for proc, _, _ in workers:
            proc.stdin.write(b"go\n")
            proc.stdin.flush()
        mcp.start()
        hook.start()
        reports = []
        for proc, out, err in workers:
            line = out.next(600)
            assert line is not None, b"".join(err.drain()).decode()
            reports.append(json.loads(line))
            assert proc.wait(timeout=120) == 0
            reports[-1]["stderr"] = b"".join(err.drain()).decode("utf-8", "replace")
        mcp.join(600)
        hook.join(600)
        assert not mcp.is_alive() and not hook.is_alive()
        if mcp.failure:
            raise mcp.failure
        if hook.failure:
            raise hook.failure
        code, server_err = client.close()
    finally:
        client.kill()
        for proc, _, _ in workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
            close_pipes(proc)

    # --- nothing failed, nothing was locked ---------------------------------------------------------
    stderr_all = server_err + "".join(hook.stderr) + "".join(r["stderr"] for r in reports)
    assert "database is locked" not in stderr_all
    assert "StorageError" not in stderr_all and "Traceback" not in stderr_all, stderr_all[-3000:]
    for report in reports:
        assert report["errors"] == [], report["errors"][:5]
    assert mcp.errors == [], mcp.errors[:5]
    assert code == 0
    assert hook.codes == [0] * hook_rounds
    assert not any("exceeded" in e or "session continues" in e for e in hook.stderr), hook.stderr

    # --- exact counts ---------------------------------------------------------------------------------
    counts = check_consistency(db_path)
    created = sum(len(r["created"]) for r in reports) + len(mcp.created) + 1  # + the seed
    updated = sum(r["updated"] for r in reports) + mcp.updated
    forgotten = sum(len(r["forgotten"]) for r in reports) + len(mcp.forgotten)
    with MemoryStore(db_path, config=Config(home=home), embedder=HashProvider(), namespace=NAMESPACE) as store:
        sessions = store.conn.execute("SELECT id, superseded_by, deleted_at FROM memories WHERE kind = 'session'"
                                      ).fetchall()
        live_facts = {r[0] for r in store.conn.execute(
            "SELECT id FROM memories WHERE kind = 'fact' AND superseded_by IS NULL AND deleted_at IS NULL")}
        deleted = {r[0] for r in store.conn.execute("SELECT id FROM memories WHERE deleted_at IS NOT NULL")}
        stats = store.stats(namespace="*")
    live_sessions = [s for s in sessions if s[1] is None and s[2] is None]
    assert len(live_sessions) == 1, sessions  # one session memory, a version per capture
    # every round added requests, so every capture wrote a version; SessionEnd's maintenance
    # prunes old session versions, and says how many
    assert [c["status"] for c in hook.captures] == ["created"] + ["updated"] * (hook_rounds - 1), hook.captures
    pruned = sum(c.get("maintenance", {}).get("session_versions_pruned", 0) for c in hook.captures)
    assert len(sessions) == hook_rounds - pruned
    expected_live = set().union(*(r["live"] for r in reports)) | set(mcp.live)
    assert live_facts - expected_live == {parse_id("M1")} and expected_live <= live_facts
    assert deleted == set().union(*(r["forgotten"] for r in reports)) | set(mcp.forgotten)
    assert counts["live"] == created - forgotten + 1  # + the one live session memory
    assert counts["memories"] == created + updated + len(sessions)
    assert counts["superseded"] == updated + len(sessions) - 1
    assert counts["deleted"] == forgotten
    assert stats["memories"] == counts["live"]
    if counts["vec_mem"] is not None:
        assert counts["vec_mem"] == counts["live_chunks"]
    ops = sum(len(r["created"]) + r["updated"] + len(r["forgotten"]) + r["recalls"] for r in reports)
    summary = {"worker_ops": ops, "mcp_ops": mcp_ops, "hook_rounds": hook_rounds, **counts}
    print(f"concurrency: {summary}")
    return summary


def test_four_processes_share_one_database_without_lock_errors_and_with_exact_counts(tmp_path):
    _hammer(tmp_path, worker_ops=100, mcp_ops=60, hook_rounds=3)


@pytest.mark.slow
def test_four_processes_share_one_database_under_heavy_load(tmp_path, request):
    if not run_slow(request.config):
        pytest.skip("heavy variant: run with -m slow or SUPERMEMORY_SLOW_TESTS=1")
    _hammer(tmp_path, worker_ops=500, mcp_ops=300, hook_rounds=10)
