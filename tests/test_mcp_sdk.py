"""The official MCP Python SDK drives `supermemory mcp` over stdio and calls every tool.

The SDK (2.x, pinned in the dev extra) is a test-only dependency. Its `ClientSession.initialize()`
always offers the SDK's newest handshake version, so each of our SUPPORTED_PROTOCOL_VERSIONS is
negotiated by sending `initialize` by hand and handing the result to `ClientSession.adopt()`; the
matrix comes from our server alone, never from what an SDK release happens to list.
"""
from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp import types
from mcp.client.stdio import stdio_client

from supermemory.mcp.protocol import SUPPORTED_PROTOCOL_VERSIONS
from supermemory.mcp.tools import TOOLS

REPO = Path(__file__).resolve().parents[1]
VERSIONS = [*SUPPORTED_PROTOCOL_VERSIONS, "sdk-default"]


def _params(home: Path, cwd: Path) -> StdioServerParameters:
    env = {"SUPERMEMORY_HOME": str(home), "SUPERMEMORY_EMBED_PROVIDER": "hash",
           "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return StdioServerParameters(command=sys.executable, args=["-m", "supermemory", "mcp"], env=env, cwd=str(cwd))


async def _initialize(session: ClientSession, version: str, capabilities=None):
    if version == "sdk-default":
        return await session.initialize()
    result = await session.send_request(
        types.InitializeRequest(params=types.InitializeRequestParams(
            protocol_version=version, capabilities=capabilities or types.ClientCapabilities(),
            client_info=types.Implementation(name="sdk-test", version="1.0"))),
        types.InitializeResult)
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())
    return result


def _text(result) -> str:
    assert result.is_error is False, result
    assert result.content and result.content[0].type == "text"
    return result.content[0].text


async def _every_tool(home: Path, cwd: Path, errlog, version: str) -> dict:
    seen: dict = {}
    async with stdio_client(_params(home, cwd), errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            init = await _initialize(session, version)
            seen["version"] = init.protocol_version
            seen["instructions"] = init.instructions
            listing = await session.list_tools()
            seen["tools"] = [t.name for t in listing.tools]
            await session.send_ping()

            async def tool(name: str, arguments: dict) -> tuple[str, dict]:
                result = await session.call_tool(name, arguments)
                seen.setdefault("called", []).append(name)
                return _text(result), result.structured_content

            _, first = await tool("memory_remember", {"content": "We deploy with blue-green switches",
                                                      "kind": "decision", "tags": ["deploy"]})
            _, second = await tool("memory_remember", {"content": "Blue-green needs the health check on /ready",
                                                       "kind": "gotcha", "importance": 0.9})
            text, recall = await tool("memory_recall", {"query": "blue-green deploy", "explain": True})
            assert recall["results"] and "blue-green" in text.lower()
            _, got = await tool("memory_get", {"ids": [first["id"]]})
            assert got["memories"][0]["id"] == first["id"]
            _, listed = await tool("memory_list", {"limit": 10})
            assert listed["total"] == 2
            _, updated = await tool("memory_update", {"id": first["id"], "content": "We deploy with canaries now"})
            _, history = await tool("memory_history", {"id": updated["id"]})
            assert len(history["versions"]) == 2
            _, linked = await tool("memory_link", {"src": second["id"], "dst": updated["id"],
                                                   "relation": "depends-on"})
            assert linked["relation"] == "depends-on"
            _, forgotten = await tool("memory_forget", {"ids": [second["id"]]})
            assert forgotten["forgotten"] == [second["id"]]
            _, restored = await tool("memory_restore", {"ids": [second["id"]]})
            assert restored["restored"] == [second["id"]]
            briefing_text, _ = await tool("memory_briefing", {"max_tokens": 400})
            assert "canaries" in briefing_text
            _, dup = await tool("memory_remember", {"content": "Blue-green deploys need a /ready health check",
                                                    "kind": "gotcha"})
            _, merged = await tool("memory_merge", {"keep": second["id"], "other": dup["id"]})
            assert merged["merged"] == dup["id"] and merged["kept"] == second["id"]
            _, stats = await tool("memory_stats", {})
            assert stats["memories"] == 2
            _, exported = await tool("memory_export", {"path": "sdk-backup.jsonl"})
            seen["export_path"] = exported["path"]
            guide, _ = await tool("memory_usage_guide", {})
            assert "memory_recall" in guide

            refused = await session.call_tool("memory_export", {"path": "../../escape.jsonl"})
            assert refused.is_error is True
            if init.protocol_version >= "2025-11-25":   # SEP-1303: the model sees the message
                wrong = await session.call_tool("memory_recall", {"query": 123})
                assert wrong.is_error is True
                assert wrong.content[0].text.startswith("invalid arguments: arguments.query: expected string")
            else:
                with pytest.raises(MCPError) as bad_params:
                    await session.call_tool("memory_recall", {"query": "x", "limit": "many"})
                assert bad_params.value.code == -32602  # JSON-RPC "Invalid params"
            await session.send_ping()
    return seen


@pytest.mark.parametrize("version", VERSIONS)
def test_the_sdk_client_calls_every_tool(tmp_path, version):
    home = tmp_path / "home"
    with open(tmp_path / "stderr.log", "w", encoding="utf-8") as errlog:
        seen = asyncio.run(asyncio.wait_for(_every_tool(home, tmp_path, errlog, version), timeout=120))
    expected = SUPPORTED_PROTOCOL_VERSIONS[-1] if version == "sdk-default" else version
    assert seen["version"] == expected
    assert "memory_remember" in seen["instructions"]
    assert seen["tools"] == [t.name for t in TOOLS]
    assert sorted(set(seen["called"])) == sorted(t.name for t in TOOLS)
    assert Path(seen["export_path"]).parent == (home / "exports").resolve()
    assert not (tmp_path / "escape.jsonl").exists()
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(encoding="utf-8")


async def _roots_session(home: Path, cwd: Path, root: Path, errlog) -> dict:
    asked = asyncio.Event()

    async def list_roots(context):
        asked.set()
        return types.ListRootsResult(roots=[types.Root(uri=root.as_uri(), name="workspace")])

    async with stdio_client(_params(home, cwd), errlog=errlog) as (read, write):
        async with ClientSession(read, write, list_roots_callback=list_roots) as session:
            await session.initialize()
            await asyncio.wait_for(asked.wait(), timeout=30)
            for _ in range(50):  # the roots answer is already queued; a few round trips let it land
                await session.send_ping()
                stats = (await session.call_tool("memory_stats", {})).structured_content
                if stats["namespace"][0] != "launch-dir":
                    break
            stored = await session.call_tool("memory_remember", {"content": "Rooted memory"})
            return stored.structured_content


def test_the_sdk_clients_workspace_root_picks_the_namespace(tmp_path):
    launch = tmp_path / "launch-dir"
    launch.mkdir()
    root = tmp_path / "Workspace Root"
    (root / ".git").mkdir(parents=True)
    with open(tmp_path / "stderr.log", "w", encoding="utf-8") as errlog:
        stored = asyncio.run(asyncio.wait_for(_roots_session(tmp_path / "home", launch, root, errlog), timeout=120))
    assert stored["namespace"] == "workspace-root"
