"""One rule for the MCP tools that take memory ids: a malformed id fails the call naming its argument, memory_get
lists the ids it did not find beside the memories it did, and every other tool fails on an unknown id, changing
nothing; each tool's description says so."""
from __future__ import annotations

import pytest

from supermemory.mcp.tools import TOOLS_BY_NAME
from tests.test_mcp_server import call

ID_TOOLS = [tool for tool in TOOLS_BY_NAME.values() if set(tool.input_schema["properties"]) & {"id", "ids", "src", "dst", "keep", "other"}]


def result_of(store, name: str, arguments: dict) -> dict:
    return call(store, name, arguments)["result"]


def test_every_id_taking_tool_states_the_rule_in_its_description():
    assert {tool.name for tool in ID_TOOLS} == {"memory_get", "memory_update", "memory_history", "memory_forget",
                                                "memory_restore", "memory_link", "memory_merge"}
    for tool in ID_TOOLS:
        assert "Ids: a malformed" in tool.description, tool.name
    assert "listed under `missing`" in TOOLS_BY_NAME["memory_get"].description
    for name in ("memory_update", "memory_forget", "memory_restore", "memory_link", "memory_merge"):
        assert "unknown one fails the call (isError) and nothing is changed" in TOOLS_BY_NAME[name].description


@pytest.mark.parametrize("name, arguments, field", [
    ("memory_get", {"ids": ["M1", "M999", "bogus"]}, "arguments.ids[2]"),
    ("memory_forget", {"ids": ["M1", "bogus"]}, "arguments.ids[1]"),
    ("memory_restore", {"ids": ["x1"]}, "arguments.ids[0]"),
    ("memory_update", {"id": "M-1", "title": "t"}, "arguments.id"),
    ("memory_history", {"id": "twelve"}, "arguments.id"),
    ("memory_link", {"src": "M1", "dst": "M 2"}, "arguments.dst"),
    ("memory_merge", {"keep": "0", "other": "M1"}, "arguments.keep"),
])
def test_a_malformed_id_fails_the_call_and_names_its_argument(store, name, arguments, field):
    kept = store.remember("The cache uses Redis.")["id"]
    assert kept == "M1"
    result = result_of(store, name, arguments)
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith(f"{field}: not a memory id")
    assert store.get(kept)["memories"]   # nothing forgotten


def test_memory_get_answers_with_the_memories_found_and_lists_the_others_as_missing(store):
    kept = store.remember("The cache uses Redis.")["id"]
    gone = store.remember("The queue is RabbitMQ.")["id"]
    store.forget(gone)
    result = result_of(store, "memory_get", {"ids": [kept, "M999", gone]})
    assert result["isError"] is False
    content = result["structuredContent"]
    assert [m["id"] for m in content["memories"]] == [kept]
    assert content["missing"] == ["M999", gone] and content["forgotten"] == [gone]
    assert "Not found: M999" in result["content"][0]["text"]
    only_unknown = result_of(store, "memory_get", {"ids": ["M999"]})
    assert only_unknown["isError"] is False and only_unknown["structuredContent"]["missing"] == ["M999"]


@pytest.mark.parametrize("name, arguments", [
    ("memory_forget", {"ids": ["M1", "M999"]}),
    ("memory_forget", {"ids": ["M1", "M999"], "hard": True}),
    ("memory_restore", {"ids": ["M999"]}),
    ("memory_update", {"id": "M999", "title": "t"}),
    ("memory_history", {"id": "M999"}),
    ("memory_link", {"src": "M1", "dst": "M999"}),
    ("memory_merge", {"keep": "M1", "other": "M999"}),
])
def test_an_unknown_id_fails_every_other_tool_and_changes_nothing(store, name, arguments):
    kept = store.remember("The cache uses Redis.")["id"]
    before = store.history(kept)
    result = result_of(store, name, arguments)
    assert result["isError"] is True and "no memory M999" in result["content"][0]["text"]
    assert store.history(kept) == before and store.get(kept)["memories"]
