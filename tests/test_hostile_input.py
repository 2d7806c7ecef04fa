"""Hostile arguments for EVERY tool in `supermemory.mcp.tools.TOOLS`, through the server's own dispatch.

For each field of each tool's input schema: wrong types, missing required fields, unknown
fields, negative and huge numbers, a 10 MB string, NUL bytes, lone surrogates (sent as JSON
`\\ud800` escapes), FTS5 syntax, SQL fragments; for memory_export also path traversal, absolute
paths and symlinks out of the exports folder. Every answer must be a JSON-RPC error naming the
field, an `isError` result, or a safe result — never an internal error. Afterwards every memory
stored beforehand is intact and nothing was written outside the data dir.
"""
from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from helpers.common import check_consistency
from supermemory.config import Config
from supermemory.core import MemoryStore, parse_id
from supermemory.embed import HashProvider
from supermemory.mcp.protocol import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, encode
from supermemory.mcp.server import serve
from supermemory.mcp.session import Session
from supermemory.mcp.tools import TOOLS
from supermemory.mcp.validation import type_ok

HUGE = "A" * (10 * 1024 * 1024)
STRINGS = [("empty", ""), ("blank", "   "), ("nul", "\x00"), ("nul-inside", "a\x00b"), ("lone-surrogate", "\ud800"),
           ("surrogates", "x\udfffy\ud800"), ("fts-quote", '"'), ("fts-near", "NEAR(a b"), ("fts-near-open", "NEAR("),
           ("fts-star", "*"), ("fts-column", "col:val"), ("fts-tokens-column", 'tokens : x'),
           ("fts-ns-column", 'ns : "ns_other"'), ("fts-or", "a OR b"), ("fts-not", "NOT"), ("fts-caret", "^a"),
           ("sql-drop", "'); DROP TABLE memories;--"), ("sql-or", '" OR 1=1 --'), ("format", "%s%n%x{0}"),
           ("escape-text", "\\x00\\ud800"), ("traversal", "../../etc/x"), ("global", "global"),
           ("emoji-cjk", "\U0001f600 中文 \u202e rtl"), ("huge-10mb", HUGE)]
NUMBERS = [("negative", -1), ("very-negative", -10**30), ("huge", 10**30), ("int64-edge", 2**63),
           ("beyond-uint64", 2**64 + 1), ("huge-float", 1e308), ("negative-huge-float", -1e308), ("zero", 0),
           ("fraction", 1.5), ("tiny", 1e-300), ("negative-zero", -0.0)]
WRONG_TYPES = [("null", None), ("true", True), ("false", False), ("int", 7), ("float", 2.5), ("string", "text"),
               ("empty-array", []), ("object", {"a": 1}), ("array", ["a"]), ("nested", [[["deep"]]])]
EXPORT_PATHS = ["../../etc/x", "/etc/x", "../outside.jsonl", "a/../../b.jsonl", "~/x.jsonl", "/tmp/x.jsonl",
                "escape-dir/x.jsonl", "escape-file.jsonl", "/", ".", "exports", "\x00", "nul\x00.jsonl",
                "\ud800.jsonl"]


def _compatible(value, types) -> bool:
    names = types if isinstance(types, list) else [types]
    return any(type_ok(value, name) for name in names)


def bad_values(schema: dict) -> list[tuple[str, object]]:
    """Labelled hostile values for one field of an input schema."""
    types = schema.get("type")
    names = types if isinstance(types, list) else [types]
    out = [(f"wrong-type:{label}", value) for label, value in WRONG_TYPES
           if types is not None and not _compatible(value, types)]
    if "string" in names:
        out += [(f"string:{label}", value) for label, value in STRINGS]
        if "maxLength" in schema and schema["maxLength"] < len(HUGE):
            out.append(("string:max-length+1", "x" * (schema["maxLength"] + 1)))
        if "enum" in schema:
            out += [("enum:upper", str(schema["enum"][0]).upper() + "X"), ("enum:unknown", "no-such-value")]
    if "integer" in names or "number" in names:
        out += [(f"number:{label}", value) for label, value in NUMBERS]
    if "array" in names:
        items = schema.get("items", {})
        out += [("array:empty", []), ("array:null-item", [None]), ("array:int-item", [1]), ("array:nested", [[]]),
                ("array:object-item", [{}]), ("array:nul-item", ["\x00"]), ("array:surrogate-item", ["\ud800"]),
                ("array:thousand", ["x"] * 1000), ("array:huge-item", [HUGE]), ("array:fts-item", ['"', "*"]),
                ("array:sql-item", ["'); DROP TABLE memories;--"])]
        if items.get("enum"):
            out.append(("array:bad-enum", ["no-such-value"]))
    if "boolean" in names:
        out += [("bool:string-true", "true"), ("bool:one", 1), ("bool:zero", 0)]
    return out


