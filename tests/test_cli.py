"""The CLI as users run it (subprocess), including the foundation acceptance with the real model."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.common import run_cli

ROOT = Path(__file__).resolve().parents[1]


run = run_cli   # the CLI as a user runs it (tests/helpers/common.py)


@pytest.fixture
def env(tmp_path):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY")}
    e["SUPERMEMORY_HOME"] = str(tmp_path / "home")
    e["SUPERMEMORY_EMBED_PROVIDER"] = "hash"
    e["PYTHONPATH"] = str(ROOT)
    return e


@pytest.fixture
def model_env(env, model_dir):
    env.pop("SUPERMEMORY_EMBED_PROVIDER")
    env["SUPERMEMORY_MODEL_DIR"] = str(model_dir)
    return env


@pytest.mark.model
def test_acceptance_remember_then_recall_with_real_embedder(model_env):
    mid = run(["remember", "Retrieval uses BM25 and vector scores", "-k", "decision"], model_env).stdout.strip()
    run(["remember", "The office coffee machine is on the third floor"], model_env)
    out = json.loads(run(["recall", "how does retrieval work", "--json"], model_env).stdout)
    assert out["results"][0]["id"] == mid
    assert {"id", "title", "score", "attention"} <= set(out["results"][0])
    doctor = json.loads(run(["doctor", "--json"], model_env).stdout)
    assert doctor["embedder"]["active"] == "onnx" and doctor["embedder"]["model"] == "bge-small-en-v1.5"
    assert doctor["pinned_model"]["provider"] == "onnx"


@pytest.mark.model
def test_a_memory_stored_before_the_model_was_installed_ranks_by_meaning_at_once(model_env, tmp_path):
    # Found by a fresh-user run: "we use uv for Python packaging" stored without the model, then "ruff for lint"
    # with it; `recall "python packaging tool"` put ruff first (the only one with a vector) until `maintenance`.
    uv = run(["remember", "we use uv for Python packaging"],
             dict(model_env, SUPERMEMORY_MODEL_DIR=str(tmp_path / "no-model"))).stdout.strip()
    run(["remember", "ruff for lint"], model_env)
    out = json.loads(run(["recall", "python packaging tool", "--json"], model_env).stdout)
    assert out["results"][0]["id"] == uv


def test_recall_embeds_what_waits_for_a_vector_first_and_list_never_does(env, tmp_path):
    """Only the commands that load the model anyway (recall, remember) catch up; `list` and `get` stay model-free."""
    missing = {k: v for k, v in env.items() if k != "SUPERMEMORY_EMBED_PROVIDER"}
    mid = run(["remember", "we use uv for Python packaging"],
              dict(missing, SUPERMEMORY_MODEL_DIR=str(tmp_path / "no-model"))).stdout.strip()
    pending = lambda: json.loads(run(["health", "--json"], env).stdout)["vectors_pending"]   # noqa: E731
    run(["list"], env), run(["get", mid], env)
    assert pending() == 1
    done = run(["recall", "uv for python packaging"], env)
    assert pending() == 0 and mid in done.stdout and "still wait" not in done.stderr


@pytest.mark.model
def test_explain_shows_features_per_hit(model_env):
    run(["remember", "Retrieval uses BM25 and vector scores"], model_env)
    out = json.loads(run(["recall", "retrieval scoring", "--json", "--explain"], model_env).stdout)
    assert "features" in out["results"][0] and "contributions" in out["results"][0]
    text = run(["recall", "retrieval scoring", "--explain-all"], model_env).stdout
    assert "features:" in text


def test_an_empty_recall_says_why_and_explain_all_lists_the_dropped(env):
    run(["remember", "lumen unit tests use vitest; pnpm test runs them"], env)
    text = run(["recall", "how do we shard the elasticsearch cluster"], env).stdout
    assert "No relevant memories" in text and "nothing relevant" in text
    text = run(["recall", "how do we shard the elasticsearch cluster", "--explain-all"], env).stdout
    assert "dropped M" in text, text


def test_a_broad_question_lists_its_memories_and_no_intent_turns_that_off(env):
    run(["remember", "TODO: add retries to the webhook sender", "--kind", "task"], env)
    text = run(["recall", "what's left on my todo list", "--explain"], env).stdout
    assert "TODO: add retries" in text and "broad query: kind=task status=open" in text and "intent:" in text
    assert "broad query" not in run(["recall", "what's left on my todo list", "--no-intent"], env).stdout


def test_cjk_and_identifier_queries_find_their_memories(env):
    ids = {}
    for text in ["检索层使用BM25和向量", "MemoryStore handles writes", "E_ACCES on the socket",
                 "pass --dry-run before applying", "edit /etc/hosts for local dns"]:
        ids[text] = run(["remember", text], env).stdout.strip()
    for query, text in [("检索", "检索层使用BM25和向量"), ("memory store", "MemoryStore handles writes"),
                        ("memorystore", "MemoryStore handles writes"), ("E_ACCES", "E_ACCES on the socket"),
                        ("--dry-run", "pass --dry-run before applying"), ("/etc/hosts", "edit /etc/hosts for local dns")]:
        out = json.loads(run(["recall", "--json", "--", query], env).stdout)
        assert out["results"] and out["results"][0]["id"] == ids[text], query


@pytest.mark.parametrize("query, found", [
    *((q, False) for q in ['"unbalanced', "AND OR NOT", "NEAR(", "col:val", "*"]),
    ('"deployments', True), ("(deployments)", True),
])
def test_fts_syntax_queries_never_error(env, query, found):
    mid = run(["remember", "ordinary memory about deployments"], env).stdout.strip()
    out = json.loads(run(["recall", "--json", "--", query], env).stdout)
    assert [r["id"] for r in out["results"]] == ([mid] if found else [])


def test_update_then_history_shows_both_versions(env):
    mid = run(["remember", "deploys run on fridays"], env).stdout.strip()
    new = run(["update", mid, "--content", "deploys run on tuesdays"], env).stdout.strip()
    out = json.loads(run(["recall", "when do deploys run", "--json", "--min-similarity", "0"], env).stdout)
    assert [r["id"] for r in out["results"]] == [new]
    hist = run(["history", new], env).stdout
    assert mid in hist and new in hist and "fridays" in hist and "tuesdays" in hist


def test_history_shows_a_status_only_change_with_when_and_by_whom(env):
    """`update --status done` without a text change wrote a version that `history` printed as a copy of the one
    before: a user could not see when the task was closed. It now says `status open → done`, by cli."""
    mid = run(["remember", "write the release notes", "-k", "task"], env).stdout.strip()
    closed = run(["update", mid, "--status", "done"], env).stdout.strip()
    run(["update", closed, "--importance", "0.9"], env)
    lines = run(["history", mid], env).stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"- {closed} "))
    assert ", by cli)" in lines[at] and lines[at + 1].strip() == "changed: status open → done"
    assert lines[at + 3].strip() == "changed: importance 0.5 → 0.9"
    assert sum("write the release notes" == line.strip() for line in lines) == 1   # the body once, not per version


def test_update_says_what_it_redacted_as_remember_does(env):
    token = "ghp_" + "Zq8Xw2Rt5Yu7Io9Pa1Sd3Fg4Hj6Kl0Mn2Bv4"
    mid = run(["remember", "deploys use the bot account"], env).stdout.strip()
    done = run(["update", mid, "--content", f"deploys use the bot account, token {token}"], env)
    assert done.stdout.strip().startswith("M") and "Redacted before storing" in done.stderr
    assert token not in run(["get", done.stdout.strip()], env).stdout


def test_maintenance_shows_its_progress_while_it_embeds_the_rest_of_a_long_text(env, tmp_path):
    home = Path(env["SUPERMEMORY_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(
        {"store": {"chunk_max_tokens": 20, "chunk_overlap_tokens": 0, "write_embed_chunks": 1}}))
    text = " ".join(f"Step {n}: the nightly job{n} copies table{n} to the archive{n}." for n in range(40))
    stored = run(["remember", text], env)
    assert "get their vectors later" in stored.stderr
    done = run(["maintenance"], env)
    waiting = int(re.search(r"(\d+) chunks of this long text", stored.stderr).group(1))
    assert f"embedding chunks without a vector: {waiting}/{waiting} (100%" in done.stderr, done.stderr
    assert f"vectors_embedded {waiting}" in done.stdout


def test_maintenance_redact_runs_the_re_redaction_pass_now(env):
    run(["remember", "deploys run on fridays"], env)
    out = json.loads(run(["maintenance", "--redact", "--json"], env).stdout)
    assert out["redacted"] == 0  # stored text went through today's rules already
    assert "redacted 0" in run(["maintenance"], env).stdout


def test_opening_with_another_model_is_refused_until_reindex(env, tmp_path):
    run(["remember", "pinned to hash"], env)
    other = dict(env)
    other["SUPERMEMORY_EMBED_PROVIDER"] = "openai"
    home = Path(env["SUPERMEMORY_HOME"])
    (home / "config.json").write_text(json.dumps({"embedder": {"provider": "hash"}}))
    # a different pinned fingerprint: rewrite the pin to simulate a DB made with another model
    import sqlite3

    conn = sqlite3.connect(home / "memory.db")
    conn.execute("UPDATE meta SET value = ? WHERE key = 'embedder'",
                 (json.dumps({"provider": "onnx", "model": "bge-small-en-v1.5", "dimensions": 384,
                              "checksum": "abc"}, sort_keys=True),))
    conn.commit()
    conn.close()
    proc = run(["remember", "second"], env, check=False)
    assert proc.returncode == 1 and "reindex" in proc.stderr
    run(["reindex"], env)
    run(["remember", "second"], env)


def test_get_of_several_ids_prints_each_records_links_under_it(env):
    ids = [run(["remember", f"fact number {n}"], env).stdout.strip() for n in range(3)]
    run(["link", ids[0], ids[1], "--relation", "depends-on"], env)
    out = run(["get", *ids], env).stdout
    records = re.split(r"^(?=M\d+ \[)", out, flags=re.M)[1:]
    assert [r.split()[0] for r in records] == ids
    link = f"link {ids[0]} -depends-on→ {ids[1]} (1.0)"
    assert [r.count(link) for r in records] == [1, 1, 0] and out.count(link) == 2


def test_list_and_get_json_carry_their_records_under_the_same_key(env):
    """`list --json` said `items` where `get --json` said `memories`; both say `memories` now, and `list` keeps
    `items` as an alias for one release (README, CLI section)."""
    mid = run(["remember", "alpha fact"], env).stdout.strip()
    listed = json.loads(run(["list", "--json"], env).stdout)
    got = json.loads(run(["get", mid, "--json"], env).stdout)
    assert [m["id"] for m in listed["memories"]] == [m["id"] for m in got["memories"]] == [mid]
    assert listed["items"] == listed["memories"] and listed["total"] == 1


def test_forget_restore_list_get_link_stats(env):
    a = run(["remember", "alpha fact", "--tag", "x"], env).stdout.strip()
    b = run(["remember", "beta decision", "-k", "decision"], env).stdout.strip()
    run(["link", a, b, "--relation", "depends-on"], env)
    got = json.loads(run(["get", a, "--json"], env).stdout)
    assert got["memories"][0]["links"][0]["relation"] == "depends-on"
    listed = json.loads(run(["list", "--json"], env).stdout)
    assert listed["total"] == 2 and "body" not in listed["items"][0]
    run(["forget", a], env)
    assert json.loads(run(["list", "--json"], env).stdout)["total"] == 1
    assert "forgotten by cli" in run(["history", a], env).stdout     # who forgot it, as the UI's are
    run(["restore", a], env)
    assert json.loads(run(["get", a, "--json"], env).stdout)["memories"][0]["source"]["restored_by"] == "cli"
    stats = json.loads(run(["stats", "--json"], env).stdout)
    assert stats["memories"] == 2 and stats["by_kind"]["decision"] == 1


def test_errors_are_one_line_with_exit_code_one(env):
    proc = run(["get", "M999"], env, check=False)
    assert proc.returncode == 1
    proc = run(["update", "not-an-id", "--content", "x"], env, check=False)
    assert proc.returncode == 1 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_config_set_and_get_round_trip(env):
    run(["config", "--set", "ranking.temperature=0.2"], env)
    assert run(["config", "--get", "ranking.temperature"], env).stdout.strip() == "0.2"
    proc = run(["config", "--set", "ranking.temprature=0.2"], env, check=False)
    assert proc.returncode == 1 and "unknown setting" in proc.stderr


def test_export_import_commands(env, tmp_path):
    run(["remember", "portable memory"], env)
    out = tmp_path / "dump.jsonl"
    run(["export", str(out)], env)
    other = dict(env)
    other["SUPERMEMORY_HOME"] = str(tmp_path / "other")
    assert "imported 1" in run(["import", str(out)], other).stdout
    assert "imported 0" in run(["import", str(out)], other).stdout


def test_bad_file_paths_are_one_line_errors_not_tracebacks(env, tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\xff\xfe not text\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    cases = {("import", "/nonexistent.jsonl"): "cannot read /nonexistent.jsonl: No such file or directory",
             ("import", str(folder)): f"cannot read {folder}: Is a directory",
             ("import", str(bad)): f"{bad}:1: not valid UTF-8 (byte 0xff at offset 0)",
             ("bench", "/nonexistent.jsonl"): "cannot read /nonexistent.jsonl: No such file or directory",
             ("bench", str(bad)): f"{bad}:1: not valid UTF-8 (byte 0xff at offset 0)",
             ("export", "/proc/nope.jsonl"): "cannot write /proc/nope.jsonl: No such file or directory",
             ("export", str(folder)): f"cannot write {folder}: it is a folder",
             ("index", "--out", "/proc/x.md"): "cannot write /proc/x.md: No such file or directory"}
    run(["remember", "something to export", "--namespace", "global"], env)
    for args, message in cases.items():
        proc = run(list(args), env, check=False)
        assert proc.returncode == 1, (args, proc.stderr)
        assert proc.stderr.startswith(f"error: {message}") and "Traceback" not in proc.stderr, (args, proc.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.bin", "folder", "home"]


def test_help_runs_without_heavy_imports(env):
    code = ("import sys, runpy; sys.argv=['supermemory','--help']\n"
            "try:\n  runpy.run_module('supermemory', run_name='__main__')\nexcept SystemExit: pass\n"
            "print('HEAVY', [m for m in ('numpy','onnxruntime','tokenizers') if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in proc.stdout


def test_run_py_launcher_works_from_checkout(env):
    proc = subprocess.run([sys.executable, str(ROOT / "run.py"), "remember", "via run.py"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("M")


def test_remember_dash_reads_the_text_from_stdin(env):
    out = run(["remember", "-", "--namespace", "global"], env, stdin="piped: the CI cache key is the lockfile hash\n")
    memory_id = out.stdout.strip()
    got = json.loads(run(["get", memory_id, "--json"], env).stdout)
    assert got["memories"][0]["body"] == "piped: the CI cache key is the lockfile hash"


def test_recall_json_leaves_bodies_out_unless_full(env):
    # Found by a fresh-user run: `recall --json --max-tokens 50` over a 226 KB memory printed 229 KB, the whole
    # body beside the passage that answers.
    text = " ".join(f"Section {n}: the relay{n} forwards queue{n} messages to sink{n}." for n in range(3000))
    memory_id = run(["remember", "-", "--title", "relay notes"], env, stdin=text).stdout.strip()
    out = run(["recall", "where does relay2500 forward its messages", "--json", "--max-tokens", "300"], env).stdout
    hit = json.loads(out)["results"][0]
    assert hit["id"] == memory_id and "body" not in hit and "relay2500" in hit["passage"]["text"] and len(out) < 5000
    full = json.loads(run(["recall", "where does relay2500 forward its messages", "--json", "--full"], env).stdout)
    assert full["results"][0]["body"] == text


@pytest.mark.parametrize("args, hint", [
    (["recall", "-pytest"], 'a query starting with "-" needs "--" before it: supermemory recall -- "-pytest"'),
    (["recall", "--limit", "3", "-pytest"],
     'a query starting with "-" needs "--" before it: supermemory recall --limit 3 -- "-pytest"'),
    (["remember", "-x", "--namespace", "global"],
     'a text starting with "-" needs "--" before it: supermemory remember --namespace global -- "-x"'),
])
def test_text_starting_with_a_dash_is_told_to_follow_a_double_dash(env, args, hint):
    proc = run(args, env, check=False)
    assert proc.returncode == 2 and proc.stderr.rstrip().endswith(hint), proc.stderr
    assert "required" not in proc.stderr


def test_the_double_dash_the_hint_suggests_works_and_a_missing_text_is_still_named(env):
    memory_id = run(["remember", "--namespace", "global", "--", "-x"], env).stdout.strip()
    assert json.loads(run(["get", memory_id, "--json"], env).stdout)["memories"][0]["body"] == "-x"
    assert run(["recall", "--json", "--", "-x"], env).returncode == 0
    missing = run(["recall", "--limit", "3"], env, check=False)
    assert missing.returncode == 2 and "the following arguments are required: query" in missing.stderr


def test_remember_says_an_unclosed_private_tag_left_out_everything_after_it(env):
    proc = run(["remember", "Docs: wrap secrets in <private> tags. Also deploy happens on Friday",
                "--namespace", "global"], env)
    assert "Redacted before storing: 1 × private" in proc.stderr
    assert "An unclosed <private> tag: everything after it (36 characters) was left out" in proc.stderr
    assert "Close the span with </private>" in proc.stderr
    got = json.loads(run(["get", proc.stdout.strip(), "--json"], env).stdout)
    assert got["memories"][0]["body"] == "Docs: wrap secrets in"


def test_remember_refuses_text_that_is_not_utf8_and_names_the_byte(env, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "supermemory", "remember", b"caf\xe9 au lait", "--namespace", "global"],
                          cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert proc.returncode == 1
    assert b"error: text is not valid UTF-8 (byte 0xe9 at offset 3)" in proc.stderr, proc.stderr
    stdin = subprocess.run([sys.executable, "-m", "supermemory", "remember", "-", "--namespace", "global"],
                           cwd=ROOT, env=env, capture_output=True, input=b"ok \xff\xfe", timeout=120)
    assert stdin.returncode == 1 and b"byte 0xff at offset 3" in stdin.stderr, stdin.stderr
    assert json.loads(run(["stats", "--json"], env).stdout)["memories"] == 0


def test_remember_from_a_folder_whose_name_is_not_utf8_stores_the_memory(env, tmp_path):
    # Found by a fresh-user run: `remember` in a folder named with a Latin-1 byte ended in a traceback
    # (UnicodeEncodeError): os.getcwd() gives that byte as a lone surrogate and the source JSON kept it.
    folder = tmp_path / os.fsdecode(b"caf\xe9")
    folder.mkdir()
    proc = subprocess.run([sys.executable, "-m", "supermemory", "remember", "the cafe menu is in menu.md",
                           "--namespace", "global"], cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    got = json.loads(run(["get", proc.stdout.strip(), "--json"], env).stdout)["memories"][0]
    assert got["source"]["cwd"] == str(tmp_path / "caf\ufffd")


def test_get_on_a_forgotten_id_points_at_restore(env):
    memory_id = run(["remember", "the staging DB is on port 5433", "--namespace", "global"], env).stdout.strip()
    run(["forget", memory_id], env)
    proc = run(["get", memory_id], env, check=False)
    assert proc.returncode == 1
    assert f"{memory_id} was forgotten; `supermemory restore {memory_id}` brings it back" in proc.stderr
    assert "not found" not in proc.stderr
    missing = run(["get", "M999"], env, check=False)
    assert missing.returncode == 1 and missing.stderr.startswith("error: no memory M999 in namespace(s) ")
    assert missing.stderr == run(["history", "M999"], env, check=False).stderr
    both = run(["get", memory_id, "M999"], env, check=False)
    assert both.returncode == 1 and both.stderr == (
        f"{missing.stderr.rstrip()}; {memory_id} was forgotten; `supermemory restore {memory_id}` brings it back\n")


def test_an_id_from_another_namespace_is_not_found_where_it_was_looked_for(env):
    memory_id = run(["remember", "alpha's deploy is on Fridays", "--namespace", "alpha", "--create-namespace"],
                    env).stdout.strip()
    run(["remember", "beta exists too", "--namespace", "beta", "--create-namespace"], env)
    for command in ("get", "history"):
        proc = run([command, memory_id, "--namespace", "beta"], env, check=False)
        assert proc.returncode == 1 and proc.stderr == f"error: no memory {memory_id} in namespace(s) beta, global\n"
    assert "alpha's deploy" in run(["get", memory_id, "--namespace", "alpha"], env).stdout


def test_update_refuses_a_status_on_a_memory_that_is_not_a_task(env):
    memory_id = run(["remember", "We use Postgres", "-k", "decision", "--namespace", "global"], env).stdout.strip()
    proc = run(["update", memory_id, "--status", "done"], env, check=False)
    assert proc.returncode == 1 and proc.stderr == f"error: status applies to tasks; {memory_id} is a decision\n"


def test_update_content_replaces_a_title_that_was_made_from_the_old_text(env):
    memory_id = run(["remember", "Deploys run on Fridays.", "--namespace", "global"], env).stdout.strip()
    named = run(["remember", "Ports: the API listens on 8080.", "-t", "API port", "--namespace", "global"],
                env).stdout.strip()
    new_id = run(["update", memory_id, "--content", "Deploys run on Tuesdays after standup."], env).stdout.strip()
    renamed = run(["update", named, "--content", "Ports: the API listens on 9090."], env).stdout.strip()
    titles = {m["id"]: m["title"] for m in json.loads(run(["get", new_id, renamed, "--json"], env).stdout)["memories"]}
    assert titles == {new_id: "Deploys run on Tuesdays after standup.", renamed: "API port"}


def test_stats_on_a_new_store_says_no_searches_yet_instead_of_none(env):
    out = run(["stats"], env).stdout
    assert "searches     none yet" in out
    assert "None" not in out


def test_a_zero_byte_database_file_is_initialised_and_says_so(env, tmp_path):
    home = Path(env["SUPERMEMORY_HOME"])
    home.mkdir(parents=True)
    (home / "memory.db").write_bytes(b"")
    os.utime(home / "memory.db", (1_600_000_000, 1_600_000_000))   # emptied long ago, not a first start
    proc = run(["remember", "after the empty file", "--namespace", "global"], env)
    assert "memory.db exists but is empty (0 bytes): starting a new database in it" in proc.stderr
    assert (home / "memory.db").stat().st_size > 0
    assert "exists but is empty" not in run(["stats"], env).stderr


def test_a_long_write_shows_its_embedding_progress_on_stderr(env):
    text = "\n\n".join(f"Paragraph {i}: " + " ".join(f"word{i}x{j}" for j in range(120)) for i in range(40))
    proc = run(["remember", "-", "--namespace", "global"], env, stdin=text)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("embedding: ")]
    assert lines and lines[-1].startswith("embedding: ") and "(100%" in lines[-1], proc.stderr
    total = int(lines[-1].split("/")[1].split()[0])
    assert total >= 16 and len(lines) <= 11
    short = run(["remember", "a short fact", "--namespace", "global"], env)
    assert "embedding: " not in short.stderr


def test_unlink_removes_a_link_from_the_command_line(env):
    a = run(["remember", "CI runs on Jenkins", "--namespace", "global"], env).stdout.strip()
    b = run(["remember", "CI moved to GitHub Actions", "--namespace", "global"], env).stdout.strip()
    run(["link", b, a, "--relation", "supersedes"], env)
    assert run(["unlink", b, a], env).stdout.strip() == f"Removed {b} -supersedes→ {a}."
    again = run(["unlink", b, a], env, check=False)
    assert again.returncode == 1 and again.stderr == f"error: no link from {b} to {a}\n"


def test_graph_says_when_it_shows_only_the_newest_links_of_more(env):
    from supermemory.core import MemoryStore
    from supermemory.embed import HashProvider

    with MemoryStore(Path(env["SUPERMEMORY_HOME"]) / "memory.db", embedder=HashProvider(), namespace="global") as store:
        ids = [store.remember(f"service {name} talks to the queue")["id"] for name in ("alpha", "beta", "gamma")]
        store.link(ids[0], ids[1], relation="refines")
        store.link(ids[1], ids[2], relation="depends-on")
    text = run(["graph", "--limit", "1"], env).stdout.splitlines()
    assert len(text) == 2 and text[0].startswith(f"{ids[1]} --depends-on--> {ids[2]} ")
    assert text[1] == "showing the 1 newest of 2 links (--limit N for more, --id M12 for one memory's neighbourhood)"
    assert "%% showing the 1 newest of 2 links" in run(["graph", "--limit", "1", "--mermaid"], env).stdout
    whole = run(["graph"], env).stdout
    assert "showing" not in whole and len(whole.splitlines()) == 2


def test_control_characters_in_memory_text_are_shown_escaped_and_stored_as_they_are(env):
    text = "nul \x01 ctrl \x1b[31m red \x9b2J end"
    mid = run(["remember", text], env).stdout.strip()
    for args in (["list"], ["get", mid], ["history", mid], ["recall", "ctrl red", "--no-gates"], ["index"]):
        out = run(args, env).stdout
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out), args
        assert "\\x01 ctrl \\x1b[31m red \\x9b2J" in out, args
    assert json.loads(run(["get", mid, "--json"], env).stdout)["memories"][0]["body"] == text


def test_briefing_json_lists_only_the_memories_its_text_shows(env):
    """`briefing --json` listed every fetched id under `items` though the token budget left most out of the text."""
    for i in range(6):
        run(["remember", f"Decision number {i}: use library{i} for feature{i} because of reasons", "-k", "decision"], env)
    brief = json.loads(run(["briefing", "--json", "--max-tokens", "60"], env).stdout)
    in_text = re.findall(r"^- \[(M\d+) ", brief["text"], flags=re.M)
    assert 0 < len(in_text) < 6
    assert brief["items"]["decisions"] == in_text and brief["sections"]["decisions"] == len(in_text)
    assert brief["not_shown"]["decisions"] == 6 - len(in_text) and f"…{6 - len(in_text)} more not shown" in brief["text"]


def test_index_of_an_empty_store_says_no_memories_as_list_does(env, tmp_path):
    """`index` on an empty store printed one blank line while `list` said "No memories."; both say it now, and
    `index --out` still writes a file (that one line), so a MEMORY.md kept up to date by it stays valid."""
    assert run(["list"], env).stdout == "No memories.\n"
    assert run(["index"], env).stdout == "No memories.\n"
    out = tmp_path / "MEMORY.md"
    assert run(["index", "--out", str(out)], env).stdout == f"wrote 'No memories.' to {out}\n"   # not "0 lines"
    assert out.read_text(encoding="utf-8") == "No memories.\n"


@pytest.mark.parametrize("max_lines", [1, 2, 5, 6])
def test_index_max_lines_counts_the_and_more_line(env, tmp_path, max_lines):
    """At most `max_lines` lines, the "…and K more" line included; at least one memory: `--max-lines 1` showed only
    "…and 6 more" (found by a fresh-user run), it now shows the first memory and drops that line."""
    for i in range(6):
        run(["remember", f"filler fact number {i}", "-k", "fact"], env)
    out = tmp_path / "MEMORY.md"
    said = run(["index", "--out", str(out), "--max-lines", str(max_lines)], env).stdout
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == min(max_lines, 6) and said.startswith(f"wrote {len(lines)} lines")
    memories = [line for line in lines if line.startswith("- [M")]
    assert len(memories) == (max_lines if max_lines in (1, 6) else max_lines - 1)
    assert ("more" in lines[-1]) == (1 < max_lines < 6)
    assert ("left out" in said) == (max_lines < 6)
    assert run(["index", "--max-lines", str(max_lines)], env).stdout.splitlines() == lines


@pytest.mark.parametrize("args, refused", [
    (["update", "M1", "--pin", "--unpin"], "argument --unpin: not allowed with argument --pin"),
    (["forget", "--hard", "--sweep"], "argument --sweep: not allowed with argument --hard"),
    (["config", "--set", "recall.max_tokens=900", "--get", "recall.max_tokens"],
     "argument --get: not allowed with argument --set"),
    (["update", "--pin"], "the following arguments are required: id"),   # an option of a group is known
])
def test_contradictory_flags_are_refused_with_exit_2(capsys, args, refused):
    from supermemory.cli import build_parser

    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(args)
    assert exc.value.code == 2 and capsys.readouterr().err.rstrip().endswith(refused)


def test_each_flag_of_an_exclusive_pair_works_alone():
    from supermemory.cli import build_parser

    parse = build_parser().parse_args
    assert parse(["update", "M1", "--pin"]).pin is True and parse(["update", "M1", "--unpin"]).pin is False
    assert parse(["update", "M1"]).pin is None and parse(["forget", "--sweep"]).sweep
    assert parse(["config", "--get", "recall.max_tokens"]).set is None


def test_get_of_an_old_version_names_the_current_one_when_its_successor_was_superseded_too(env):
    first = run(["remember", "deploys go out on Tuesdays"], env).stdout.strip()
    second = run(["update", first, "--content", "deploys go out on Wednesdays"], env).stdout.strip()
    third = run(["update", second, "--content", "deploys go out on Thursdays"], env).stdout.strip()
    assert f"superseded by {second} (current version {third})" in run(["get", first], env).stdout
    shown = run(["get", second], env).stdout
    assert f"superseded by {third}" in shown and "current version" not in shown
    got = {m["id"]: m for m in json.loads(run(["get", first, second, third, "--json"], env).stdout)["memories"]}
    assert got[first]["superseded_by"] == second and got[first]["current"] == third
    assert got[second]["current"] == third and "current" not in got[third]
