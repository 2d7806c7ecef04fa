"""Lone surrogates in MCP string arguments (JSON `\\ud800` escapes) are stored as U+FFFD and the tool result says so,
in its text and its structured content, instead of only the server's stderr hearing of it."""
from __future__ import annotations

import jsonschema

from supermemory.mcp.tools import TOOLS_BY_NAME
from tests.test_mcp_server import call

BROKEN = "The deploy \ud83d note: half an emoji \udfff cut by a JS slice."
WARNING = "content held 2 invalid character(s) (lone surrogates), replaced with U+FFFD"


def result_of(store, name: str, arguments: dict) -> dict:
    result = call(store, name, arguments)["result"]
    assert result["isError"] is False, result
    schema = TOOLS_BY_NAME[name].describe()["outputSchema"]
    jsonschema.validate(result["structuredContent"], schema)
    return result


def test_remember_says_how_many_characters_it_replaced_in_text_and_structured_content(store):
    result = result_of(store, "memory_remember", {"content": BROKEN})
    assert result["structuredContent"]["warnings"] == [WARNING]
    assert f"({WARNING})" in result["content"][0]["text"]
    stored = store.get(result["structuredContent"]["id"])["memories"][0]
    assert stored["body"].count("\ufffd") == 2


def test_update_and_each_text_argument_are_named(store):
    memory = store.remember("The deploy note.")["id"]
    result = result_of(store, "memory_update", {"id": memory, "content": BROKEN, "title": "t\ud800",
                                                "tags": ["ops\udc00"]})
    warnings = result["structuredContent"]["warnings"]
    assert WARNING in warnings
    assert "title held 1 invalid character(s) (lone surrogates), replaced with U+FFFD" in warnings
    assert "tags held 1 invalid character(s) (lone surrogates), replaced with U+FFFD" in warnings
    assert all(f"({w})" in result["content"][0]["text"] for w in warnings)


def test_a_recall_query_with_a_lone_surrogate_says_it_searched_the_replaced_text(store):
    store.remember("The deploy note.")
    result = result_of(store, "memory_recall", {"query": "deploy \ud800 note"})
    assert result["structuredContent"]["warnings"] == [
        "query held 1 invalid character(s) (lone surrogates), replaced with U+FFFD"]


def test_valid_text_carries_no_warnings(store):
    result = result_of(store, "memory_remember", {"content": "A clean note \U0001f600 with an emoji."})
    assert "warnings" not in result["structuredContent"]
    assert "U+FFFD" not in result["content"][0]["text"]


def test_every_tool_declares_warnings_in_its_output_schema():
    for tool in TOOLS_BY_NAME.values():
        assert tool.describe()["outputSchema"]["properties"]["warnings"]["type"] == "array", tool.name