@pytest.fixture
def world(tmp_path, monkeypatch):
    user_home = tmp_path / "userhome"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))  # `~/x` lands somewhere we watch
    home = tmp_path / "smhome"
    config = Config(home=home)
    store = MemoryStore(home / "memory.db", config=config, embedder=HashProvider(), namespace="proj")
    protected = {}
    for n in range(6):
        body = f"Protected memory {n}: the build uses cache layer {n} zzprot{n}zz"
        protected[parse_id(store.remember(body, kind="fact", tags=["keep"])["id"])] = body
    victims = {name: parse_id(store.remember(f"victim {name} memory for hostile calls", kind="note")["id"])
               for name in ("update", "dst", "forget", "keep", "other")}
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("do not touch")
    exports = home / "exports"
    exports.mkdir(mode=0o700)
    (exports / "escape-dir").symlink_to(outside, target_is_directory=True)
    (exports / "escape-file.jsonl").symlink_to(outside / "stolen.jsonl")
    yield {"tmp": tmp_path, "home": home, "config": config, "store": store, "protected": protected,
           "victims": victims, "outside": outside, "user_home": user_home}
    store.close()


def _snapshot(root: Path, skip: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == skip or skip in Path(dirpath).parents:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path == skip:   # the data dir itself: what it holds may change (e.g. `namespaces/` records)
                continue
            stat = path.lstat()
            out[str(path)] = (stat.st_size, stat.st_mtime_ns, path.is_symlink())
    return out


class Dispatcher:
    """One Session (the server's dispatch) fed raw frames, exactly as `serve` does."""

    def __init__(self, config: Config, store: MemoryStore):
        self.session = Session(config, store_factory=lambda namespace: store)
        self.seq = 0
        init = self.frame("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "hostile", "version": "1"}})
        assert "result" in init
        assert self.session.handle_frame(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') is None

    def frame(self, method: str, params) -> dict:
        self.seq += 1
        data = json.dumps({"jsonrpc": "2.0", "id": self.seq, "method": method, "params": params},
                          ensure_ascii=True).encode("ascii")  # lone surrogates travel as \ud800 escapes
        response = self.session.handle_frame(data)
        assert response is not None
        wire = json.loads(encode(response))  # what the client would read
        assert wire["id"] == self.seq and wire["jsonrpc"] == "2.0", wire
        return wire


def _classify(wire: dict, field: str | None, label: str) -> str:
    if "error" in wire:
        error = wire["error"]
        assert error["code"] != INTERNAL_ERROR, (field, label, error)
        assert error["code"] in (INVALID_PARAMS, INVALID_REQUEST), (field, label, error)
        assert isinstance(error["message"], str) and error["message"].strip(), (field, label, error)
        if field:
            assert field in error["message"], (field, label, error["message"])  # names the culprit
        return "rejected"
    result = wire["result"]
    text = result["content"][0]["text"]
    assert isinstance(text, str) and "Traceback" not in text, (field, label, text[:500])
    if result["isError"]:
        assert text.strip(), (field, label)
        return "isError"
    assert isinstance(result.get("structuredContent"), dict), (field, label, result)
    return "ok"


def _base(tool: str, props: dict, required: list, world: dict, heads: dict, n: int) -> dict:
    victims = heads
    known = {"id": f"M{victims['update']}", "src": f"M{victims['update']}", "dst": f"M{victims['dst']}",
             "ids": [f"M{victims['forget'] if tool in ('memory_forget', 'memory_restore') else victims['update']}"],
             "keep": f"M{victims['keep']}", "other": f"M{victims['other']}",
             "content": f"hostile base content {n}", "query": "protected memory cache", "path": f"ok-{n}.jsonl"}
    base = {}
    for name in required:
        if name in known:
            base[name] = known[name]
        else:  # a field this test has not met yet: a plausible value from its schema
            kind = props[name].get("type")
            kind = kind[0] if isinstance(kind, list) else kind
            base[name] = props[name].get("enum", [None])[0] or {"string": "x", "integer": 1, "number": 1,
                                                                "boolean": False, "array": [], "object": {}}[kind]
    return base


def test_every_tool_answers_hostile_arguments_with_a_clear_error_or_a_safe_result(world):
    store, config, home = world["store"], world["config"], world["home"]
    before = _snapshot(world["tmp"], home)
    watched = ("/etc/x", "/tmp/x.jsonl", "/x.jsonl", str(world["outside"] / "stolen.jsonl"),
               str(world["outside"] / "x.jsonl"))
    existed = {path: os.path.lexists(path) for path in watched}
    dispatcher = Dispatcher(config, store)
    heads = dict(world["victims"])
    summary: dict[str, dict] = {}
    exported: list[str] = []
    for tool in TOOLS:
        schema = tool.input_schema
        props, required = schema.get("properties", {}), list(schema.get("required", []))
        counts = {"inputs": 0, "rejected": 0, "isError": 0, "ok": 0}
        cases: list[tuple[str | None, str, object]] = [
            (None, "arguments:array", []), (None, "arguments:string", "x"), (None, "arguments:int", 5),
            (None, "arguments:null", None), ("bogus_field", "unknown-field", {"bogus_field": 1})]
        cases += [(name, "missing-required", None) for name in required]
        if required:
            cases.append((required[0], "all-missing", {}))
        cases += [(name, label, value) for name, field in props.items() for label, value in bad_values(field)]
        if tool.name == "memory_export":
            cases += [("path", f"path:{p!r}", p) for p in EXPORT_PATHS]
            cases.append(("path", "path:absolute-outside", str(world["outside"] / "x.jsonl")))
            cases.append(("path", "path:absolute-symlink", str(home / "exports" / "escape-file.jsonl")))
        for field, label, value in cases:
            counts["inputs"] += 1
            base = _base(tool.name, props, required, world, heads, counts["inputs"])
            named = field if field is not None and label != "all-missing" else None
            if label.startswith("arguments:") or label == "all-missing":
                arguments = value
            elif label == "missing-required":
                arguments = {k: v for k, v in base.items() if k != field}
            elif label == "unknown-field":
                arguments = {**base, **value}
            else:
                arguments = {**base, field: value}
            wire = dispatcher.frame("tools/call", {"name": tool.name, "arguments": arguments})
            outcome = _classify(wire, named, label)
            counts[outcome] += 1
            if outcome == "ok":
                structured = wire["result"]["structuredContent"]
                if tool.name == "memory_update":
                    heads["update"] = parse_id(structured["id"])
                if tool.name == "memory_merge":  # KEEP has a new version, OTHER is gone: fresh victims
                    heads["keep"] = parse_id(structured["id"])
                    heads["other"] = parse_id(store.remember(f"victim other {counts['inputs']}", kind="note")["id"])
                if tool.name == "memory_export":
                    exported.append(structured["path"])
        summary[tool.name] = counts

    # a 10 MB frame through the real loop: a framing error, and the loop goes on
    big = json.dumps({"jsonrpc": "2.0", "id": "big", "method": "tools/call",
                      "params": {"name": "memory_remember", "arguments": {"content": HUGE}}}).encode()
    out = io.BytesIO()
    assert serve(io.BytesIO(big + b"\n" + b'{"jsonrpc":"2.0","id":"after","method":"ping"}\n'), out, config=config,
                 store_factory=lambda namespace: store) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert replies[0]["id"] == "big" and replies[0]["error"]["code"] == INVALID_REQUEST   # its id, from the head
    assert replies[-1] == {"jsonrpc": "2.0", "id": "after", "result": {}}

    # --- nothing stored before was harmed -------------------------------------------------------------
    with MemoryStore(home / "memory.db", config=config, embedder=HashProvider(), namespace="proj") as fresh:
        tables = {r[0] for r in fresh.conn.execute("SELECT name FROM sqlite_master")}
        assert {"memories", "chunks", "vectors", "fts", "meta", "links"} <= tables
        got = fresh.get([f"M{i}" for i in world["protected"]])
        assert got["missing"] == []
        for item in got["memories"]:
            assert item["body"] == world["protected"][parse_id(item["id"])]
            assert item["superseded_by"] is None and item["deleted_at"] is None
    check_consistency(home / "memory.db")

    # --- nothing written outside the data dir -----------------------------------------------------------
    after = _snapshot(world["tmp"], home)
    assert after == before, {k: after.get(k) for k in set(after) ^ set(before)}
    assert {path: os.path.lexists(path) for path in watched} == existed
    exports = os.path.realpath(home / "exports")
    for path in exported:
        assert os.path.commonpath([os.path.realpath(path), exports]) == exports, path
    assert summary.keys() == {tool.name for tool in TOOLS}
    total = sum(c["inputs"] for c in summary.values())
    print(f"hostile inputs: {total} in total")
    for name, counts in summary.items():
        print(f"  {name}: {counts}")
