"""Shared plumbing for the robustness tests: subprocess envs, timed line reading, and the
index-agreement check every write-heavy test ends with."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HELPERS = Path(__file__).resolve().parent
LIVE = "m.superseded_by IS NULL AND m.deleted_at IS NULL"


def subprocess_env(home: Path, **extra: str) -> dict:
    """An environment for `python -m supermemory …` / helper scripts: isolated home, hash embedder."""
    env = dict(os.environ)
    for var in ("SUPERMEMORY_NAMESPACE", "SUPERMEMORY_PROJECT_CWD", "CLAUDE_PROJECT_DIR", "SUPERMEMORY_MODEL_DIR",
                "CODEX_HOME", "SUPERMEMORY_PLATFORM"):
        env.pop(var, None)
    env.update(SUPERMEMORY_HOME=str(home), SUPERMEMORY_EMBED_PROVIDER="hash", PYTHONUNBUFFERED="1",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def run_cli(args, env: dict, *, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess:
    """`python -m supermemory ARGS` in `env` (its `_CWD`, else the repository): the CLI as a user runs it; a failure
    raises with its stderr unless `check` is False."""
    proc = subprocess.run([sys.executable, "-m", "supermemory", *args], cwd=env.get("_CWD", REPO), env=env,
                          capture_output=True, text=True, input=stdin, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} failed ({proc.returncode}): {proc.stderr}")
    return proc


def run_slow(config) -> bool:
    """Heavy variants run only when asked: `-m slow` or SUPERMEMORY_SLOW_TESTS=1."""
    expr = (config.getoption("markexpr", "") or "").replace("not slow", "")
    return "slow" in expr or os.environ.get("SUPERMEMORY_SLOW_TESTS") == "1"


def close_pipes(proc: subprocess.Popen) -> None:
    """Close a finished (or killed) child's pipes so no ResourceWarning escapes."""
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except (BrokenPipeError, OSError):
                pass


def python_script(name: str, *args: str) -> list[str]:
    return [sys.executable, str(HELPERS / name), *args]


class LineReader:
    """Reads a pipe on a daemon thread so the test can wait for lines with a timeout (no sleeps)."""

    def __init__(self, pipe):
        self.lines: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._pump, args=(pipe,), daemon=True)
        self.thread.start()

    def _pump(self, pipe) -> None:
        try:
            for line in iter(pipe.readline, b""):
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        self.lines.put(None)

    def next(self, timeout: float = 60.0):
        """The next line (bytes), or None at EOF; raises queue.Empty after `timeout` seconds."""
        return self.lines.get(timeout=timeout)

    def drain(self, timeout: float = 60.0) -> list[bytes]:
        """Every remaining line up to EOF."""
        out = []
        while True:
            line = self.next(timeout)
            if line is None:
                return out
            out.append(line)


class McpClient:
    """A live `supermemory mcp` subprocess driven over its stdin, one request at a time."""

    def __init__(self, home: Path, cwd: Path, *, prefix: tuple[str, ...] = (), drop_env: tuple[str, ...] = (),
                 **env: str):
        """:param prefix: a command the server runs under (e.g. strace); :param drop_env: variables to unset."""
        environ = subprocess_env(home, **env)
        for name in drop_env:
            environ.pop(name, None)
        self.proc = subprocess.Popen([*prefix, sys.executable, "-m", "supermemory", "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=environ)
        self.out = LineReader(self.proc.stdout)
        self.err = LineReader(self.proc.stderr)
        self.seq = 0

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data if data.endswith(b"\n") else data + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None, *, timeout: float = 60.0) -> dict:
        self.seq += 1
        request_id = f"req-{self.seq}"
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        self.send_raw(json.dumps(frame).encode())
        while True:
            line = self.out.next(timeout)
            assert line is not None, "the MCP server closed its stdout: " + self.stderr_text()
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message

    def initialize(self) -> dict:
        result = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "robustness-test", "version": "1"}})
        self.send_raw(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return result

    def tool(self, name: str, arguments: dict, *, timeout: float = 60.0) -> dict:
        """The tools/call result (asserts it is not a JSON-RPC error)."""
        response = self.request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)
        assert "result" in response, response
        return response["result"]

    def stderr_text(self) -> str:
        lines = []
        while True:
            try:
                line = self.err.lines.get_nowait()
            except queue.Empty:
                break
            if line is None:
                break
            lines.append(line)
        return b"".join(lines).decode("utf-8", "replace")

    def kill(self) -> None:
        """End the process if it still runs and close its pipes (for `finally:` blocks)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        close_pipes(self.proc)

    def close(self, timeout: float = 60.0) -> tuple[int, str]:
        """EOF on stdin; returns (exit code, stderr)."""
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        code = self.proc.wait(timeout=timeout)
        err = b"".join(self.err.drain(timeout)).decode("utf-8", "replace")
        self.out.drain(timeout)
        close_pipes(self.proc)
        return code, err

    def kill(self) -> None:
        """Make sure the server is gone and its pipes are closed (idempotent)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        close_pipes(self.proc)


def open_conn(db_path: Path, vectors: str = "auto"):
    """A plain connection with the driver a store with these `vectors` uses (sqlite-vec loaded when available).

    Use the same driver as any store open in this process: two SQLite libraries (stdlib and
    sqlean) on one file in one process break each other's POSIX locks.
    """
    from supermemory.store import db as dbm

    driver = dbm.choose_driver(vectors=vectors)
    return dbm.connect(str(db_path), driver), driver


