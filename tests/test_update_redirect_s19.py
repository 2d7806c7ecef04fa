"""A change to an old version's id goes to its current version, and the answer says so (README, `memory_update`):
the CLI printed only the new id (fu19 #8), while MCP said "… was superseded: the change went to its current
version." Both now say it, in the same words."""
from __future__ import annotations

import json

from tests.test_mcp_server import call
from tests.test_update_nothing import cli

SAID = "{asked} was superseded: the change went to its current version."


def test_the_cli_says_a_status_change_to_an_old_version_went_to_its_current_version(tmp_path):
    task = cli(tmp_path, "remember", "Fix the flaky login test.", "--kind", "task", "--create-namespace").stdout.strip()
    done = cli(tmp_path, "update", task, "--status", "done")
    assert done.returncode == 0 and done.stdout.strip() != task
    assert "superseded" not in done.stderr          # the current version's id: nothing was redirected
    reopened = cli(tmp_path, "update", task, "--status", "open")   # `task` is an old version now
    newest = reopened.stdout.strip()
    assert reopened.returncode == 0 and newest not in (task, done.stdout.strip())   # stdout: the new id alone
    assert SAID.format(asked=task) in reopened.stderr.splitlines()
    history = json.loads(cli(tmp_path, "history", task, "--json").stdout)
    assert history["current"] == newest
    as_json = json.loads(cli(tmp_path, "update", task, "--status", "done", "--json").stdout)
    assert as_json["asked"] == task and "superseded" not in json.dumps(as_json)   # JSON: the field, no prose
    same = cli(tmp_path, "update", task, "--status", "done")   # redirected, and nothing to change
    assert same.stderr.splitlines()[:2] == [SAID.format(asked=task),
                                            f"{same.stdout.strip()} unchanged: the new values equal the current ones."]


def test_mcp_says_it_in_the_words_the_cli_uses(store):
    task = store.remember("Fix the flaky login test.", kind="task")["id"]
    store.update(task, status="done")
    answer = call(store, "memory_update", {"id": task, "status": "open"})["result"]
    assert answer["isError"] is False and answer["structuredContent"]["asked"] == task
    assert answer["content"][0]["text"].splitlines()[0] == SAID.format(asked=task)
