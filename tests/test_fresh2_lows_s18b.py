"""Low-severity fixes from the second fresh-user report of session 17: text that is empty once cleaned refused as
"" is over MCP, the compact briefing led by the compacted session, the index ordered by what lasts, and open ends
of session digests in the broad "what's still open?" listing."""
from __future__ import annotations

from tests.test_mcp_server import INIT, call


def test_text_empty_once_cleaned_is_refused_as_the_empty_string_is(store):
    # Fresh-user report (2025-06-18): content "\u0000" and " \u0000 \n", query "\u0000" came back as tool results
    # with isError "content must not be empty", while "" and "   " got JSON-RPC -32602.
    for version in ("2025-06-18", "2025-11-25"):
        init = {**INIT, "params": {**INIT["params"], "protocolVersion": version}}
        answers = [call(store, "memory_remember", {"content": content}, init=init)
                   for content in ("", "\u0000", " \u0000 \n")]
        answers += [call(store, "memory_recall", {"query": query}, init=init) for query in ("", "\u0000", "\u0000 ")]
        answers.append(call(store, "memory_remember", {"content": "x", "tags": ["\u0000"]}, init=init))
        for answer in answers:
            if version == "2025-06-18":
                assert answer["error"]["code"] == -32602, answer
                assert answer["error"]["message"].endswith("must not be empty")
            else:
                assert answer["result"]["isError"] is True
                assert answer["result"]["content"][0]["text"].startswith("invalid arguments: arguments.")
