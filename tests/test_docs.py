"""Documentation is tested: commands have help and are in README; tools have descriptions."""
from __future__ import annotations

import argparse
from pathlib import Path

from supermemory.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]


def _subcommands():
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    raise AssertionError("no subcommands")


def test_every_subcommand_has_help_and_is_in_both_readmes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme_zh = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    sub = _subcommands()
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name in sub.choices:
        assert helps.get(name), f"{name} has no help"
        assert f"supermemory {name}" in readme, f"README.md does not mention `supermemory {name}`"
        assert f"supermemory {name}" in readme_zh, f"README.zh-CN.md does not mention `supermemory {name}`"


def test_both_readmes_say_how_to_remember_a_long_text_from_stdin():
    # Found by a fresh-user run: `supermemory remember "$(cat long.txt)"` on a 226 KB file failed with "Argument list
    # too long"; `remember - < long.txt` works, but only `--help` said so.
    for name in ("README.md", "README.zh-CN.md"):
        assert "supermemory remember - < " in (ROOT / name).read_text(encoding="utf-8"), name


def test_both_readmes_state_the_length_limit_of_one_memory():
    # README said "a megabyte of text is stored in seconds" while remember refuses content over 1,000,000 characters
    # ("content is too long (1115356 characters; limit 1000000)"): the limit is now stated where long text is.
    from supermemory.settings import DEFAULTS

    limit = f"{DEFAULTS['store']['max_content_chars']:,}"
    for name in ("README.md", "README.zh-CN.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        at = text.find("store.max_content_chars")
        assert at > 0 and limit in text[at - 80:at], name
        assert "store.write_embed_chunks" in text[at:at + 400], name   # in the paragraph about long text


def test_every_mcp_tool_has_a_description_and_is_in_the_readme():
    from supermemory.mcp.tools import TOOLS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for tool in TOOLS:
        name = tool["name"] if isinstance(tool, dict) else tool.name
        description = tool["description"] if isinstance(tool, dict) else tool.description
        assert description and len(description) > 20
        assert name in readme


def test_chinese_readme_covers_every_section():
    en = [l for l in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if l.startswith("## ")]
    zh = [l for l in (ROOT / "README.zh-CN.md").read_text(encoding="utf-8").splitlines() if l.startswith("## ")]
    assert len(zh) == len(en), (en, zh)


def test_public_store_methods_have_docstrings():
    from supermemory.core import MemoryStore

    for name in dir(MemoryStore):
        if not name.startswith("_") and callable(getattr(MemoryStore, name)):
            assert getattr(MemoryStore, name).__doc__, name


def _readme_config_examples():
    import json
    import re

    for name in ("README.md", "README.zh-CN.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        section = text.split("config.json", 1)[1]
        block = re.search(r"```json\n(.*?)```", section, re.S)
        assert block, f"{name} has no config.json example"
        yield name, json.loads(block.group(1))


def test_the_readme_config_example_is_a_valid_file_that_shows_the_defaults(tmp_path):
    """A user who copies the example into ~/.supermemory/config.json gets a store that runs, ranked as shipped."""
    from supermemory.config import load_config
    from supermemory.settings import DEFAULTS

    def leaves(tree, prefix=""):
        for key, value in tree.items():
            if isinstance(value, dict):
                yield from leaves(value, f"{prefix}{key}.")
            else:
                yield f"{prefix}{key}", value

    for name, example in _readme_config_examples():
        home = tmp_path / name
        home.mkdir()
        (home / "config.json").write_text(__import__("json").dumps(example), encoding="utf-8")
        config = load_config(env={}, home=home)    # strict, as the CLI loads it: raises on a bad key
        assert config.problems == (), (name, config.problems)
        for dotted, value in leaves(example):
            assert config.get(dotted) == value, f"{name}: {dotted} = {value!r}, the default is {config.get(dotted)!r}"
            node = DEFAULTS
            for part in dotted.split("."):
                node = node[part]
            assert value == node, f"{name}: {dotted} = {value!r} is not the default {node!r}"
