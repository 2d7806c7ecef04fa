"""What the fu24 fresh-user run found in the shells: the CLI's text views, the MCP server's roots warning, the import
message."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from supermemory.render import CLI_COMMANDS, render_get, render_list
from tests.helpers.common import run_cli

ROOT = Path(__file__).resolve().parents[1]


run = run_cli   # the CLI as a user runs it (tests/helpers/common.py)


@pytest.fixture
def env(tmp_path):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SUPERMEMORY")}
    e["SUPERMEMORY_HOME"] = str(tmp_path / "home")
    e["SUPERMEMORY_EMBED_PROVIDER"] = "hash"
    e["SUPERMEMORY_NAMESPACE"] = "shop"
    e["PYTHONPATH"] = str(ROOT)
    return e


# --- D14: whether a memory is pinned -----------------------------------------------------------------------------

def test_get_and_list_say_which_memory_is_pinned_and_only_that_one(env):
    pinned = run(["remember", "Run make lint before every commit.", "-k", "preference", "--pin"], env).stdout.strip()
    plain = run(["remember", "Production deploys happen on Tuesdays.", "-k", "fact"], env).stdout.strip()
    shown = run(["get", pinned, plain], env).stdout
    meta = [line for line in shown.splitlines() if line.startswith("  namespace ")]
    assert len(meta) == 2
    assert " · pinned · " in meta[0] and "pinned" not in meta[1], shown
    listed = {line.split()[1].lstrip("["): line for line in run(["list"], env).stdout.splitlines()
              if line.startswith("- [")}
    assert listed[pinned].startswith(f"- [{pinned} preference · pinned] "), listed
    assert "pinned" not in listed[plain], listed
    # After --unpin the marks go.
    run(["update", pinned, "--unpin"], env)
    current = [line for line in run(["list"], env).stdout.splitlines() if line.startswith("- [")]
    assert current and not any("pinned" in line for line in current), current


def test_the_pinned_mark_sits_with_the_other_attributes_and_leaves_other_views_alone():
    item = {"id": "M3", "kind": "task", "status": "open", "title": "Rotate the keys", "summary": "before the audit",
            "pinned": True, "namespace": "shop", "tags": ["security"], "importance": 0.9,
            "updated_at": "2026-12-01T10:00:00Z", "body": "Rotate the keys before the audit."}
    assert render_list({"items": [item], "total": 1}, commands=CLI_COMMANDS).splitlines()[0] == \
        "- [M3 task/open · pinned] Rotate the keys — before the audit"
    assert render_get({"memories": [item]}, commands=CLI_COMMANDS).splitlines()[1] == \
        "  namespace shop · tags security · importance 0.9 · pinned · updated 2026-12-01T10:00:00Z"
    from supermemory.render import memory_line
    assert "pinned" not in memory_line(item)   # recall, the briefing (its own pinned section), the index: as before


# --- D11: several workspace roots ---------------------------------------------------------------------------------

def _roots_session(tmp_path: Path, roots: list[Path]) -> tuple[str, str]:
    """A real `supermemory mcp` over stdio whose client lists `roots`: the namespace a remember went to, and stderr."""
    import json

    from helpers.common import McpClient
    from tests.test_mcp_server import INIT, INITIALIZED, _remember

    client = McpClient(tmp_path / "home", tmp_path)

    def send(frame: dict) -> None:
        client.send_raw(json.dumps(frame).encode())

    def frame() -> dict:
        line = client.out.next(30)
        assert line is not None, client.stderr_text()
        return json.loads(line)

    try:
        send({**INIT, "params": {**INIT["params"], "capabilities": {"roots": {"listChanged": True}}}})
        assert frame()["id"] == 0
        send(INITIALIZED)
        assert frame() == {"jsonrpc": "2.0", "id": "sm-roots-1", "method": "roots/list"}
        send({"jsonrpc": "2.0", "id": "sm-roots-1",
              "result": {"roots": [{"uri": root.as_uri(), "name": root.name} for root in roots]}})
        send(_remember(1, "The billing service retries webhooks three times"))
        response = frame()
        assert response["id"] == 1 and response["result"]["isError"] is False, response
        code, err = client.close()
    finally:
        client.kill()
    assert code == 0, err
    return response["result"]["structuredContent"]["namespace"], err


@pytest.fixture
def monorepo(tmp_path):
    repo = tmp_path / "acme-platform"
    (repo / ".git").mkdir(parents=True)
    for service in ("api", "billing"):
        (repo / "services" / service).mkdir(parents=True)
    return repo


def test_two_folders_of_one_repository_are_one_namespace_and_no_warning(tmp_path, monorepo):
    namespace, err = _roots_session(tmp_path, [monorepo / "services" / "api", monorepo / "services" / "billing"])
    assert namespace == "acme-platform"
    assert "workspace roots" not in err, err


def test_the_warning_names_only_the_roots_of_another_namespace_and_that_namespace(tmp_path, monorepo):
    other = tmp_path / "Docs Site"
    (other / ".git").mkdir(parents=True)
    namespace, err = _roots_session(tmp_path, [monorepo / "services" / "api", monorepo / "services" / "billing", other])
    assert namespace == "acme-platform"
    told = [line for line in err.splitlines() if "workspace roots" in line]
    assert len(told) == 1, err
    assert "first one's namespace (acme-platform)" in told[0] and f"namespace docs-site ({other})" in told[0], told
    assert "billing" not in told[0], told


# --- D12: the import message ----------------------------------------------------------------------------------------

def test_the_import_message_names_the_ids_that_were_taken_and_only_those(env, tmp_path, config):
    # fu24 D12: into a store holding M1, M2, a dump with a chain M1 → M3 (and M2) said "this store already used
    # their ids for other memories" of M3 too, which was free: only the chain's other id was taken.
    import re

    from conftest import FakeEmbedder
    from supermemory.core import MemoryStore

    with MemoryStore(tmp_path / "laptop.db", config=config, embedder=FakeEmbedder(), namespace="shop") as laptop:
        first = laptop.remember("The API gateway runs on port 8080.")["id"]
        other = laptop.remember("Deploys happen on Tuesdays.")["id"]
        head = laptop.update(first, content="The API gateway runs on port 9090.")["id"]
        laptop.export(tmp_path / "dump.jsonl")
    assert (first, other, head) == ("M1", "M2", "M3")
    held = {run(["remember", text], env).stdout.strip(): text
            for text in ("The desktop keeps its builds in /srv/builds.", "Use the staging VPN before deploying.")}
    assert set(held) == {"M1", "M2"}
    said = run(["import", str(tmp_path / "dump.jsonl")], env).stdout
    taken_line = re.search(r"ids already taken: (.*?)\. Their memories came in under new ids", said)
    assert taken_line, said
    named = set(re.findall(r"\bM\d+\b", taken_line.group(1)))
    assert named == {"M1", "M2"}, said                       # M3 was free: not called taken
    for mid, text in held.items():                            # and the ones called taken were: other memories
        assert text in run(["get", mid], env).stdout
    moves = dict(re.findall(r"(M\d+) → (M\d+)", said))
    assert set(moves) == {"M1", "M2", "M3"}, said            # the chain M1 → M3 moved together
    assert "whole version chain" in said
    history = run(["history", moves["M3"]], env).stdout
    assert "8080" in history and "9090" in history


def test_the_import_message_says_why_each_id_was_taken():
    from supermemory.render import render_import

    text = render_import({"imported": 3, "skipped": 0, "renumbered": {"M1": "M7", "M4": "M8", "M5": "M9"},
                          "taken": {"M1": "other", "M4": "file"}, "redacted": {}})
    assert "ids already taken: M1 (another memory here has that id); M4 (an earlier line of the file has that id)." \
        in text, text
    assert "M1 → M7, M4 → M8, M5 → M9" in text