def check_consistency(db_path: Path, *, expect_vectors: bool = True, vectors: str = "auto") -> dict:
    """Assert the DB is intact and its indexes agree with its rows; returns counts.

    integrity_check and the FTS5 integrity-check pass; every live memory's chunks have an fts row
    (with the right namespace) and a vectors row (but a long text's last ones, still waiting for theirs);
    no fts rowid without a live chunk; vec_mem holds exactly the live chunks with a vector when
    sqlite-vec is loaded; version chains are well formed.
    """
    from supermemory.store import db as dbm

    conn, driver = open_conn(db_path, vectors)
    try:
        rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
        assert rows == ["ok"], f"integrity_check: {rows[:5]}"
        conn.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")
        live_chunks = {r[0]: r[1] for r in conn.execute(
            f"SELECT c.id, m.namespace FROM chunks c JOIN memories m ON m.id = c.memory_id WHERE {LIVE}")}
        all_chunks = {r[0] for r in conn.execute("SELECT id FROM chunks")}
        fts = {r[0]: r[1] for r in conn.execute("SELECT rowid, ns FROM fts")}
        assert set(fts) == set(live_chunks), (
            f"fts/live chunk mismatch: {len(set(live_chunks) - set(fts))} live chunks without an fts row, "
            f"{len(set(fts) - set(live_chunks))} fts rows without a live chunk")
        bad_ns = [c for c, ns in live_chunks.items() if fts[c] != "ns_" + ns]
        assert not bad_ns, f"fts rows with the wrong namespace: {bad_ns[:5]}"
        vectors = {r[0] for r in conn.execute("SELECT chunk_id FROM vectors")}
        assert vectors <= all_chunks, f"orphan vectors: {sorted(vectors - all_chunks)[:5]}"
        if expect_vectors:   # a long text's chunks after the first `store.write_embed_chunks` get theirs later,
            # in order: the chunks still without one are always a memory's last ones, after its first chunk
            missing = set(live_chunks) - vectors
            early = [r[0] for r in conn.execute(
                "SELECT c.id FROM chunks c JOIN chunks later ON later.memory_id = c.memory_id AND later.seq > c.seq "
                "JOIN vectors v ON v.chunk_id = later.id")] + [r[0] for r in conn.execute(
                "SELECT id FROM chunks WHERE seq = 0")]
            stranded = sorted(missing & set(early))
            assert not stranded, f"live chunks without vectors before ones with: {stranded[:5]}"
        orphan_chunks = conn.execute("SELECT count(*) FROM chunks c LEFT JOIN memories m ON m.id = c.memory_id "
                                     "WHERE m.id IS NULL").fetchone()[0]
        assert orphan_chunks == 0, f"{orphan_chunks} chunks without a memory"
        chunkless = conn.execute("SELECT count(*) FROM memories m WHERE NOT EXISTS "
                                 "(SELECT 1 FROM chunks c WHERE c.memory_id = m.id)").fetchone()[0]
        assert chunkless == 0, f"{chunkless} memories without chunks"
        dangling = conn.execute("SELECT count(*) FROM memories m WHERE m.superseded_by IS NOT NULL AND NOT EXISTS "
                                "(SELECT 1 FROM memories n WHERE n.id = m.superseded_by)").fetchone()[0]
        assert dangling == 0, f"{dangling} versions superseded by a missing row"
        heads = conn.execute("SELECT coalesce(root_id, id) AS root, count(*) FROM memories WHERE superseded_by IS NULL "
                             "GROUP BY root HAVING count(*) != 1").fetchall()
        assert not heads, f"version chains without exactly one head: {heads[:5]}"
        vec_rows = None
        if driver.vec and dbm.vec_table_exists(conn) and dbm.get_meta(conn, "vec_dirty") != "1":
            vec = {r[0] for r in conn.execute("SELECT chunk_id FROM vec_mem")}
            indexed = set(live_chunks) & vectors
            assert vec == indexed, (
                f"vec_mem/live chunk mismatch: {len(indexed - vec)} missing, {len(vec - indexed)} extra")
            vec_rows = len(vec)
        counts = {
            "memories": conn.execute("SELECT count(*) FROM memories").fetchone()[0],
            "live": conn.execute(f"SELECT count(*) FROM memories m WHERE {LIVE}").fetchone()[0],
            "superseded": conn.execute("SELECT count(*) FROM memories WHERE superseded_by IS NOT NULL").fetchone()[0],
            "deleted": conn.execute("SELECT count(*) FROM memories WHERE deleted_at IS NOT NULL").fetchone()[0],
            "chunks": len(all_chunks), "live_chunks": len(live_chunks), "fts": len(fts), "vectors": len(vectors),
            "vec_mem": vec_rows,
        }
        return counts
    finally:
        conn.close()


def memory_states(db_path: Path, vectors: str = "auto") -> dict[int, tuple]:
    """id → (namespace, kind, superseded_by, deleted_at, body) for every row."""
    conn, _ = open_conn(db_path, vectors)
    try:
        return {r[0]: tuple(r[1:]) for r in conn.execute(
            "SELECT id, namespace, kind, superseded_by, deleted_at, body FROM memories")}
    finally:
        conn.close()


def age_search_index(store, old_tokens: str | None = None) -> None:
    """Make `store`'s FTS look as an older tokenizer left it: stamped v1 (optionally other tokens)."""
    from supermemory.store import db as dbm

    with store.context.txn():
        if old_tokens is not None:
            store.conn.execute("UPDATE fts SET tokens = ?", (old_tokens,))
        dbm.set_meta(store.conn, "tokenizer_version", "1")
