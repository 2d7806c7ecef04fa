"""`stats` of a namespace that does not exist is refused with the near names, as recall, list and remember refuse
it, over MCP (memory_stats) and in the store."""
from __future__ import annotations

import pytest

from supermemory.errors import NamespaceError
from tests.test_mcp_server import call


def test_memory_stats_of_a_namespace_that_does_not_exist_is_an_error_naming_the_near_one(store):
    store.remember("The cache uses Redis.", namespace="payments", create_namespace=True)
    result = call(store, "memory_stats", {"namespace": "paymnets"})["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "namespace 'paymnets' does not exist" in text and "payments" in text
    listed = call(store, "memory_list", {"namespace": "paymnets"})["result"]["content"][0]["text"]
    assert text == listed   # the same words as the other reads


def test_stats_of_existing_namespaces_the_project_global_and_all_still_answer(store):
    store.remember("The cache uses Redis.", namespace="payments", create_namespace=True)
    assert store.stats(namespace="payments")["memories"] == 1
    for namespace in (None, "proj", "global", "*"):   # the project and global answer even while empty
        assert store.stats(namespace=namespace)["memories"] >= 0
    with pytest.raises(NamespaceError, match="does not exist"):
        store.stats(namespace="nonexistent")
