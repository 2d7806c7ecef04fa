"""Backfill benchmark: generate a Claude Code + Codex history (default 400 sessions, ~150 MB, 12 projects), run
`supermemory backfill` on it in a child process, report sessions/s, MB/s, peak RSS, total time, and how many
planted secrets made it into the database file (must be 0).

The history is generated, never checked in: every session has its own requests, commands, errors, file names
and outputs (drawn from word pools with its own seed), and three of the redaction rule set's samples
(`tests/test_redact.py` RULE_CASES, so every rule is planted) in a user message, a command and a tool result.

    python bench/backfill_bench.py [--sessions 400] [--mb 150] [--projects 12] [--keep DIR] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.histories import ClaudeSession, CodexRollout, claude_path  # noqa: E402

VERBS = ["fix", "add", "refactor", "speed up", "document", "remove", "rename", "test", "debug", "port", "split",
         "cache", "validate", "log", "retry", "paginate", "migrate", "profile", "secure", "simplify"]
THINGS = ["login form", "invoice export", "search index", "rate limiter", "webhook handler", "CSV importer",
          "image resizer", "session store", "feature flags", "email queue", "billing report", "audit log",
          "GraphQL resolver", "cron scheduler", "PDF renderer", "OAuth callback", "S3 uploader", "metrics endpoint",
          "config loader", "plugin registry", "diff viewer", "notification service", "payment retry", "tenant router"]
WHY = ["it times out under load", "the numbers are off by one", "CI fails about once in five runs",
       "users see a blank page", "it leaks file handles", "the tests take twelve minutes", "it breaks on Windows paths",
       "the API returns 500 on empty input", "memory grows without bound", "it double-charges on retry",
       "Unicode names come out garbled", "the docs disagree with the code"]
LANGS = {"py": ("python -m pytest -q {f}", "ruff check {d}", "mypy {d}", "python -m {m} --help"),
         "ts": ("pnpm vitest run {f}", "pnpm eslint {d}", "pnpm tsc --noEmit", "node dist/{m}.js"),
         "go": ("go test ./{d}/...", "go vet ./{d}/...", "golangci-lint run ./{d}/...", "go run ./cmd/{m}"),
         "rs": ("cargo test -p {m}", "cargo clippy -p {m}", "cargo build --release -p {m}", "cargo run --bin {m}")}
ERRORS = ["AssertionError: expected 200, got 500", "TypeError: cannot read properties of undefined (reading 'id')",
          "panic: runtime error: index out of range [3] with length 3", "error[E0502]: cannot borrow `x` as mutable",
          "KeyError: 'tenant_id'", "FATAL: password authentication failed for user \"app\"",
          "ECONNREFUSED 127.0.0.1:5432", "sqlite3.OperationalError: database is locked",
          "ModuleNotFoundError: No module named 'yaml'", "TimeoutError: operation timed out after 30s"]
WORDS = ("alpha beta gamma delta request response handler retry buffer cache index token queue worker batch "
         "tenant invoice export render parse encode decode stream chunk schema column migrate commit branch "
         "deploy config flag metric latency error warning info debug trace span").split()


def rule_samples() -> list[tuple[str, str]]:
    """(sample text, the secret in it) for every redaction rule."""
    import test_redact as t

    return [(case[1], t._secret_of(case)) for case in t.RULE_CASES]


def _output(rng: random.Random, files: list[str], size: int) -> str:
    """A tool output of about `size` characters: log and listing lines over this session's file names."""
    lines, total = [], 0
    while total < size:
        f = rng.choice(files)
        kind = rng.random()
        if kind < 0.4:
            line = f"{f}:{rng.randint(1, 900)}: {' '.join(rng.choices(WORDS, k=rng.randint(4, 12)))}"
        elif kind < 0.7:
            line = (f"{rng.choice(['INFO', 'DEBUG', 'WARN'])} {rng.randint(10, 23)}:{rng.randint(10, 59)}:"
                    f"{rng.randint(10, 59)} {rng.choice(WORDS)}={rng.randint(0, 99999)} {rng.choice(WORDS)} ok")
        else:
            line = f"{f}::test_{rng.choice(WORDS)}_{rng.randint(1, 99)} {rng.choice(['PASSED', 'PASSED', 'SKIPPED'])}"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def generate(out: Path, *, sessions: int, mb: float, projects: int, seed: int = 7) -> dict:
    """Write the history under out/claude and out/codex; return what was planted."""
    rng = random.Random(seed)
    samples = rule_samples()
    planted: set[str] = set()
    names = [f"{rng.choice(['acme', 'north', 'blue', 'tiny', 'open', 'deep'])}-{rng.choice(THINGS).split()[0]}-{i}"
             for i in range(projects)]
    folders = {}
    for i, name in enumerate(names):
        folder = out / "work" / name
        if i % 4 != 3:        # every fourth project is a folder without git; one is gone (never created)
            (folder / ".git").mkdir(parents=True, exist_ok=True)
        elif i != projects - 1:
            folder.mkdir(parents=True, exist_ok=True)
        folders[name] = str(folder)
    budget = mb * 1e6
    weights = [rng.lognormvariate(0, 0.9) for _ in range(sessions)]
    scale = budget / sum(weights)
    sample_at = 0
    for n in range(sessions):
        srng = random.Random(seed * 100003 + n)
        project = names[n % projects]
        cwd = folders[project]
        lang = srng.choice(list(LANGS))
        mods = [f"{srng.choice(WORDS)}_{srng.choice(WORDS)}" for _ in range(srng.randint(3, 8))]
        dirs = [srng.choice(["src", "lib", "app", "internal", "pkg"]) + "/" + m for m in mods]
        files = [f"{d}/{srng.choice(WORDS)}.{lang}" for d in dirs for _ in range(srng.randint(1, 4))]
        day = f"2026-{srng.randint(6, 11):02d}-{srng.randint(1, 28):02d}"
        secrets = []
        for _ in range(3):
            secrets.append(samples[sample_at % len(samples)])
            sample_at += 1
        planted.update(s for _, s in secrets)
        target = int(weights[n] * scale)
        turns = srng.randint(3, 12)
        per_output = max(200, int(target / (turns + 1)))
        ask = f"{srng.choice(VERBS).capitalize()} the {srng.choice(THINGS)} in {srng.choice(files)}: {srng.choice(WHY)}"
        if n % 5 < 3:
            sid = f"{n:08x}-aaaa-4bbb-8ccc-{srng.getrandbits(48):012x}"
            s = ClaudeSession(sid, cwd, day).user(ask + f"\nContext: {secrets[0][0]}")
            for t in range(turns):
                f = srng.choice(files)
                cmd = srng.choice(LANGS[lang]).format(f=f, d=f.rsplit("/", 1)[0], m=srng.choice(mods))
                s.bash(cmd, _output(srng, files, per_output), error=srng.random() < 0.3)
                if t == 1:
                    s.bash(f"echo '{secrets[1][0]}' >> .env.local", "")
                    s.bash("cat config/settings.yml", _output(srng, files, 300) + "\n" + secrets[2][0])
                s.edit(srng.choice(files))
                if srng.random() < 0.3:
                    s.bash(cmd, srng.choice(ERRORS) + "\n" + _output(srng, files, 400), error=True)
                if t == turns // 2 and srng.random() < 0.3:
                    s.compact(f"we worked on {ask[:80]}")
                s.user(f"{srng.choice(VERBS).capitalize()} {srng.choice(THINGS)} next; {srng.choice(WHY)}")
            s.say("Done. Next steps: " + srng.choice(THINGS) + " still needs tests.")
            path = s.write(claude_path(out / "claude", cwd, sid))
            if n % 10 == 1:     # a subagent transcript under the session's folder
                agent = ClaudeSession(sid, cwd, day, sidechain=True, agent_id=f"ag{n}")
                agent.user(f"Search for {srng.choice(WORDS)} usages").bash(f"rg -n {srng.choice(WORDS)} src",
                                                                           _output(srng, files, per_output))
                agent.write(path.with_suffix("") / "subagents" / f"agent-ag{n}.jsonl")
        else:
            sid = f"0199{n:04x}-0000-7000-8000-{srng.getrandbits(48):012x}"
            r = CodexRollout(sid, cwd, day).user(ask + f"\n{secrets[0][0]}")
            for t in range(turns):
                f = srng.choice(files)
                cmd = srng.choice(LANGS[lang]).format(f=f, d=f.rsplit("/", 1)[0], m=srng.choice(mods))
                r.shell(["bash", "-lc", cmd], _output(srng, files, per_output), srng.choice([0, 0, 0, 1]))
                if t == 1:
                    r.shell(["bash", "-lc", f"export TOKEN_LINE='{secrets[1][0]}'"], "")
                    r.shell(["cat", ".env"], secrets[2][0] + "\n" + _output(srng, files, 300))
                if t == turns // 2 and srng.random() < 0.3:
                    r.compacted(f"summary: {ask[:80]}")
                r.user(f"{srng.choice(VERBS).capitalize()} {srng.choice(THINGS)} next")
            r.say("Finished; the remaining work is documented in TODO.md")
            r.write(out / "codex")
    size = sum(p.stat().st_size for p in out.rglob("*.jsonl"))
    return {"planted": sorted(planted), "bytes": size}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=400)
    ap.add_argument("--mb", type=float, default=150)
    ap.add_argument("--projects", type=int, default=12)
    ap.add_argument("--keep", help="build in this folder and keep it (default: a temp folder, removed)")
    ap.add_argument("--embed-provider", help="e.g. hash (default: the configured model, bge-small)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="sm-backfill-bench-"))
    try:
        t0 = time.monotonic()
        made = generate(base / "history", sessions=args.sessions, mb=args.mb, projects=args.projects)
        gen_s = time.monotonic() - t0
        env = dict(os.environ)
        home = base / "home"
        env["SUPERMEMORY_HOME"] = str(home)
        if "SUPERMEMORY_MODEL_DIR" not in env:
            env["SUPERMEMORY_MODEL_DIR"] = str(Path.home() / ".supermemory" / "models" / "bge-small-en-v1.5")
        if args.embed_provider:
            env["SUPERMEMORY_EMBED_PROVIDER"] = args.embed_provider
        cmd = [sys.executable, "-m", "supermemory", "backfill", "--claude", str(base / "history" / "claude"),
               "--codex", str(base / "history" / "codex"), "--json"]
        t1 = time.monotonic()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=str(base))
        total = time.monotonic() - t1
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-3000:])
            return 1
        result = json.loads(proc.stdout)
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        raw = b"".join(p.read_bytes() for p in home.iterdir() if p.name.startswith("memory.db"))
        leaked = [s for s in made["planted"] if s.encode() in raw]
        report = {"sessions": result["sessions"], "files": result["files"], "mb": round(made["bytes"] / 1e6, 1),
                  "captured": result["captured"], "skipped": result["skipped"], "seconds": round(total, 1),
                  "sessions_per_s": round(result["sessions"] / total, 2), "mb_per_s": round(made["bytes"] / 1e6 / total, 2),
                  "peak_rss_mb": round(rss_mb), "planted_secrets": len(made["planted"]), "secrets_in_db": len(leaked),
                  "db_mb": round(len(raw) / 1e6, 1), "generate_s": round(gen_s, 1),
                  "embedder": env.get("SUPERMEMORY_EMBED_PROVIDER", "onnx")}
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print(" · ".join(f"{k} {v}" for k, v in report.items()))
        if leaked:
            sys.stderr.write("secrets found in the database: " + ", ".join(s[:12] + "…" for s in leaked) + "\n")
        return 0 if not leaked else 2
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
