"""Settings validation (config.py): `config --set` refuses a bad value and leaves the file alone; a
bad hand-edited file makes the CLI refuse, while hooks and the MCP server warn and run on defaults.

These are the spec the future settings module keeps: the key, the bad value and the expected
type, range or choices are in every message; an unknown key names the nearest known ones.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.common import McpClient, subprocess_env
from supermemory.config import Config, load_config, set_setting
from supermemory.settings import DEFAULTS, RULES, SETTINGS, validate_settings
from supermemory.core import MemoryStore
from supermemory.embed import HashProvider
from supermemory.errors import ConfigError, InvalidInputError

ORIGINAL = b'{\n  "ranking": {"temperature": 0.2}\n}\n'


def cli(args: list[str], home: Path, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "supermemory", *args], cwd=cwd, env=subprocess_env(home),
                          capture_output=True, text=True, input=stdin, timeout=120)


@pytest.fixture
def world(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    return home, project


def write_config(home: Path, tree) -> Path:
    path = home / "config.json"
    path.write_text(tree if isinstance(tree, str) else json.dumps(tree), encoding="utf-8")
    return path


# --- the schema -------------------------------------------------------------------------------------

def test_the_defaults_pass_their_own_validation():
    assert validate_settings(DEFAULTS) == []
    assert set(RULES) <= set(SETTINGS)


def test_the_embedder_tunables_the_code_reads_are_known_keys_with_the_model_default():
    from supermemory.embed import BGE_QUERY_INSTRUCTION

    # read by embed.get_provider; a key missing from DEFAULTS would be refused as unknown
    assert {"embedder.query_instruction", "embedder.query_blend"} <= set(SETTINGS)
    assert DEFAULTS["embedder"]["query_instruction"] == BGE_QUERY_INSTRUCTION


@pytest.mark.parametrize("tree, key, fragments", [
    ({"recall": {"default_limit": "abc"}}, "recall.default_limit", ['"abc"', "an integer >= 1", "default 8"]),
    ({"recall": {"default_limit": -5}}, "recall.default_limit", ["-5", "an integer >= 1"]),
    ({"recall": {"default_limit": 2.5}}, "recall.default_limit", ["2.5", "an integer"]),
    ({"recall": {"default_limit": True}}, "recall.default_limit", ["true", "an integer"]),
    ({"embedder": {"provider": "onx"}}, "embedder.provider", ['"onx"', "one of onnx, hash, openai"]),
    ({"ranking": {"temperature": 0}}, "ranking.temperature", ["above 0 and at most 10"]),
    ({"ranking": {"mmr_lambda": 1.5}}, "ranking.mmr_lambda", ["1.5", "from 0 to 1"]),
    ({"ranking": {"weights": {"recency": "high"}}}, "ranking.weights.recency", ['"high"', "from -5 to 5"]),
    ({"hooks": {"budget_seconds": float("nan")}}, "hooks.budget_seconds", ["NaN", "from 0.05 to 600"]),
    ({"capture": {"enabled": "maybe"}}, "capture.enabled", ['"maybe"', "true or false"]),
    ({"embedder": {"openai_base_url": "localhost:8080"}}, "embedder.openai_base_url", ["http:// or https://"]),
    ({"recall": 5}, "recall", ["recall = 5", "an object holding default_limit"]),
    ({"recall": {"default_limit": 20, "max_limit": 10}}, "recall.default_limit",
     ["recall.default_limit = 20 is above recall.max_limit = 10"]),
    ({"store": {"chunk_overlap_tokens": 300}}, "store.chunk_overlap_tokens",
     ["not below store.chunk_max_tokens = 260"]),
])
def test_a_bad_value_is_named_with_its_key_and_what_it_should_be(tree, key, fragments):
    problems = validate_settings(tree)
    assert len(problems) == 1, problems
    assert problems[0].keys[0] == key
    assert str(problems[0]).startswith(key)
    for fragment in fragments:
        assert fragment in str(problems[0])


@pytest.mark.parametrize("tree, suggestion", [
    ({"recall": {"default_limt": 3}}, "did you mean recall.default_limit?"),
    ({"ranking": {"temprature": 0.2}}, "did you mean ranking.temperature?"),
    ({"ranking": {"weights": {"recncy": 0.3}}}, "did you mean ranking.weights.recency?"),
    ({"rankng": {}}, "did you mean ranking?"),
    ({"recall": {"zzzz": 1}}, "recall holds default_limit, max_limit, max_tokens, ram_vector_limit"),
    ({"zzzz": 1}, "the sections are embedder, ranking, recall"),
])
def test_an_unknown_key_names_the_nearest_known_keys(tree, suggestion):
    (problem,) = validate_settings(tree)
    assert str(problem).startswith("unknown setting '")
    assert suggestion in str(problem)


def test_a_dotted_key_written_flat_is_told_to_nest():
    (problem,) = validate_settings({"recall.default_limit": 3})
    assert "written as one key" in str(problem) and '{"recall": {"default_limit": ...}}' in str(problem)


@pytest.mark.parametrize("word, value", [("false", False), ("Off", False), ("no", False), ("true", True),
                                         ("yes", True)])
def test_boolean_words_in_the_file_are_read_as_booleans(tmp_path, word, value):
    home = tmp_path / "h"
    home.mkdir()
    write_config(home, {"store": {"redact_secrets": word}})
    config = load_config(env={}, home=home)
    assert config.get("store.redact_secrets") is value and config.problems == ()


# --- loading a bad file ------------------------------------------------------------------------------

def test_a_strict_load_raises_a_config_error_naming_the_file_and_every_problem(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    path = write_config(home, {"recall": {"default_limit": "abc"}, "rankng": {}})
    with pytest.raises(ConfigError) as caught:
        load_config(env={}, home=home)
    message = str(caught.value)
    assert isinstance(caught.value, InvalidInputError)
    assert str(path) in message and "2 problems" in message
    assert 'recall.default_limit = "abc"' in message and "did you mean ranking?" in message


def test_a_lenient_load_keeps_the_defaults_for_bad_keys_only_and_lists_the_problems(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    write_config(home, {"recall": {"default_limit": -5, "max_limit": 50}, "ranking": {"temperature": 0.3},
                        "bogus": {"x": 1}})
    config = load_config(env={}, home=home, strict=False)
    assert config.get("recall.default_limit") == 8      # bad: default
    assert config.get("recall.max_limit") == 50         # good neighbour: kept
    assert config.get("ranking.temperature") == 0.3
    assert "bogus" not in config.settings
    assert len(config.problems) == 2
    assert all(p.startswith(f"config file {home / 'config.json'}: ") for p in config.problems)
    assert any("recall.default_limit = -5" in p for p in config.problems)


def test_a_lenient_load_of_a_file_that_is_not_json_runs_on_defaults(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    write_config(home, "{broken")
    config = load_config(env={}, home=home, strict=False)
    assert config.settings == DEFAULTS
    assert len(config.problems) == 1 and "is not valid JSON" in config.problems[0]
    with pytest.raises(ConfigError):
        load_config(env={}, home=home)


def test_settings_in_the_wrong_order_both_fall_back_in_a_lenient_load(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    write_config(home, {"recall": {"max_limit": 3}})  # below the default default_limit (8)
    config = load_config(env={}, home=home, strict=False)
    assert (config.get("recall.default_limit"), config.get("recall.max_limit")) == (8, 100)
    assert "recall.default_limit = 8 is above recall.max_limit = 3" in config.problems[0]


def test_set_setting_refuses_in_process_with_a_config_error(tmp_path):
    config = Config(home=tmp_path / "h")
    with pytest.raises(ConfigError, match=r"recall\.default_limit = -5"):
        set_setting(config, "recall.default_limit", "-5")
    assert not config.config_path.exists()


def test_a_config_file_that_cannot_be_read_says_so_instead_of_calling_it_invalid_json(tmp_path):
    # Found by a fresh-user run: a config.json that was a folder or unreadable was "not valid JSON: [Errno 21] ...".
    home = tmp_path / "h"
    (home / "config.json").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"cannot read config file .*config\.json: Is a directory$"):
        load_config(env={}, home=home)
    (home / "config.json").rmdir()
    (home / "config.json").write_bytes(b'{"recall": {"default_limit": 5}}\xff')
    with pytest.raises(ConfigError, match=r"config\.json:1: not valid UTF-8 \(byte 0xff at offset 32\)"):
        load_config(env={}, home=home)


def test_json_nested_deeper_than_the_recursion_limit_is_refused_like_any_bad_json(tmp_path):
    # Found by a fresh-user run: such a config.json, or such a `config --set` value, ended in a RecursionError
    # traceback (every command, since every command reads the file).
    home = tmp_path / "h"
    home.mkdir()
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(ConfigError, match=r"recall\.default_limit"):
        set_setting(load_config(env={}, home=home), "recall.default_limit", deep)
    assert not (home / "config.json").exists()
    write_config(home, '{"recall": ' + deep + "}")
    with pytest.raises(ConfigError, match=r"is not valid JSON: nested too deeply"):
        load_config(env={}, home=home)
    assert "is not valid JSON: nested too deeply" in load_config(env={}, home=home, strict=False).problems[0]


def test_a_config_write_that_fails_leaves_the_file_as_it_was_and_says_why(tmp_path, monkeypatch):
    # Found by a fresh-user run: `config --set` on a read-only config.json ended in a PermissionError
    # traceback, and a write that failed half-way (a full disk) left the file truncated: every setting lost.
    import errno
    import os

    import supermemory.config as config_module

    home = tmp_path / "h"
    home.mkdir()
    write_config(home, {"recall": {"default_limit": 5}})
    before = (home / "config.json").read_bytes()

    def full_disk(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(config_module.os, "fsync", full_disk)
    with pytest.raises(ConfigError, match=r"cannot write config file .*config\.json: No space left on device; "
                                          r"it was not changed"):
        set_setting(load_config(env={}, home=home), "recall.default_limit", "7")
    assert (home / "config.json").read_bytes() == before
    assert sorted(p.name for p in home.iterdir()) == ["config.json"]
    monkeypatch.undo()
    (home / "config.json").chmod(0o640)
    set_setting(load_config(env={}, home=home), "recall.default_limit", "7")
    assert json.loads((home / "config.json").read_text()) == {"recall": {"default_limit": 7}}
    assert (home / "config.json").stat().st_mode & 0o777 == 0o640


# --- `config --set` ------------------------------------------------------------------------------------

def _refused(proc: subprocess.CompletedProcess, path: Path) -> str:
    assert proc.returncode == 1, proc
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    assert path.read_bytes() == ORIGINAL, "the config file was changed"
    assert "The config file was not changed" in proc.stderr
    return proc.stderr


@pytest.mark.parametrize("assignment, message", [
    ("recall.default_limit=abc", 'recall.default_limit = "abc": expected an integer >= 1 (default 8)'),
    ("recall.default_limit=-5", "recall.default_limit = -5: expected an integer >= 1"),
    ("recall.default_limt=5", "unknown setting 'recall.default_limt'; did you mean recall.default_limit?"),
    ("embedder.provider=onx", 'embedder.provider = "onx": expected one of onnx, hash, openai'),
    ("recall.default_limit=500", "recall.default_limit = 500 is above recall.max_limit = 100"),
], ids=["non-integer", "negative", "unknown-key-suggests-nearest", "outside-choices", "default-above-max"])
def test_config_set_refuses_a_bad_value_naming_the_key_and_what_it_accepts(world, assignment, message):
    home, project = world
    path = home / "config.json"
    path.write_bytes(ORIGINAL)
    assert message in _refused(cli(["config", "--set", assignment], home, project), path)


def test_config_set_stores_a_boolean_word_as_a_boolean(world):
    home, project = world
    proc = cli(["config", "--set", "capture.enabled=off"], home, project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "capture.enabled = false\n"
    assert json.loads((home / "config.json").read_text()) == {"capture": {"enabled": False}}


def test_config_set_fixes_one_key_while_warning_about_the_rest_of_the_file(world):
    home, project = world
    write_config(home, {"recall": {"default_limit": "abc"}, "rankng": {}})
    proc = cli(["config", "--set", "recall.default_limit=5"], home, project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "recall.default_limit = 5\n"
    assert proc.stderr.startswith("warning: ") and "unknown setting 'rankng'" in proc.stderr
    assert "recall.default_limit" not in proc.stderr
    assert json.loads((home / "config.json").read_text())["recall"] == {"default_limit": 5}


class PinnedOnnx(HashProvider):
    """Pins a database the way the bge-small model does, without the model."""
    provider_id, model_id, checksum = "onnx", "bge-small-en-v1.5", "0123456789abcdef"


def _set_provider_over(home, project, embedder):
    """`config --set embedder.provider=hash` over a database a write with `embedder` pinned."""
    with MemoryStore(home / "memory.db", config=Config(home=home), embedder=embedder, namespace="proj") as store:
        store.remember("Deploys go through blue-green", create_namespace=True)
    return cli(["config", "--set", "embedder.provider=hash"], home, project)


def test_config_set_of_an_embedder_the_database_is_not_pinned_to_warns_that_writes_fail(world):
    # Found by a fresh-user run: `config --set embedder.provider=hash` on a database pinned to onnx/bge-small said
    # nothing, and every `remember` after it failed until `supermemory reindex`.
    home, project = world
    proc = _set_provider_over(home, project, PinnedOnnx())
    assert proc.returncode == 0 and proc.stdout == 'embedder.provider = "hash"\n'
    assert proc.stderr.startswith("warning: this database is pinned to embedder onnx/bge-small-en-v1.5")
    assert "writes fail until" in proc.stderr and "`supermemory reindex`" in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert json.loads((home / "config.json").read_text()) == {"embedder": {"provider": "hash"}}
    assert cli(["config", "--set", "recall.default_limit=5"], home, project).stderr == ""   # not an embedder key


def test_config_set_of_the_pinned_embedder_says_nothing_more(world):
    home, project = world
    proc = _set_provider_over(home, project, HashProvider())
    assert proc.returncode == 0 and proc.stderr == ""


def test_config_get_of_an_unknown_key_suggests_the_nearest(world):
    home, project = world
    proc = cli(["config", "--get", "ranking.temprature"], home, project)
    assert proc.returncode == 1 and "did you mean ranking.temperature?" in proc.stderr


# --- a bad hand-edited file: the CLI refuses ------------------------------------------------------------

@pytest.mark.parametrize("tree, fragment", [
    ({"recall": {"default_limt": 5}}, "unknown setting 'recall.default_limt'; did you mean recall.default_limit?"),
    ({"recall": {"default_limit": "abc"}}, 'recall.default_limit = "abc": expected an integer >= 1'),
    ({"recall": {"default_limit": -5}}, "recall.default_limit = -5: expected an integer >= 1"),
])
def test_a_bad_hand_edited_file_makes_recall_refuse_with_the_message(world, tree, fragment):
    home, project = world
    path = write_config(home, tree)
    before = path.read_bytes()
    proc = cli(["recall", "anything"], home, project)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"error: config file {path}: ") and "Traceback" not in proc.stderr
    assert fragment in proc.stderr
    assert "limit must be" not in proc.stderr  # never blames an argument the user did not pass
    assert path.read_bytes() == before


# --- hooks and the MCP server warn and run on defaults ----------------------------------------------------

def _seed(home: Path, text: str) -> None:
    with MemoryStore(home / "memory.db", config=Config(home=home), embedder=HashProvider(), namespace="proj",
                     ) as store:
        store.remember(text, kind="decision", pinned=True, create_namespace=True)


def test_the_session_start_hook_warns_once_on_stderr_and_still_briefs(world):
    home, project = world
    _seed(home, "Deploys go through the blue-green pipeline only")
    write_config(home, {"recall": {"default_limit": "abc"}, "hooks": {"budget_seconds": "fast"}})
    payload = json.dumps({"session_id": "s1", "cwd": str(project), "hook_event_name": "SessionStart",
                          "source": "startup"})
    proc = cli(["hook", "session-start"], home, project, stdin=payload)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    answer = json.loads(proc.stdout)
    assert "blue-green pipeline" in answer["hookSpecificOutput"]["additionalContext"]
    assert proc.stderr.count('recall.default_limit = "abc"') == 1, proc.stderr
    assert proc.stderr.count('hooks.budget_seconds = "fast"') == 1, proc.stderr
    assert "built-in defaults used instead" in proc.stderr


def test_a_capture_hook_with_a_bad_config_exits_zero(world):
    home, project = world
    write_config(home, {"capture": {"max_chars": "lots"}})
    payload = json.dumps({"session_id": "s2", "transcript_path": None, "cwd": str(project),
                          "hook_event_name": "Stop"})
    proc = cli(["hook", "stop"], home, project, stdin=payload)
    assert proc.returncode == 0 and proc.stdout == ""
    assert 'capture.max_chars = "lots"' in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("content, fragment", [
    ({"recall": {"default_limit": -5}, "mcp": {"max_response_bytes": "big"}}, "recall.default_limit = -5"),
    ("{not json", "is not valid JSON"),
])
def test_the_mcp_server_warns_and_answers_initialize_and_a_tool_call(world, content, fragment):
    home, project = world
    _seed(home, "Deploys go through the blue-green pipeline only")
    write_config(home, content)
    client = McpClient(home, project)
    try:
        assert client.initialize()["result"]["serverInfo"]["name"]
        result = client.tool("memory_recall", {"query": "blue-green deploys pipeline"})
        assert result["isError"] is False, result
        assert "blue-green" in result["content"][0]["text"]
        code, err = client.close()
    finally:
        client.kill()
    assert code == 0 and "Traceback" not in err
    assert fragment in err and "built-in defaults used instead" in err


def test_relevance_threshold_accepts_auto_or_a_share_and_names_both_when_wrong():
    from supermemory.settings import validate_settings

    assert validate_settings({"ranking": {"relevance_threshold": "auto"}}) == []
    assert validate_settings({"ranking": {"relevance_threshold": 0}}) == []
    assert validate_settings({"ranking": {"vector_floor": 0.5}}) == []
    problems = validate_settings({"ranking": {"relevance_threshold": "calibrated"}})
    assert len(problems) == 1 and 'a number from 0 to 1 or "auto"' in problems[0].message, problems


def test_a_retired_setting_in_the_file_is_ignored_with_a_note_not_refused(tmp_path):
    """A config file written for an older release keeps working: the retired key is dropped, doctor says so,
    and `config --set` of that key explains what replaced it."""
    from supermemory.settings import RETIRED

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps(
        {"embedder": {"query_instruction_below": 0.3}, "recall": {"default_limit": 7}}))
    config = load_config(env={}, home=home)            # strict: the CLI's load
    assert config.get("recall.default_limit") == 7
    assert "query_instruction_below" not in config.settings["embedder"]
    assert any("'embedder.query_instruction_below' was retired and is ignored" in note for note in config.problems)
    with pytest.raises(ConfigError, match="retired; the query instruction now follows"):
        set_setting(config, "embedder.query_instruction_below", "0.3")
    assert all(key not in SETTINGS for key in RETIRED)    # a retired key is never also a live one


def test_the_lexical_and_vector_weights_an_older_readme_showed_are_retired_not_refused(tmp_path):
    """The README once showed ranking.weights.lexical / .vector: a file copied from it still loads."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps(
        {"ranking": {"weights": {"lexical": 0.25, "vector": 0.6, "pinned": 0.3}}}))
    config = load_config(env={}, home=home)
    assert config.get("ranking.weights.pinned") == 0.3
    assert set(config.settings["ranking"]["weights"]) == set(DEFAULTS["ranking"]["weights"])
    assert sum("'ranking.weights.lexical' was retired" in n or "'ranking.weights.vector' was retired" in n
               for n in config.problems) == 2
