#!/usr/bin/env python3
"""Install, register and uninstall supermemory for Claude Code and Codex.

Standard library only: this runs before anything is installed.

    python3 install.py              # venv + pip + model + registration + self-check
    python3 install.py --dry-run    # show every change as a unified diff, write nothing
    python3 install.py --uninstall  # remove our registrations, keep the data dir
    python3 install.py --purge      # uninstall and delete the data dir

It also puts a small marked launcher script at ~/.local/bin/supermemory so the
CLI is on PATH; a file there that is not ours (pipx's, pip --user's, a symlink)
is never overwritten, and --uninstall removes only ours.

Every file is edited surgically: only our keys / our TOML table / our marked
block change, a file that would come out byte-identical is not rewritten, and
every modified file is backed up first under <data dir>/backups/<timestamp>/.
<data dir>/install-state.json remembers, per file, whether we created it and
the sha256 + backup of the bytes it had before our first edit, so --uninstall
can put back the exact pre-install bytes when nothing else changed since.
"""
from __future__ import annotations

import argparse
import copy
import datetime
import difflib
import hashlib
import json
import os
import queue
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

try:  # Python 3.11+: used only to validate TOML, never to write it
    import tomllib as _tomllib
except ImportError:  # pragma: no cover - Python 3.10
    _tomllib = None

SERVER_NAME = "supermemory"
HOOK_MARKER = "-m supermemory hook"
BLOCK_BEGIN = "<!-- supermemory:begin -->"
BLOCK_END = "<!-- supermemory:end -->"
STATE_NAME = "install-state.json"
STATE_VERSION = 1
HOOK_TIMEOUT = 10
CODEX_STARTUP_TIMEOUT_SEC = 20
SELFCHECK_TIMEOUT = 20.0
INSTALL_RECORD = "supermemory-install.json"   # in the installed Python's prefix; read by supermemory.install_record
UPGRADE_BUDGET_S = 60.0   # the one-time passes of a new version run this long at most (the rest at the next SessionEnd)
UPGRADE_GRACE_S = 120.0   # then the process is stopped: model load and the re-redaction are not bounded by the budget
SESSION_START_MATCHER = "startup|resume|clear|compact"
MCP_ARGS = ["-m", "supermemory", "mcp"]

# (event, matcher or None to omit, hook subcommand)
CLAUDE_HOOKS = [
    ("SessionStart", SESSION_START_MATCHER, "session-start --platform claude-code"),
    ("PreCompact", None, "pre-compact --platform claude-code"),
    ("SessionEnd", None, "session-end --platform claude-code"),
]
CODEX_HOOKS = [
    ("SessionStart", SESSION_START_MATCHER, "session-start --platform codex"),
    ("PreCompact", None, "pre-compact --platform codex"),
    ("Stop", None, "stop --platform codex"),
]

FALLBACK_GUIDE = (
    "## supermemory: long-term memory\n"
    "Call `memory_recall` before starting a task to pull in relevant past context, "
    "and `memory_remember` to store durable facts, decisions and preferences.\n"
    "Run `supermemory guide` for the full usage instructions.\n"
)

INITIALIZE_REQUEST = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "supermemory-install", "version": "0"},
            },
        },
        separators=(",", ":"),
    )
    + "\n"
)

LAUNCHER_MARKER = "# supermemory-launcher:"
LAUNCHER_KIND = "launcher"

MCP_KINDS = ("claude_mcp", "codex_config")   # the files whose supermemory entry a user may write by hand (README)
KINDS = ("claude_mcp", "claude_hooks", "claude_instructions", "codex_config", "codex_hooks", "codex_instructions")


class ConfigError(Exception):
    """A config file cannot be edited safely; it is left untouched."""


# ---------------------------------------------------------------------------
# output


def say(tag: str, msg: str) -> None:
    print(f"[{tag}] {msg}" if tag else msg, flush=True)


def _tail(text: str, n: int = 8) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return "\n".join("      " + ln for ln in lines[-n:])


# ---------------------------------------------------------------------------
# text helpers


def split_lines(text: str) -> list[str]:
    """Split on \\n only, keeping line ends (str.splitlines also splits on \\f, \\x1c, ...)."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def newline_of(text: str | None) -> str:
    return "\r\n" if text and "\r\n" in text else "\n"


def _is_blank(line: str) -> bool:
    return not line.strip()


def _text_signature(text: str) -> list[str]:
    """What a text file says, ignoring blank lines and trailing whitespace."""
    return [ln.rstrip() for ln in (text or "").splitlines() if ln.strip()]


def _insert_block(lines: list[str], idx: int, block: list[str], nl: str) -> list[str]:
    """Insert block at idx, preceded by one blank line unless the previous line is blank."""
    out = list(lines)
    ins: list[str] = []
    if idx > 0:
        prev = out[idx - 1]
        if not prev.endswith("\n"):
            out[idx - 1] = prev + nl
        if not _is_blank(prev):
            ins.append(nl)
    ins.extend(block)
    out[idx:idx] = ins
    return out


def _delete_span(lines: list[str], start: int, end: int) -> list[str]:
    """Delete lines[start:end] and the single blank line we put before it, if any."""
    out = list(lines)
    del out[start:end]
    if start > 0 and _is_blank(out[start - 1]):
        del out[start - 1]
    return out


# ---------------------------------------------------------------------------
# TOML: string escaping and a minimal structure scanner (enough to find tables)


def toml_string(value: str) -> str:
    """A TOML basic string for value (round-trips through any TOML 1.0 parser)."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif code < 0x20 or code == 0x7F:
            out.append("\\u%04X" % code)
        elif 0xD800 <= code <= 0xDFFF:
            raise ValueError(f"cannot write a lone surrogate (U+{code:04X}) to TOML; is the path valid UTF-8?")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


class TomlSyntaxError(ValueError):
    pass


_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}
_HEXDIGITS = set("0123456789abcdefABCDEF")


def _skip_ws(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t":
        i += 1
    return i


def _parse_basic(s: str, i: int) -> tuple[str, int]:
    j = i + 1
    out = []
    while j < len(s):
        c = s[j]
        if c == '"':
            return "".join(out), j + 1
        if c == "\\":
            e = s[j + 1 : j + 2]
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
                j += 2
                continue
            width = {"u": 4, "U": 8, "x": 2}.get(e)
            digits = s[j + 2 : j + 2 + width] if width else ""
            if not width or len(digits) != width or not set(digits) <= _HEXDIGITS:
                raise TomlSyntaxError("bad escape in string")
            out.append(chr(int(digits, 16)))
            j += 2 + width
            continue
        out.append(c)
        j += 1
    raise TomlSyntaxError("unterminated string")


def _parse_literal(s: str, i: int) -> tuple[str, int]:
    j = s.find("'", i + 1)
    if j < 0:
        raise TomlSyntaxError("unterminated string")
    return s[i + 1 : j], j + 1


def _parse_key(s: str, i: int) -> tuple[list[str], int]:
    parts = []
    while True:
        i = _skip_ws(s, i)
        if i >= len(s):
            raise TomlSyntaxError("expected a key")
        c = s[i]
        if c == '"':
            if s.startswith('"""', i):
                raise TomlSyntaxError("multi-line string used as a key")
            key, i = _parse_basic(s, i)
        elif c == "'":
            if s.startswith("'''", i):
                raise TomlSyntaxError("multi-line string used as a key")
            key, i = _parse_literal(s, i)
        else:
            m = _BARE_KEY.match(s, i)
            if not m:
                raise TomlSyntaxError("bad key")
            key, i = m.group(), m.end()
        parts.append(key)
        i = _skip_ws(s, i)
        if i < len(s) and s[i] == ".":
            i += 1
            continue
        return parts, i


def _parse_header(s: str) -> tuple[list[str], bool]:
    is_array = s.startswith("[[")
    parts, i = _parse_key(s, 2 if is_array else 1)
    close = "]]" if is_array else "]"
    if not s.startswith(close, i):
        raise TomlSyntaxError("bad table header")
    rest = s[i + len(close) :].strip()
    if rest and not rest.startswith("#"):
        raise TomlSyntaxError("text after table header")
    return parts, is_array


def _scan_value(s: str, i: int, ml: str | None, depth: int) -> tuple[str | None, int, int]:
    """Advance over value text, tracking open multi-line strings and bracket depth; also where it stopped (a
    comment's `#`, else the end)."""
    n = len(s)
    while i < n:
        if ml is not None:
            if ml == '"""':
                j = i
                while j < n:
                    if s[j] == "\\":
                        j += 2
                        continue
                    if s.startswith('"""', j):
                        break
                    j += 1
            else:
                j = s.find("'''", i)
                if j < 0:
                    j = n
            if j >= n:
                return ml, depth, n
            i = j + 3
            extra = 0
            while i < n and s[i] == ml[0] and extra < 2:  # up to two quotes may end the content
                i += 1
                extra += 1
            ml = None
            continue
        c = s[i]
        if c == "#":
            return ml, depth, i
        if c == '"':
            if s.startswith('"""', i):
                ml, i = '"""', i + 3
            else:
                _, i = _parse_basic(s, i)
            continue
        if c == "'":
            if s.startswith("'''", i):
                ml, i = "'''", i + 3
            else:
                _, i = _parse_literal(s, i)
            continue
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return ml, depth, n


class _Region:
    __slots__ = ("start", "stop", "content_end", "path", "is_array", "keys", "spans")

    def __init__(self, start, path, is_array):
        self.start, self.stop, self.content_end = start, start, start
        self.path, self.is_array, self.keys = path, is_array, []
        self.spans: list[list[int]] = []  # [first line, line after the value] of each key, in order


def toml_regions(text: str) -> tuple[list[str], list[_Region]]:
    """Lines of text and its regions: the root region, then one per table header."""
    lines = split_lines(text)
    regions = [_Region(0, None, False)]
    ml: str | None = None
    depth = 0
    for idx, line in enumerate(lines):
        body = line.rstrip("\r\n")
        cur = regions[-1]
        if ml is not None or depth > 0:
            ml, depth, _ = _scan_value(body, 0, ml, depth)
            cur.content_end = idx + 1
            cur.spans[-1][1] = idx + 1
            continue
        s = body.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("["):
            path, is_array = _parse_header(s)
            cur.stop = idx
            new = _Region(idx, path, is_array)
            new.content_end = idx + 1
            regions.append(new)
            continue
        key, i = _parse_key(s, 0)
        if i >= len(s) or s[i] != "=":
            raise TomlSyntaxError(f"line {idx + 1}: expected `key = value`")
        cur.keys.append(key)
        cur.spans.append([idx, idx + 1])
        ml, depth, _ = _scan_value(s, i + 1, None, 0)
        cur.content_end = idx + 1
    if ml is not None:
        raise TomlSyntaxError("unterminated multi-line string")
    if depth > 0:
        raise TomlSyntaxError("unterminated array or inline table")
    regions[-1].stop = len(lines)
    return lines, regions


# The keys of [mcp_servers.supermemory] install.py writes (codex_entry); the rest there is the user's.
OUR_TOML_KEYS = ("command", "args", "env", "startup_timeout_sec")
OUR_TABLE = ["mcp_servers", SERVER_NAME]


def _our_path(path) -> bool:
    return path is not None and list(path[:2]) == OUR_TABLE


def codex_entry(command: str, args: list[str], env: dict[str, str]) -> dict:
    """Our [mcp_servers.supermemory] values as data, so the table can be written whole or edited key by key (no env
    when empty; the order is the table's)."""
    entry: dict = {"command": command, "args": list(args)}
    if env:
        entry["env"] = dict(env)
    entry["startup_timeout_sec"] = CODEX_STARTUP_TIMEOUT_SEC
    return entry


def _table_timeout(text: str):
    """The startup_timeout_sec of our [mcp_servers.supermemory] in text: its value (its raw TOML without tomllib),
    None when the key is not there."""
    have = _parsed_entry(text)
    if have is not None or _tomllib is not None:
        return None if have is None else have.get("startup_timeout_sec")
    lines, regions = toml_regions(text)
    main = next((r for r in regions if r.path is not None and list(r.path) == OUR_TABLE and not r.is_array), None)
    spans = [span for k, span in zip(main.keys, main.spans) if k == ["startup_timeout_sec"]] if main else []
    return _value_parts(lines, spans[0])[1] if spans else None


def timeout_is_ours(value, timeouts) -> bool:
    """Is value (from _table_timeout) a startup_timeout_sec an install wrote, not one the user chose?"""
    ours = {CODEX_STARTUP_TIMEOUT_SEC, *timeouts}
    return value in ours or isinstance(value, str) and value in {toml_value(t) for t in ours}


def toml_value(value) -> str:
    """Render one of our values (string, integer, list, inline table) as TOML, so one key can be rewritten alone."""
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def render_codex_table(command: str, args: list[str], env: dict[str, str]) -> str:
    return render_entry(codex_entry(command, args, env))


def render_entry(entry: dict) -> str:
    return "\n".join([f"[mcp_servers.{SERVER_NAME}]"] + [f"{k} = {toml_value(v)}" for k, v in entry.items()]) + "\n"


def _table_entry(text: str):
    """Our [mcp_servers.supermemory] in text, to compare with what install writes: its values (tomllib), else the
    lines of our tables (blank lines and trailing spaces aside)."""
    have = _parsed_entry(text)
    if have is not None:
        return have
    lines, regions = toml_regions(text)
    return tuple(_text_signature("".join(ln for r in regions if _our_path(r.path) for ln in lines[r.start:r.content_end])))


def toml_validate(text: str) -> None:
    if text.startswith("\ufeff"):   # tomllib's own message ("Invalid statement at line 1") hides the cause
        raise ConfigError("not valid TOML: the file starts with a UTF-8 byte-order mark (BOM); save it without one "
                          "and re-run")
    if _tomllib is not None:
        try:
            _tomllib.loads(text)
        except Exception as exc:  # tomllib.TOMLDecodeError
            raise ConfigError(f"not valid TOML ({exc})") from None


def _unsupported_form(regions: list[_Region]) -> tuple[str, str] | None:
    """Name a form of mcp_servers install.py will not edit, since rewriting it would restructure what the user wrote.

    Only [mcp_servers.supermemory] tables are edited in place; an inline table, dotted keys or an array of tables
    is named instead: (why, what to do), or None when the file can be edited.
    """
    table = "or move it to a [mcp_servers.supermemory] table"
    for r in regions:
        if r.path is None:
            for k in r.keys:
                if k[:2] == OUR_TABLE:
                    return "mcp_servers.supermemory is set with dotted keys at the top level (mcp_servers.supermemory.… = …)", table
                if k[0] == "mcp_servers":
                    form = "an inline table" if len(k) == 1 else "dotted keys"
                    return (f"mcp_servers is {form} at the top level ({'.'.join(k)} = …)",
                            "or move your servers to [mcp_servers.<name>] tables")
        elif list(r.path) == ["mcp_servers"]:
            if r.is_array:
                return "[[mcp_servers]] is an array of tables, not the [mcp_servers.<name>] tables Codex reads", \
                    "in a [mcp_servers.supermemory] table"
            for k in r.keys:
                if k[0] == SERVER_NAME:
                    form = "as an inline table (supermemory = { … })" if len(k) == 1 else "with dotted keys (supermemory.… = …)"
                    return f"[mcp_servers] defines supermemory {form}", table
        elif _our_path(r.path) and r.is_array:
            return f"[[{'.'.join(r.path)}]] is an array of tables", "in one [mcp_servers.supermemory] table instead"
    return None


def _parsed_entry(text: str):
    """Read our server's entry with tomllib, so values are compared by meaning, not spelling (None: none, or no tomllib)."""
    if _tomllib is None:
        return None
    try:
        entry = _tomllib.loads(text).get("mcp_servers", {}).get(SERVER_NAME)
    except Exception:  # noqa: BLE001 - tomllib.TOMLDecodeError; toml_validate reports it
        return None
    return entry if isinstance(entry, dict) else None


def _says_ours(text: str, entry: dict) -> bool:
    """Tell whether the entry already holds our values (its env may have more), so a form we cannot edit needs no edit."""
    have = _parsed_entry(text)
    if have is None:
        return False
    env = have.get("env", {})
    return all(have.get(k) == v for k, v in entry.items() if k != "env") and \
        isinstance(env, dict) and all(env.get(k) == v for k, v in entry.get("env", {}).items())


def _value_parts(lines: list[str], span) -> tuple[str, str, list[str]]:
    """Split a key's lines into the text before its value, the value and each line's comment, so none is lost."""
    a, b = span
    first = lines[a].rstrip("\r\n")
    _, i = _parse_key(first, 0)
    start = _skip_ws(first, i + 1)
    value, comments, ml, depth = [], [], None, 0
    for idx in range(a, b):
        s = lines[idx].rstrip("\r\n")
        pos = start if idx == a else 0
        ml, depth, stop = _scan_value(s, pos, ml, depth)
        cut = pos + len(s[pos:stop].rstrip()) if stop < len(s) else len(s)
        value.append(s[pos:cut])
        comments.append(s[cut:])
    return first[:start], "\n".join(value).strip(), comments


def _set_value(lines: list[str], span, value: str, nl: str) -> None:
    """Replace the value of the key on lines[span] in place, so its spelling, indentation and every comment stay (a
    comment inside a multi-line value moves above the key)."""
    a, b = span
    prefix, _, comments = _value_parts(lines, span)
    indent = prefix[: len(prefix) - len(prefix.lstrip())]
    ending = lines[b - 1][len(lines[b - 1].rstrip("\r\n")):]
    above = [indent + c.strip() + nl for c in comments[1:] if c.strip()]   # comments inside a multi-line value
    lines[a:b] = [*above, prefix + value + comments[0] + ending]


def _set_key(text: str, table: list[str], key: list[str], value, nl: str) -> str:
    """Set key = value in the table at path `table` by editing (or adding) that one line, so nothing else moves."""
    lines, regions = toml_regions(text)
    region = next(r for r in regions if r.path is not None and list(r.path) == table and not r.is_array)
    have = _parsed_entry(text)
    if have is not None:
        for part in table[2:] + key:
            have = have.get(part, None) if isinstance(have, dict) else None
        if have == value:
            return text
    spans = [span for k, span in zip(region.keys, region.spans) if k == key]
    if spans:
        if have is None and _value_parts(lines, spans[0])[1] == toml_value(value):
            return text
        if have is None and key == ["env"] and _tomllib is None:
            raise ConfigError("cannot read the env = { … } of [mcp_servers.supermemory] without tomllib (Python "
                              f"3.11+), so it is not rewritten; add {toml_value(value)[2:-2]} to it yourself")
        _set_value(lines, spans[0], toml_value(value), nl)
        return "".join(lines)
    # after the last line of ours (of the same dotted env.NAME keys) in that table, else right after its header
    owned = [span for k, span in zip(region.keys, region.spans)
             if (k[0] == key[0] if len(key) > 1 else table != OUR_TABLE or k[0] in OUR_TOML_KEYS)]
    idx = owned[-1][1] if owned else region.start + 1
    if idx > 0 and not lines[idx - 1].endswith("\n"):
        lines[idx - 1] += nl
    lines.insert(idx, ".".join(toml_key(k) for k in key) + " = " + toml_value(value) + nl)
    return "".join(lines)


def _env_edits(text: str, regions: list[_Region], env: dict[str, str]) -> list[tuple[list[str], list[str], object]]:
    """Plan our env variables in the form the user's env already has, so that form is never restructured.

    A [….env] table, env.NAME keys or one env = { … }; (table, key, value) for each edit.
    """
    if not env:
        return []
    if any(r.path is not None and list(r.path) == OUR_TABLE + ["env"] for r in regions):
        return [(OUR_TABLE + ["env"], [k], v) for k, v in env.items()]   # a [mcp_servers.supermemory.env] table
    main = next(r for r in regions if r.path is not None and list(r.path) == OUR_TABLE)
    if any(k[0] == "env" and len(k) > 1 for k in main.keys):
        return [(OUR_TABLE, ["env", k], v) for k, v in env.items()]      # env.NAME = … lines
    have = _parsed_entry(text) or {}
    return [(OUR_TABLE, ["env"], with_their_env(have.get("env"), env))]  # env = { … }, or none yet


def toml_upsert_table(text: str, entry: dict) -> str:
    """Put our [mcp_servers.supermemory] values into text, editing only the lines of the keys we own.

    Comments, the user's other keys and subtables, and the form their env has (a [….env] table, an inline
    table, env.NAME keys) all stay; a form that cannot be edited that way is refused with what to change.
    """
    nl = newline_of(text)
    try:
        lines, regions = toml_regions(text)
        unsupported = _unsupported_form(regions)
        if unsupported:
            if _says_ours(text, entry):
                return text
            why, instead = unsupported
            ours = ", ".join(f"{k} = {toml_value(v)}" for k, v in entry.items())
            raise ConfigError(f"{why}, which install.py does not rewrite (it edits only a [mcp_servers.supermemory] "
                              f"table, never restructures yours); give supermemory these values there yourself: "
                              f"{ours} ({instead})")
        ours = [r for r in regions if _our_path(r.path)]
        if not ours:   # a new table after the last mcp_servers one (or at the end), our values in it
            return _append_table(lines, regions, render_codex_table(entry["command"], entry["args"], entry.get("env", {})), nl)
        if not any(list(r.path) == OUR_TABLE for r in ours):   # only subtables of ours: our header before them
            text = "".join(_insert_block(lines, ours[0].start, [f"[mcp_servers.{SERVER_NAME}]" + nl, nl], nl))
            lines, regions = toml_regions(text)
        edits = [(OUR_TABLE, [k], v) for k, v in entry.items() if k != "env"]
        for table, key, value in edits + _env_edits(text, regions, entry.get("env", {})):
            text = _set_key(text, table, key, value, nl)
        return text
    except TomlSyntaxError as exc:
        raise ConfigError(f"cannot parse TOML ({exc})") from None


def _append_table(lines: list[str], regions: list[_Region], table: str, nl: str) -> str:
    """Add our whole table after the last mcp_servers table (or at the end), since the file has none of ours yet."""
    block = [ln + nl for ln in table.rstrip("\n").split("\n")]
    mcp = [r for r in regions if r.path and r.path[0] == "mcp_servers"]
    anchor = mcp[-1] if mcp else regions[-1]
    idx = anchor.content_end
    if idx == 0:  # no content at all (empty, or only comments): append at the end
        idx = len(lines)
    else:  # keep comment lines that trail the anchor table with it (unless they lead into a header)
        j = idx
        while j < anchor.stop and lines[j].strip().startswith("#"):
            j += 1
        if j == len(lines) or (j < len(lines) and _is_blank(lines[j])):
            idx = j
    return "".join(_insert_block(lines, idx, block, nl))


def toml_remove_table(text: str) -> str:
    try:
        lines, regions = toml_regions(text)
    except TomlSyntaxError as exc:
        raise ConfigError(f"cannot parse TOML ({exc})") from None
    ours = [r for r in regions if _our_path(r.path)]
    for r in reversed(ours):
        lines = _delete_span(lines, r.start, r.content_end)
    return "".join(lines) if ours else text


def toml_has_table(text: str) -> bool:
    try:
        _, regions = toml_regions(text)
    except TomlSyntaxError:
        return False
    return any(_our_path(r.path) for r in regions)


def with_their_env(theirs, ours: dict[str, str]) -> dict[str, str]:
    """Our server's env plus the string variables a user gave it by hand (e.g. SUPERMEMORY_NAMESPACE), so a
    re-install keeps them; ours win on the variables we set."""
    kept = {k: v for k, v in theirs.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(theirs, dict) else {}
    return {**kept, **ours}



# ---------------------------------------------------------------------------
# marked Markdown block


def _md_spans(lines: list[str]) -> list[tuple[int, int]]:
    spans, start = [], None
    for idx, line in enumerate(lines):
        s = line.strip()
        if s == BLOCK_BEGIN:
            if start is not None:
                raise ConfigError(f"two {BLOCK_BEGIN} markers without {BLOCK_END} in between")
            start = idx
        elif s == BLOCK_END:
            if start is None:
                raise ConfigError(f"{BLOCK_END} without a preceding {BLOCK_BEGIN}")
            spans.append((start, idx + 1))
            start = None
    if start is not None:
        raise ConfigError(f"{BLOCK_BEGIN} without a matching {BLOCK_END}")
    return spans


def md_upsert_block(text: str, block: str) -> str:
    nl = newline_of(text)
    lines = split_lines(text)
    spans = _md_spans(lines)
    new = [ln + nl for ln in block.rstrip("\n").split("\n")]
    if spans:
        for start, end in reversed(spans[1:]):
            lines = _delete_span(lines, start, end)
        start, end = spans[0]
        return "".join(lines[:start] + new + lines[end:])
    return "".join(_insert_block(lines, len(lines), new, nl))


def md_remove_block(text: str) -> str:
    lines = split_lines(text)
    spans = _md_spans(lines)
    for start, end in reversed(spans):
        lines = _delete_span(lines, start, end)
    return "".join(lines) if spans else text


def make_block(guide_text: str) -> str:
    body = [ln.rstrip() for ln in guide_text.replace("\r\n", "\n").split("\n")]
    body = [ln for ln in body if ln.strip() not in (BLOCK_BEGIN, BLOCK_END)]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    return "\n".join([BLOCK_BEGIN, *body, BLOCK_END]) + "\n"


# ---------------------------------------------------------------------------
# editors: one per kind of change


class Editor:
    """apply(text|None) -> text with our entries; strip(text) -> text without them.

    `mine`, set for an uninstall (written_by_install), tells which supermemory entries this install wrote: strip
    removes only those and leaves one the user edited or wrote by hand; None (install, or no state file) takes
    every supermemory entry for ours.
    """

    default_mode = 0o600
    noun = "supermemory entry"   # what uninstall names when it leaves one of the user's in place
    mine = None

    def apply(self, text: str | None) -> str:
        raise NotImplementedError

    def strip(self, text: str) -> str:
        raise NotImplementedError

    def strip_all(self, text: str) -> str:
        """text without any supermemory entry, ours or not, so the rest of two texts can be compared."""
        return self.strip(text)

    def has_ours(self, text: str) -> bool:
        raise NotImplementedError

    def same(self, a: str, b: str) -> bool:
        """Do a and b say the same thing (ignoring formatting)?"""
        return _text_signature(a) == _text_signature(b)

    def empty(self, text: str) -> bool:
        return not text.strip()


class JsonEditor(Editor):
    def load(self, text: str | None) -> dict:
        if text is None or not text.strip():
            return {}
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
        if not isinstance(obj, dict):
            raise ConfigError("the top level is not a JSON object")
        return obj

    @staticmethod
    def dump(obj: dict, like: str | None = None) -> str:
        """obj as JSON laid out like the text it replaces: its indentation (spaces or tabs), line ends and
        whether it ends with a newline (Claude Code writes none); 2 spaces and a final newline otherwise."""
        m = re.search(r"\n([ \t]+)\S", like or "")
        indent = 2 if not m else "\t" if m.group(1)[0] == "\t" else len(m.group(1))
        text = json.dumps(obj, indent=indent, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates from \\ud800-style escapes
            text = json.dumps(obj, indent=indent, ensure_ascii=True)
        if not (like or "").strip() or like.rstrip(" \t").endswith("\n"):
            text += "\n"
        return text.replace("\n", "\r\n") if like and "\r\n" in like else text

    def apply(self, text):
        obj = self.load(text)
        new = copy.deepcopy(obj)
        self.apply_obj(new)
        if text is not None and new == obj:
            return text
        return self.dump(new, text)

    def strip(self, text):
        obj = self.load(text)
        if not self.strip_obj(obj, self.mine):
            return text
        return self.dump(obj, text)

    def strip_all(self, text):
        obj = self.load(text)
        return self.dump(obj, text) if self.strip_obj(obj) else text

    def has_ours(self, text):
        try:
            obj = self.load(text)
        except ConfigError:
            return False
        probe = copy.deepcopy(obj)
        return self.strip_obj(probe)

    def same(self, a, b):
        return self.normalize(self.load(a)) == self.normalize(self.load(b))

    def empty(self, text):
        return self.normalize(self.load(text)) == {}

    def apply_obj(self, obj: dict) -> None:
        raise NotImplementedError

    def strip_obj(self, obj: dict, mine=None) -> bool:
        """Drop our entries from obj (only those mine accepts, when given); True when something was dropped."""
        raise NotImplementedError

    def normalize(self, obj: dict) -> dict:
        raise NotImplementedError


class McpJsonEditor(JsonEditor):
    """mcpServers.supermemory in ~/.claude.json or <project>/.mcp.json."""

    noun = "supermemory MCP server entry"

    def __init__(self, entry: dict | None):
        self.entry = entry

    def apply_obj(self, obj):
        servers = obj.get("mcpServers")
        if servers is None:
            servers = obj["mcpServers"] = {}
        elif not isinstance(servers, dict):
            raise ConfigError('"mcpServers" is not a JSON object')
        entry = copy.deepcopy(self.entry)
        old = servers.get(SERVER_NAME)
        entry["env"] = with_their_env(old.get("env") if isinstance(old, dict) else None, entry.get("env", {}))
        if not entry["env"] and not (isinstance(old, dict) and "env" in old):
            del entry["env"]  # as README's manual entry and our TOML table: no empty env a user's entry lacks
        servers[SERVER_NAME] = entry

    def strip_obj(self, obj, mine=None):
        servers = obj.get("mcpServers")
        if not isinstance(servers, dict) or SERVER_NAME not in servers:
            return False
        if mine is not None and not mine(servers[SERVER_NAME]):
            return False
        del servers[SERVER_NAME]
        if not servers:
            del obj["mcpServers"]
        return True

    def normalize(self, obj):
        obj = copy.deepcopy(obj)
        self.strip_obj(obj)
        if obj.get("mcpServers") == {}:
            del obj["mcpServers"]
        return obj


def _is_our_hook(hook) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and HOOK_MARKER in hook["command"]


def _hook_sub(hook: dict) -> str:
    """What our hook command runs after the marker ("session-start --platform codex"): the same hook across
    reinstalls from another Python or data dir."""
    return hook["command"].split(HOOK_MARKER, 1)[1].strip()


class HooksJsonEditor(JsonEditor):
    """Our command hooks in ~/.claude/settings.json or ~/.codex/hooks.json."""

    noun = "supermemory hook(s)"

    def __init__(self, groups: list[tuple[str, dict]] | None):
        self.groups = groups or []  # (event, matcher group)

    @staticmethod
    def _remove(hooks: dict, prune_events: bool, mine=None) -> tuple[bool, dict[str, int], list[str]]:
        """Drop our hooks (only those mine accepts as (event, hook), when given). Returns (changed, first position
        per event, events emptied by it)."""
        changed, positions, emptied = False, {}, []
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            kept, touched = [], False

            def ours(h, event=event):
                return _is_our_hook(h) and (mine is None or mine((event, h)))

            for group in groups:
                inner = group.get("hooks") if isinstance(group, dict) else None
                if isinstance(inner, list) and any(ours(h) for h in inner):
                    touched = True
                    positions.setdefault(event, len(kept))
                    rest = [h for h in inner if not ours(h)]
                    if rest:
                        group = dict(group)
                        group["hooks"] = rest
                        kept.append(group)
                    continue
                kept.append(group)
            if not touched:
                continue
            changed = True
            hooks[event] = kept
            if not kept:
                emptied.append(event)
                if prune_events:
                    del hooks[event]
        return changed, positions, emptied

    def apply_obj(self, obj):
        hooks = obj.get("hooks")
        if hooks is None:
            hooks = obj["hooks"] = {}
        elif not isinstance(hooks, dict):
            raise ConfigError('"hooks" is not a JSON object')
        for event, _ in self.groups:
            if event in hooks and not isinstance(hooks[event], list):
                raise ConfigError(f'"hooks.{event}" is not a JSON array')
        kept_timeouts = self._their_timeouts(hooks)
        _, positions, emptied = self._remove(hooks, prune_events=False)
        for event, group in self.groups:
            lst = hooks.setdefault(event, [])
            pos = positions.get(event, len(lst))
            group = copy.deepcopy(group)
            for hook in group.get("hooks", []):     # a timeout the user set on our hook stays theirs (fu30 D6)
                hook["timeout"] = kept_timeouts.get((event, _hook_sub(hook)), hook["timeout"])
            lst.insert(pos, group)
            positions[event] = pos + 1
        ours = {event for event, _ in self.groups}
        for event in emptied:
            if event not in ours and hooks.get(event) == []:
                del hooks[event]  # an event we used to register and no longer do

    @staticmethod
    def _their_timeouts(hooks: dict) -> dict:
        """{(event, hook sub-command): timeout} of our hooks whose timeout is not the one install writes: the
        user raised it (a SessionEnd on a long transcript), as they may raise Codex's startup_timeout_sec."""
        out = {}
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else ():
                for hook in group.get("hooks") or [] if isinstance(group, dict) else ():
                    timeout = hook.get("timeout") if _is_our_hook(hook) else None
                    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0 \
                            and timeout != HOOK_TIMEOUT:
                        out[(event, _hook_sub(hook))] = timeout
        return out

    def strip_obj(self, obj, mine=None):
        hooks = obj.get("hooks")
        if not isinstance(hooks, dict):
            return False
        had = bool(hooks)
        changed, _, _ = self._remove(hooks, prune_events=True, mine=mine)
        if changed and had and not hooks:
            del obj["hooks"]
        return changed

    def normalize(self, obj):
        obj = copy.deepcopy(obj)
        self.strip_obj(obj)
        hooks = obj.get("hooks")
        if isinstance(hooks, dict):
            for event in [e for e, v in hooks.items() if v == []]:
                del hooks[event]
            if not hooks:
                del obj["hooks"]
        return obj


class CodexTomlEditor(Editor):
    """[mcp_servers.supermemory] in ~/.codex/config.toml, edited as text.

    :param command: the server's Python (None: unregistering only).
    :param env: our environment for the server; variables a user gave our server by hand are kept beside it.
    :param timeouts: the startup_timeout_sec values an earlier install wrote into this file (install-state.json);
        any other value there is the user's: install keeps it and uninstall leaves the table to them.
    """

    noun = "[mcp_servers.supermemory] table"

    def __init__(self, command: str | None, env: dict | None = None, timeouts=()):
        self.command, self.env, self.timeouts = command, dict(env or {}), tuple(timeouts)

    def entry(self) -> dict:
        return codex_entry(self.command, list(MCP_ARGS), self.env)

    def their_timeout(self, text: str) -> bool:
        """Does our table in text hold a startup_timeout_sec the user chose (so it is not ours to change)?"""
        value = _table_timeout(text)
        return value is not None and not timeout_is_ours(value, self.timeouts)

    def apply(self, text):
        if not text:
            return render_codex_table(self.command, list(MCP_ARGS), self.env)
        toml_validate(text)
        entry = self.entry()
        try:
            if self.their_timeout(text):
                del entry["startup_timeout_sec"]
        except TomlSyntaxError as exc:
            raise ConfigError(f"cannot parse TOML ({exc})") from None
        new = toml_upsert_table(text, entry)
        try:
            toml_validate(new)
        except ConfigError as exc:
            raise ConfigError(f"adding our table would make the file invalid ({exc}); add it by hand") from None
        return new

    def strip(self, text):
        try:
            # a value the user wrote goes with the table: it stays, theirs (so does a table install did not write)
            if self.their_timeout(text) or self.mine is not None and toml_has_table(text) \
                    and not self.mine(_table_entry(text)):
                return text
        except TomlSyntaxError as exc:
            raise ConfigError(f"cannot parse TOML ({exc})") from None
        return toml_remove_table(text)

    def strip_all(self, text):
        return toml_remove_table(text)

    def has_ours(self, text):
        return toml_has_table(text)


class BlockEditor(Editor):
    """The <!-- supermemory:begin/end --> block in CLAUDE.md / AGENTS.md."""

    default_mode = 0o644

    def __init__(self, block: str | None):
        self.block = block

    def apply(self, text):
        if text is None or not text:
            return self.block
        return md_upsert_block(text, self.block)

    def strip(self, text):
        return md_remove_block(text)

    def has_ours(self, text):
        try:
            return bool(_md_spans(split_lines(text)))
        except ConfigError:
            return True


# ---------------------------------------------------------------------------
# locations, state, backups


class Paths:
    def __init__(self, args):
        self.home = Path(os.path.abspath(os.path.expanduser(args.home))) if args.home else Path.home()
        env_home = os.environ.get("SUPERMEMORY_HOME", "").strip()
        self.data_dir_explicit = bool(env_home)
        self.data_dir = Path(os.path.abspath(os.path.expanduser(env_home))) if env_home else Path.home() / ".supermemory"
        codex_env = os.environ.get("CODEX_HOME", "").strip()
        self.codex_home = Path(os.path.abspath(os.path.expanduser(codex_env))) if codex_env else self.home / ".codex"
        self.project = Path(os.path.abspath(os.path.expanduser(args.project))) if args.project else None
        self.claude_json = self.home / ".claude.json"
        self.claude_settings = self.home / ".claude" / "settings.json"
        self.claude_md = self.home / ".claude" / "CLAUDE.md"
        self.codex_config = self.codex_home / "config.toml"
        self.codex_hooks = self.codex_home / "hooks.json"
        self.agents_md = self.codex_home / "AGENTS.md"
        self.state_file = self.data_dir / STATE_NAME
        self.backups = self.data_dir / "backups"
        self.venv = self.data_dir / "venv"
        self.launcher = self.home / ".local" / "bin" / "supermemory"

    def claude_mcp_file(self) -> Path:
        return self.project / ".mcp.json" if self.project else self.claude_json

    def venv_python(self) -> Path:
        if os.name == "nt":
            return self.venv / "Scripts" / "python.exe"
        return self.venv / "bin" / "python"

    def default_path(self, kind: str) -> Path:
        return {
            "claude_mcp": self.claude_mcp_file(),
            "claude_hooks": self.claude_settings,
            "claude_instructions": self.claude_md,
            "codex_config": self.codex_config,
            "codex_hooks": self.codex_hooks,
            "codex_instructions": self.agents_md,
        }[kind]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class State:
    """install-state.json: what install wrote (files, created_dirs, python) and what an uninstall has given back.

    `uninstalled` lists the files an uninstall went through that no install has touched since: their state is
    the user's (a supermemory entry of theirs included), so a later --uninstall or --purge leaves them alone.
    Only without any state file (never written, or lost) does uninstall remove whatever entry looks like ours.
    """

    def __init__(self, path: Path):
        self.path = path
        self.data = {"version": STATE_VERSION, "files": {}, "created_dirs": [], "uninstalled": []}
        self.loaded_text = None
        try:
            raw = path.read_text(encoding="utf-8")
            obj = json.loads(raw)
            if isinstance(obj, dict) and isinstance(obj.get("files"), dict):
                self.data["files"] = obj["files"]
                self.data["created_dirs"] = [d for d in obj.get("created_dirs", []) if isinstance(d, str)]
                self.data["uninstalled"] = [p for p in obj.get("uninstalled", []) if isinstance(p, str)]
                if isinstance(obj.get("python"), str):  # the Python our registrations run (--python or the venv)
                    self.data["python"] = obj["python"]
                self.loaded_text = raw
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            say("!!", f"ignoring unreadable {path} ({exc})")
        self.found = self.loaded_text is not None   # a state file was there to read when the run began

    @property
    def files(self) -> dict:
        return self.data["files"]

    def was_uninstalled(self, path: Path) -> bool:
        """Did an uninstall go through path with no install touching it since (so it is the user's as it is)?"""
        return str(path) in self.data["uninstalled"]

    def set_uninstalled(self, path: Path, done: bool) -> None:
        paths = set(self.data["uninstalled"]) - {str(path)}
        self.data["uninstalled"] = sorted(paths | {str(path)} if done else paths)

    def render(self) -> str:
        data = {k: v for k, v in self.data.items() if k != "uninstalled" or v}
        return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"

    def save(self) -> None:
        if not self.files and not self.data["created_dirs"] and not self.data["uninstalled"]:
            if self.path.exists():
                self.path.unlink()
            self.loaded_text = None
            return
        text = self.render()
        if text == self.loaded_text:
            return
        atomic_write(self.path, text.encode("utf-8"), 0o600)
        self.loaded_text = text


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: Path, data: bytes, default_mode: int) -> None:
    real = os.path.realpath(path)  # write through symlinks (dotfile repos)
    directory = os.path.dirname(real)
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        mode = default_mode & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(real) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def mangle(path: Path) -> str:
    p = Path(os.path.realpath(path))
    parts = [part.replace(":", "").strip("\\/") for part in p.parts]
    return "__".join(part for part in parts if part) or "file"


class Session:
    """Shared bookkeeping for one run: state file, backup dir, counters."""

    def __init__(self, paths: Paths, dry_run: bool):
        self.paths = paths
        self.dry_run = dry_run
        self.state = State(paths.state_file)
        self.stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S.%f")
        self.errors = 0
        self.changed: list[str] = []

    def backup(self, path: Path) -> Path:
        dest_dir = self.paths.backups / self.stamp
        dest_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        dest = dest_dir / mangle(path)
        n = 1
        while dest.exists():
            n += 1
            dest = dest_dir / f"{mangle(path)}.{n}"
        shutil.copy2(os.path.realpath(path), dest)
        return dest

    def ensure_parent(self, path: Path) -> None:
        missing = []
        parent = path.parent
        while not parent.exists():
            missing.append(parent)
            parent = parent.parent
        for d in reversed(missing):
            d.mkdir(mode=0o700 if d == self.paths.data_dir else 0o755)
            if str(d) not in self.state.data["created_dirs"]:
                self.state.data["created_dirs"].append(str(d))


def read_target(path: Path) -> tuple[bytes | None, str | None]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if path.is_symlink():  # a dotfiles manager's link to a file that is not there: do not guess
            target = os.path.join(os.path.dirname(path), os.readlink(path))
            raise ConfigError(f"is a symlink to {os.path.normpath(target)}, which does not exist; create that "
                              "file (or remove the link)") from None
        return None, None
    except IsADirectoryError:
        raise ConfigError("is a directory") from None
    except OSError as exc:
        raise ConfigError(f"cannot read ({exc.strerror or exc})") from None
    try:
        return data, data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError("is not UTF-8 text") from None


READ_ONLY_HINT = ("is read-only; left untouched. Make it writable (chmod u+w {path}) and re-run install.py, "
                  "or edit it by hand")


def read_only(path: Path) -> bool:
    """Did the user make this file read-only (no write bit at all, or not writable for us)?

    The write itself would succeed (a new file renamed over it), so a file protected on purpose,
    e.g. against an agent rewriting it, is only left alone if we ask first.
    """
    real = os.path.realpath(path)
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return False
    return not mode & 0o222 or not os.access(real, os.W_OK)


def print_diff(path: Path, old: str | None, new: str | None) -> None:
    a = split_lines(old or "")
    b = split_lines(new or "")
    for lst in (a, b):
        if lst and not lst[-1].endswith("\n"):
            lst[-1] += "\n\\ No newline at end of file\n"
    diff = difflib.unified_diff(
        a, b, fromfile=str(path) if old is not None else "/dev/null", tofile=str(path) if new is not None else "/dev/null"
    )
    sys.stdout.write("".join(diff))
    sys.stdout.flush()


# ---------------------------------------------------------------------------
# install


def _sh_dquote(s: str) -> str:
    if os.name == "nt":
        return '"' + s + '"'
    return '"' + re.sub(r'(["\\$`])', r"\\\1", s) + '"'


def hook_command(python: str, sub: str, env: dict[str, str]) -> str:
    cmd = f"{_sh_dquote(python)} {HOOK_MARKER} {sub}"
    if env and os.name != "nt":
        cmd = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + cmd
    return cmd


def hook_groups(spec, python: str, env: dict[str, str]) -> list[tuple[str, dict]]:
    out = []
    for event, matcher, sub in spec:
        group: dict = {}
        if matcher is not None:
            group["matcher"] = matcher
        group["hooks"] = [{"type": "command", "command": hook_command(python, sub, env), "timeout": HOOK_TIMEOUT}]
        out.append((event, group))
    return out


def selected_kinds(args) -> list[str]:
    kinds = []
    for kind in KINDS:
        app = kind.split("_", 1)[0]
        if args.claude_only and app != "claude" or args.codex_only and app != "codex":
            continue
        if args.no_hooks and kind.endswith("_hooks"):
            continue
        if args.no_instructions and kind.endswith("_instructions"):
            continue
        kinds.append(kind)
    return kinds


def package_env(paths: Paths) -> dict[str, str]:
    return {"SUPERMEMORY_HOME": str(paths.data_dir)} if paths.data_dir_explicit else {}


def run_package(python: str, args: list[str], paths: Paths, capture: bool, timeout: float | None):
    return run_python(python, ["-m", "supermemory", *args], paths, capture, timeout)


def run_python(python: str, args: list[str], paths: Paths, capture: bool, timeout: float | None):
    """`python ARGS` with the data dir's environment, from the data dir, stdin closed; exit 127 when it cannot run
    or takes longer than `timeout` (then it is killed)."""
    env = dict(os.environ)
    env.update(package_env(paths))
    cwd = paths.data_dir if paths.data_dir.is_dir() else paths.home
    if not cwd.is_dir():
        cwd = Path(tempfile.gettempdir())
    try:
        return subprocess.run(
            [python, *args],
            env=env,
            cwd=str(cwd),
            stdin=subprocess.DEVNULL,
            capture_output=capture,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess([python], 127, "", str(exc))


def guide_block(python: str, paths: Paths, dry_run: bool) -> str:
    if dry_run and not (os.path.isfile(python) and paths.data_dir.is_dir()):
        say("--", "instructions: showing the minimal block; the real one comes from `supermemory guide` at install time")
        return make_block(FALLBACK_GUIDE)
    res = run_package(python, ["guide"], paths, capture=True, timeout=60)
    if res.returncode == 0 and res.stdout.strip():
        return make_block(res.stdout)
    say("!!", f"`supermemory guide` failed (exit {res.returncode}); writing a minimal instructions block")
    return make_block(FALLBACK_GUIDE)


def build_editor(kind: str, python: str | None, env: dict, block: str | None, timeouts=()) -> Editor:
    if kind == "claude_mcp":
        entry = None if python is None else {"type": "stdio", "command": python, "args": list(MCP_ARGS), "env": dict(env)}
        return McpJsonEditor(entry)
    if kind == "claude_hooks":
        return HooksJsonEditor(None if python is None else hook_groups(CLAUDE_HOOKS, python, env))
    if kind == "codex_hooks":
        return HooksJsonEditor(None if python is None else hook_groups(CODEX_HOOKS, python, env))
    if kind == "codex_config":
        return CodexTomlEditor(python, env, timeouts)
    return BlockEditor(block)


def recorded_timeouts(state: State, path: Path) -> list:
    """The startup_timeout_sec install-state.json says an install wrote into path (none before it recorded one)."""
    rec = state.files.get(str(path))
    value = rec.get("startup_timeout_sec") if isinstance(rec, dict) and rec.get("kind") == "codex_config" else None
    return [value] if isinstance(value, int) and not isinstance(value, bool) else []


def install_file(sess: Session, kind: str, path: Path, editor: Editor) -> bool:
    """Apply editor to path. Returns False if the file had to be left alone."""
    try:
        old_bytes, old_text = read_target(path)
        new_text = editor.apply(old_text)
        new_bytes = new_text.encode("utf-8")
    except (ConfigError, ValueError) as exc:
        sess.errors += 1
        say("!!", f"{path}: {exc}; left untouched. Fix it and re-run install.py.")
        return False
    if old_bytes == new_bytes:
        if not sess.dry_run:
            sess.state.set_uninstalled(path, False)   # this install is in it again: --uninstall goes through it
        if not sess.dry_run and adopt_users_entry(sess, kind, path, editor, old_bytes, old_text):
            say("--", f"unchanged {path} (its supermemory entry, the same as ours, is yours: --uninstall keeps it)")
        else:
            say("--", f"unchanged {path}")
        return True
    if old_bytes is not None and read_only(path):
        sess.errors += 1
        say("!!", f"{path}: {READ_ONLY_HINT.format(path=shlex.quote(str(path)))}")
        return False
    if sess.dry_run:
        say("~~", f"would {'create' if old_bytes is None else 'update'} {path}")
        print_diff(path, old_text, new_text)
        return True
    key = str(path)
    rec = sess.state.files.get(key)
    try:
        backup = sess.backup(path) if old_bytes is not None else None
    except OSError as exc:
        sess.errors += 1
        say("!!", f"{path}: cannot back it up ({exc}); left untouched.")
        return False
    if old_bytes is None:
        rec = {"kind": kind, "created": True}
    elif rec is None or rec.get("kind") != kind or not editor.has_ours(old_text):
        rec = {
            "kind": kind,
            "created": False,
            "original_sha256": sha256(old_bytes),
            "backup": str(backup),
            "original_has_ours": editor.has_ours(old_text),
        }
    if kind == "codex_config" and timeout_is_ours(_table_timeout(new_text), ()):
        rec["startup_timeout_sec"] = CODEX_STARTUP_TIMEOUT_SEC   # what we wrote: a later install may change it
    try:
        sess.ensure_parent(path)
        sess.state.files[key] = rec
        sess.state.set_uninstalled(path, False)
        sess.state.save()
        atomic_write(path, new_bytes, editor.default_mode)
    except OSError as exc:
        sess.errors += 1
        say("!!", f"{path}: cannot write it ({exc}); left as it was.")
        return False
    sess.changed.append(key)
    say("ok", f"{'created' if old_bytes is None else 'updated'} {path}")
    return True


# ---------------------------------------------------------------------------
# launcher: ~/.local/bin/supermemory


def adopt_users_entry(sess: Session, kind: str, path: Path, editor: Editor, old_bytes: bytes, old_text: str) -> bool:
    """Record an MCP entry that was already exactly ours before install as the user's, so --uninstall keeps it.

    Such a file is left unchanged, so without a record uninstall would take the entry for one of our own (a
    README "Manual registration" written by hand). Backs the file up and records it as install_file records a
    file it changes, plus users_entry; False when there is nothing to record (or the backup failed).
    """
    rec = sess.state.files.get(str(path))
    if kind not in MCP_KINDS or (rec is not None and rec.get("kind") == kind) or not editor.has_ours(old_text):
        return False
    try:
        backup = sess.backup(path)
        sess.state.files[str(path)] = {"kind": kind, "created": False, "original_sha256": sha256(old_bytes),
                                       "backup": str(backup), "original_has_ours": True, "users_entry": True}
        sess.state.save()
    except OSError as exc:
        sess.state.files.pop(str(path), None)
        say("!!", f"{path}: cannot record it ({exc}); --uninstall would take its supermemory entry for ours.")
        return False
    return True


def render_launcher(python: str, env: dict[str, str]) -> str:
    """The launcher script: our marker, then exec the package with absolute paths."""
    lines = [
        "#!/bin/sh",
        f"{LAUNCHER_MARKER} written by install.py, removed by `python3 install.py --uninstall`.",
        "# Runs the supermemory CLI of the install below; re-running install.py rewrites this file.",
    ]
    home = env.get("SUPERMEMORY_HOME")
    if home:  # the data dir the hooks and the MCP server use, unless the caller sets one
        lines += [
            'if [ -z "${SUPERMEMORY_HOME:-}" ]; then',
            f"    SUPERMEMORY_HOME={shlex.quote(home)}",
            "    export SUPERMEMORY_HOME",
            "fi",
        ]
    lines.append(f'exec {shlex.quote(python)} -m supermemory "$@"')
    return "\n".join(lines) + "\n"


def launcher_status(path: Path) -> tuple[str, bytes | None, str]:
    """("missing" | "ours" | "foreign", current bytes, why it is foreign)."""
    if path.is_symlink():
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return "foreign", None, f"a symlink to {target}"
    if not path.exists():
        return "missing", None, ""
    if not path.is_file():
        return "foreign", None, "not a regular file"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return "foreign", None, f"unreadable ({exc.strerror or exc})"
    head = data[:2048].decode("utf-8", "replace").split("\n")[:5]
    if any(line.startswith(LAUNCHER_MARKER) for line in head):
        return "ours", data, ""
    return "foreign", data, f"no `{LAUNCHER_MARKER}` marker line"


def _make_executable(path: Path) -> None:
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o500 != 0o500:
        os.chmod(path, mode | 0o500)


def direct_cli(python: str, env: dict[str, str]) -> str:
    """This install's CLI by full path, for when `supermemory` on PATH is not ours (or not there)."""
    home = env.get("SUPERMEMORY_HOME")
    prefix = f"SUPERMEMORY_HOME={shlex.quote(home)} " if home and os.name != "nt" else ""
    return f"{prefix}{shlex.quote(python)} -m supermemory"


def install_launcher(sess: Session, path: Path, python: str, env: dict[str, str]) -> bool:
    """Write our launcher at path unless a foreign file is there. Returns True if ours is (or would be) in place."""
    text = render_launcher(python, env)
    new = text.encode("utf-8", "surrogateescape")
    status, old, why = launcher_status(path)
    key = str(path)
    if status == "foreign":
        if key in sess.state.files and not sess.dry_run:  # ours was replaced since: no longer ours to remove
            del sess.state.files[key]
        say("!!", f"{path} is not supermemory's launcher ({why}); left alone.")
        say("", f"      It may be another install of supermemory (pipx, pip --user) or another tool. To use this\n"
                f"      install from the shell, remove {path} (pipx: `pipx uninstall supermemory`) and re-run\n"
                f"      install.py, or run it directly: {direct_cli(python, env)}")
        return False
    executable = old is not None and os.access(path, os.X_OK)
    if old == new and executable:
        say("--", f"unchanged {path}")
        if not sess.dry_run and key not in sess.state.files:  # state lost: the marker says it is ours
            sess.state.files[key] = {"kind": LAUNCHER_KIND, "created": True}
        return True
    if sess.dry_run:
        if old == new:
            say("~~", f"would make {path} executable")
        else:
            say("~~", f"would {'create' if old is None else 'update'} {path}")
            print_diff(path, None if old is None else old.decode("utf-8", "replace"), text)
        return True
    try:
        if old is not None and old != new:
            sess.backup(path)
    except OSError as exc:
        sess.errors += 1
        say("!!", f"{path}: cannot back it up ({exc}); left untouched.")
        return False
    try:
        sess.ensure_parent(path)
        sess.state.files[key] = {"kind": LAUNCHER_KIND, "created": True}
        sess.state.save()
        if old != new:
            atomic_write(path, new, 0o755)
        _make_executable(path)
    except OSError as exc:
        sess.errors += 1
        say("!!", f"{path}: cannot write it ({exc}); left as it was.")
        return False
    sess.changed.append(key)
    say("ok", f"made {path} executable" if old == new else f"{'created' if old is None else 'updated'} {path}")
    return True


def uninstall_launcher(sess: Session, path: Path) -> None:
    """Delete path if it is our launcher; anything else there is left alone."""
    key = str(path)
    status, old, why = launcher_status(path)
    if status != "ours":
        if status == "foreign":
            say("--", f"{path} is not supermemory's launcher ({why}); left alone")
        if key in sess.state.files and not sess.dry_run:
            del sess.state.files[key]
        return
    if sess.dry_run:
        say("~~", f"would delete {path}")
        print_diff(path, old.decode("utf-8", "replace"), None)
        return
    try:
        sess.backup(path)
        os.unlink(path)
    except OSError as exc:
        sess.errors += 1
        say("!!", f"{path}: cannot delete it ({exc}); left as it was.")
        return
    sess.state.files.pop(key, None)
    sess.state.save()
    say("ok", f"deleted our launcher {path}")


def _same_path(a: str | Path, b: str | Path) -> bool:
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _login_files(shell: str, home: Path) -> list[Path]:
    """The files a login shell of this kind reads first (only the first existing one counts for bash)."""
    if shell == "bash":
        for name in (".bash_profile", ".bash_login", ".profile"):
            if (home / name).is_file():
                return [home / name]
        return []
    if shell == "zsh":
        return [Path(os.environ.get("ZDOTDIR") or home) / ".zprofile"]
    if shell == "fish":
        return []
    return [home / ".profile"]


def path_advice(launcher: Path, fresh_dir: bool, planned: bool = False) -> list[tuple[str, str]]:
    """(tag, message) lines: is `supermemory` on PATH now and, if not, the exact line to add and where.

    :param fresh_dir: the launcher's folder is one we created (so a login profile that adds it
        "if it exists" has not seen it yet).
    :param planned: dry run: the launcher is not written yet, so only the folder's place in PATH counts.
    """
    pathvar = os.environ.get("PATH", "")
    bindir = launcher.parent
    on_path = any(entry and _same_path(entry, bindir) for entry in pathvar.split(os.pathsep))
    found = shutil.which("supermemory", path=pathvar)
    if on_path and found and _same_path(found, launcher):
        return [("ok", f"supermemory is on your PATH ({launcher})")]
    if planned and on_path and not found:
        return [("--", f"supermemory will be on your PATH ({launcher.parent} is in PATH)")]
    user_home = Path.home()
    shell = os.path.basename(os.environ.get("SHELL", "")) or "sh"
    if _same_path(bindir, user_home / ".local" / "bin"):
        dir_sh, dir_show = "$HOME/.local/bin", "~/.local/bin"
    else:
        dir_sh, dir_show = _sh_dquote(str(bindir))[1:-1], str(bindir)
    if shell == "fish":
        rc, line = "~/.config/fish/config.fish", f'set -gx PATH "{dir_sh}" $PATH'
    else:
        rc = {"zsh": "~/.zshrc", "bash": "~/.bashrc"}.get(shell, "~/.profile")
        line = f'export PATH="{dir_sh}:$PATH"'
    if found:
        out = [("!!", f"`supermemory` on your PATH is {found}, not this install's launcher {launcher}."),
               ("", f"      To run this install instead, add this line at the end of {rc}, then open a new shell:")]
    else:
        out = [("!!", f"supermemory is not on your PATH yet ({dir_show} is not in PATH).")]
        profile = None
        if fresh_dir and dir_show == "~/.local/bin":
            profile = next((p for p in _login_files(shell, user_home) if ".local/bin" in _read_quiet(p)), None)
        if profile is not None:
            shown = str(profile)
            if profile.is_relative_to(user_home):
                shown = "~/" + profile.relative_to(user_home).as_posix()
            out.append(("", f"      {shown} adds {dir_show} to PATH at your next login, now that the folder exists.\n"
                            f"      Until then, run this line in open shells (or add it to {rc}):"))
        else:
            out.append(("", f"      Add this line to {rc}, then open a new shell:"))
    out.append(("", f"    {line}"))
    return out


def _read_quiet(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _pip_environment(scratch: str) -> dict:
    """`supermemory.deps.pip_environment` of the checkout this script sits in (it needs no installed package): pip
    leaves no `~/.rustup` behind."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from supermemory.deps import pip_environment
    finally:
        sys.path.pop(0)
    return pip_environment(scratch)


def source_copy(checkout: Path, dest: Path) -> Path:
    """A private copy of what pip builds the package from: the checkout's top-level files and the package.

    pip builds a local folder in place (setuptools writes build/ and *.egg-info/ into it), so two runs from
    one clone at once broke each other's build; a copy per run cannot.
    """
    src = dest / "src"
    src.mkdir()
    for entry in checkout.iterdir():
        if entry.is_file():
            shutil.copy2(entry, src / entry.name)
    shutil.copytree(checkout / "supermemory", src / "supermemory", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return src


def prepare_python(args, paths: Paths) -> str | None:
    checkout = Path(__file__).resolve().parent
    if args.python:
        python = os.path.abspath(os.path.expanduser(args.python))
        if not os.path.isfile(python):
            say("!!", f"--python {python} does not exist")
            if not args.dry_run:
                return None
        say("--", f"python: {python} (as given, no venv)")
    else:
        python = str(paths.venv_python())
        if os.path.isfile(python):
            say("--", f"venv: {paths.venv} (exists)")
        elif args.dry_run:
            say("~~", f"would create venv {paths.venv}")
        else:
            with tempfile.TemporaryDirectory(prefix="supermemory-venv-") as scratch:   # ensurepip runs pip too
                res = subprocess.run([sys.executable, "-m", "venv", str(paths.venv)], capture_output=True, text=True,
                                     env=_pip_environment(scratch))
            if res.returncode != 0 or not os.path.isfile(python):
                say("!!", f"creating the venv {paths.venv} failed:\n{_tail(res.stderr or res.stdout)}")
                say("", "      Fix: install the venv module (e.g. apt install python3-venv) or pass --python PATH.")
                return None
            say("ok", f"created venv {paths.venv}")
    if args.no_pip:
        return python
    pip = [python, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    pip += ["-e", str(checkout)] if args.dev else [str(checkout)]
    if args.dry_run:
        say("~~", "would run: " + " ".join(shlex.quote(p) for p in pip))
        return python
    before = installed_version(python, paths)
    say("..", f"pip install {'-e ' if args.dev else ''}{checkout}")
    with tempfile.TemporaryDirectory(prefix="supermemory-src-") as tmp:
        if not args.dev:
            try:
                pip[-1] = str(source_copy(checkout, Path(tmp)))
            except OSError as exc:
                say("!!", f"cannot copy {checkout} to build it ({exc}); nothing was registered.")
                return None
        res = subprocess.run(pip, stdin=subprocess.DEVNULL, env=_pip_environment(tmp))
    pip[-1] = str(checkout)
    if res.returncode != 0:
        say("!!", f"pip install failed (exit {res.returncode}); nothing was registered.")
        say("", f"      Fix the error above and re-run, or retry by hand: {' '.join(shlex.quote(p) for p in pip)}")
        return None
    record_install(python, paths, checkout, editable=args.dev)
    after = installed_version(python, paths) or "(version unknown)"
    if before is None:
        say("ok", f"installed {after}")
    elif before == after:
        say("ok", f"reinstalled {after} (the version already installed)")
    else:
        say("ok", f"upgraded {before} → {after}")
    return python


def _python_says(python: str, code: str, paths: Paths) -> str | None:
    """The last line `python -c CODE` prints, or None when it fails."""
    res = run_python(python, ["-c", code], paths, capture=True, timeout=60)
    lines = (res.stdout or "").strip().splitlines()
    return lines[-1].strip() if res.returncode == 0 and lines else None


def installed_version(python: str, paths: Paths) -> str | None:
    """The version of the supermemory package `python` runs: what its `--version` says (with the commit install.py
    recorded, "0.2.0+d2844e9"), for a version without that option its distribution's version; None when it has
    none (or `python` does not exist yet)."""
    if not os.path.isfile(python):
        return None
    res = run_package(python, ["--version"], paths, capture=True, timeout=60)
    words = (res.stdout or "").split()
    if res.returncode == 0 and len(words) == 2 and words[0] == "supermemory":
        return words[1]
    return _python_says(python, "import importlib.metadata as m; print(m.version('supermemory'))", paths)


def source_commit(checkout: Path) -> tuple[str | None, bool]:
    """The short commit of the git checkout install.py runs from, and whether tracked files changed since it
    (`git status`); (None, False) when it is no git checkout or git cannot say."""
    if not (checkout / ".git").exists():
        return None, False
    try:
        head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=20, stdin=subprocess.DEVNULL)
        status = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None, False
    commit = head.stdout.strip()
    if head.returncode != 0 or not re.fullmatch(r"[0-9a-f]{4,40}", commit):
        return None, False
    return commit, status.returncode == 0 and bool(status.stdout.strip())


def record_install(python: str, paths: Paths, checkout: Path, *, editable: bool = False) -> Path | None:
    """Write <prefix of python>/supermemory-install.json: the package version, the commit of the checkout it was
    installed from (None for a copy without .git) and where that checkout is, which the package reads for
    `supermemory --version`, MCP serverInfo and doctor. Only into a venv (a prefix with pyvenv.cfg), never into
    a system Python's prefix or the user's project; None when nothing was written."""
    prefix = _python_says(python, "import sys; print(sys.prefix)", paths)
    release = _python_says(python, "import supermemory as s; print(getattr(s, 'RELEASE', s.__version__))", paths)
    if not prefix or not release or not (Path(prefix) / "pyvenv.cfg").is_file():
        return None
    commit, dirty = source_commit(checkout)
    record = {"version": release, "commit": commit, "dirty": dirty, "editable": bool(editable),
              "source": str(checkout), "installed_at": datetime.datetime.now(datetime.timezone.utc).isoformat(
                  timespec="seconds")}
    path = Path(prefix) / INSTALL_RECORD
    try:
        atomic_write(path, (json.dumps(record, indent=2) + "\n").encode("utf-8"), 0o644)
    except OSError as exc:
        say("--", f"cannot record the installed commit in {path} ({exc}); `supermemory --version` shows the version only")
        return None
    return path


UPGRADE_CODE = ("import json, sys\nfrom supermemory.doctor import upgrade_passes\n"
                "print(json.dumps(upgrade_passes(float(sys.argv[1]))))")


def run_upgrade_passes(python: str, paths: Paths, budget: float = UPGRADE_BUDGET_S) -> dict | None:
    """Run the one-time passes the new version brings to an existing store (`supermemory.doctor.upgrade_passes`:
    what `supermemory maintenance` runs) for about `budget` seconds, and say what they did; a pass that does not
    finish is left to the SessionEnd hook and `supermemory maintenance`, which go on where it stopped. Returns the
    package's report, or None when it could not run."""
    res = run_python(python, ["-c", UPGRADE_CODE, str(budget)], paths, capture=True, timeout=budget + UPGRADE_GRACE_S)
    later = "the SessionEnd hook or `supermemory maintenance` runs them (they go on where they stopped)"
    try:
        report = json.loads((res.stdout or "").strip().splitlines()[-1]) if res.returncode == 0 else None
    except (ValueError, IndexError):
        report = None
    if not isinstance(report, dict):
        timed_out = "timed out" in (res.stderr or "")
        why = f"stopped after {budget + UPGRADE_GRACE_S:g} s" if timed_out else f"exit {res.returncode}"
        say("!!", f"the one-time passes of this version could not run now ({why}); {later}")
        if res.stderr and not timed_out:
            say("", _tail(res.stderr, 4))
        return None
    before, pending = report.get("pending_before") or [], report.get("pending") or []
    if not report.get("db") or not before:
        if report.get("db"):
            say("ok", "memory.db: no one-time passes pending")
        return report
    say("ok", f"ran the one-time passes of this version in {report.get('seconds', 0)} s ({', '.join(before)}): "
              f"{report.get('redacted', 0)} rows re-redacted, {report.get('summaries', 0)} summaries recomputed, "
              f"{report.get('supersedes_links', 0)} supersedes links written")
    links = report.get("supersedes") or []
    for link in links[:10]:
        say("", f"      {link['src']} supersedes {link['dst']}: {' '.join(str(link['titles'][0]).split())[:100]}")
    if report.get("supersedes_links", 0) > len(links[:10]):
        say("", f"      …and {report['supersedes_links'] - len(links[:10])} more")
    if pending:
        say("!!", f"{len(pending)} one-time pass(es) not finished in {budget:g} s ({', '.join(pending)}): {later}")
    return report


def provision_model(args, python: str, paths: Paths) -> None:
    if args.no_model:
        return
    retry = f"{_sh_dquote(python)} -m supermemory model install"
    if args.dry_run:
        say("~~", f"would run: {retry}")
        return
    say("..", "model install")
    res = run_package(python, ["model", "install"], paths, capture=False, timeout=None)
    if res.returncode == 0:
        say("ok", "model installed")
    else:
        say("!!", f"model install failed (exit {res.returncode}); registering anyway. Retry later with: {retry}")


def read_back_specs(paths: Paths, kinds: list[str], python: str, env: dict) -> list[tuple[str, dict]]:
    """The MCP commands as actually written into the config files."""
    specs = []
    if "claude_mcp" in kinds:
        path = paths.claude_mcp_file()
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))["mcpServers"][SERVER_NAME]
            specs.append((str(path), {"command": entry["command"], "args": entry.get("args", []), "env": entry.get("env") or {}}))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            say("!!", f"cannot read back {path} ({exc})")
    if "codex_config" in kinds:
        path = paths.codex_config
        entry = None
        if _tomllib is not None:
            try:
                entry = _tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"][SERVER_NAME]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                say("!!", f"cannot read back {path} ({exc})")
        elif path.exists() and toml_has_table(path.read_text(encoding="utf-8")):
            entry = {"command": python, "args": list(MCP_ARGS), "env": env}
        if entry is not None:
            specs.append((str(path), {"command": entry["command"], "args": entry.get("args", []), "env": entry.get("env") or {}}))
    return specs


def mcp_handshake(command: str, args: list[str], env: dict, cwd: Path, timeout: float = SELFCHECK_TIMEOUT):
    """Spawn the server, send initialize, wait for result.serverInfo. Returns (ok, detail)."""
    full_env = dict(os.environ)
    full_env.update(env)
    errlog = tempfile.TemporaryFile()
    try:
        try:
            proc = subprocess.Popen(
                [command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog,
                env=full_env, cwd=str(cwd) if cwd.is_dir() else None,
            )
        except OSError as exc:
            return False, f"cannot start {command}: {exc}"
        lines: queue.Queue = queue.Queue()

        def reader():
            try:
                for raw in proc.stdout:
                    lines.put(raw)
            except (OSError, ValueError):
                pass
            lines.put(None)

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        ok, detail = False, "no answer"
        try:
            try:
                proc.stdin.write(INITIALIZE_REQUEST.encode("utf-8"))
                proc.stdin.flush()
            except OSError:
                pass
            deadline = time.monotonic() + timeout
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    detail = f"no initialize response within {timeout:.0f}s"
                    break
                try:
                    raw = lines.get(timeout=remaining)
                except queue.Empty:
                    detail = f"no initialize response within {timeout:.0f}s"
                    break
                if raw is None:
                    detail = "the server exited before answering initialize"
                    break
                try:
                    msg = json.loads(raw.decode("utf-8", "replace"))
                except ValueError:
                    continue
                if not isinstance(msg, dict) or msg.get("id") != 1:
                    continue
                info = (msg.get("result") or {}).get("serverInfo") if isinstance(msg.get("result"), dict) else None
                if isinstance(info, dict):
                    ok, detail = True, f"{info.get('name', '?')} {info.get('version', '')}".strip()
                else:
                    detail = f"unexpected initialize answer: {json.dumps(msg)[:200]}"
                break
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            thread.join(timeout=5)
            if not thread.is_alive():
                proc.stdout.close()
        if not ok:
            errlog.seek(0)
            err = errlog.read().decode("utf-8", "replace")
            if err.strip():
                detail += "\n" + _tail(err)
        return ok, detail
    finally:
        errlog.close()


def selfcheck(python: str, paths: Paths, specs: list[tuple[str, dict]], untouched: set[str] = frozenset()) -> bool:
    """Run doctor and spawn each registered server; `untouched`: files install.py had to leave as they were."""
    ok = True
    res = run_package(python, ["doctor", "--json"], paths, capture=True, timeout=120)
    if res.returncode == 0:
        say("ok", "supermemory doctor")
        try:
            warnings = json.loads(res.stdout or "{}").get("warnings") or []
        except ValueError:
            warnings = []
        for warning in warnings:  # warnings do not fail the check, but are worth seeing
            say("!!", "doctor: " + str(warning))
    else:
        ok = False
        say("!!", f"supermemory doctor reported problems (exit {res.returncode}):\n{_tail(res.stdout + res.stderr)}")
        say("", f"      Fix what it says, then check again with: {_sh_dquote(python)} -m supermemory doctor")
    seen = []
    for where, spec in specs:
        key = (spec["command"], tuple(spec["args"]), tuple(sorted(spec["env"].items())))
        if key in seen:
            continue
        seen.append(key)
        good, detail = mcp_handshake(spec["command"], list(spec["args"]), dict(spec["env"]), paths.home)
        if good:
            say("ok", f"MCP server answers initialize ({detail}) [{where}]")
        else:
            ok = False
            say("!!", f"MCP server check failed [{where}]: {detail}")
            if where in untouched:   # the entry checked is the one already there, not ours: a re-run alone changes nothing
                say("", f"      Fix: {where} was left untouched (see above), so this is the entry that was already "
                        "in it; change it as said there, then re-run install.py.")
            else:
                say("", f"      Fix: run {_sh_dquote(spec['command'])} {' '.join(spec['args'])} by hand to see the error; "
                        "re-run install.py to repair the venv.")
    return ok


# ---------------------------------------------------------------------------
# day one: the histories and rules already on the machine


def history_dirs(paths: Paths) -> tuple[Path, Path]:
    """Claude Code's projects folder and Codex's sessions folder under the home being installed into."""
    claude = Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get("CLAUDE_CONFIG_DIR") else paths.home / ".claude"
    codex = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else paths.home / ".codex"
    return claude / "projects", codex / "sessions"


def count_sessions(paths: Paths) -> tuple[int, int]:
    """(Claude Code sessions, Codex sessions) on disk: transcripts outside subagent folders, rollouts."""
    claude_dir, codex_dir = history_dirs(paths)
    claude = codex = 0
    for folder, dirs, names in os.walk(claude_dir):
        dirs[:] = [d for d in dirs if d != "subagents"]
        claude += sum(1 for n in names if n.endswith(".jsonl"))
    for folder, dirs, names in os.walk(codex_dir):
        codex += sum(1 for n in names if n.startswith("rollout-") and n.endswith(".jsonl"))
    return claude, codex


def user_rule_files(paths: Paths) -> list[Path]:
    """The user-level CLAUDE.md / AGENTS.md with rules of the user's own: import-rules never imports our block,
    so a file holding only that (what this installer writes on a fresh machine) would import nothing."""
    claude_dir, codex_dir = history_dirs(paths)
    return [p for p in (claude_dir.parent / "CLAUDE.md", codex_dir.parent / "AGENTS.md") if p.is_file() and _own_text(p)]


def _own_text(path: Path) -> bool:
    """Whether the file has a line outside our block that could be a rule: not blank, not a heading, an HTML
    comment or an `@file` import (import-rules skips those too; its parser is in the package, not installed yet
    on a dry run). A file whose markers are broken counts: import-rules says what it finds there."""
    try:
        text = md_remove_block(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False
    except ConfigError:
        return True
    return any(line.strip() and not line.lstrip().startswith(("#", "<!--", "@")) for line in text.splitlines())


# The dry run reads every session not captured yet to its end (its counts are the real run's); gigabytes of
# history take minutes, and the install never waits that long for a count it only words an offer with.
COUNT_TIMEOUT_S = 20


def _dry_run(python: str, paths: Paths, command: list[str]) -> dict:
    """The package's `COMMAND --dry-run --json` plan; {} when it failed or took longer than COUNT_TIMEOUT_S."""
    res = run_package(python, [command[0], "--dry-run", "--json", *command[1:]], paths, capture=True,
                      timeout=COUNT_TIMEOUT_S)
    try:
        plan = json.loads(res.stdout) if res.returncode == 0 else {}
    except ValueError:
        return {}
    return plan if isinstance(plan, dict) else {}


def sessions_to_capture(python: str, paths: Paths, folders: list[str]) -> int | None:
    """How many sessions on disk a backfill would capture (new, or grown since their capture), as the package's
    `backfill --dry-run` counts them from its capture records; None when it cannot say (it failed, is old, or
    took longer than COUNT_TIMEOUT_S)."""
    plan = _dry_run(python, paths, ["backfill", *folders])
    try:
        return int(plan["captured"]) + int(plan["updated"])
    except (ValueError, TypeError, KeyError):
        return None


def rules_to_import(python: str, paths: Paths, files: list[Path]) -> dict[str, int] | None:
    """How many rules of each file import-rules would add or change (keyed by the file's real path), as the
    package's `import-rules --dry-run` counts them against those stored; None when it cannot say (it failed, is
    old, or took longer than COUNT_TIMEOUT_S)."""
    plan = _dry_run(python, paths, ["import-rules", *map(str, files)])
    try:
        if plan.get("dry_run") is not True:   # an older package refuses the flag
            return None
        # a file it cannot read counts as pending: the import then says why
        return {os.path.realpath(f["path"]): int(f["created"]) + int(f["changed"]) + bool(f.get("error"))
                for f in plan["files"]}
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _ask(question: str) -> bool:
    try:
        answer = input(question)
    except EOFError:
        return False
    return answer.strip().lower() in ("", "y", "yes")


def offer_backfill(args, python: str, paths: Paths, cli: str = "supermemory") -> None:
    """Say how many earlier sessions are on disk and capture them (with the user-level rules) when
    asked to: `--backfill` / `--yes`, or a yes at the prompt when stdin is a terminal. Never blocks
    without a terminal; `--no-backfill` skips it; nothing runs in `--dry-run`.

    :param cli: how the commands it names run this install (`direct_cli` when our launcher is not in place)."""
    claude_dir, codex_dir = history_dirs(paths)
    claude, codex = count_sessions(paths)
    rule_files = user_rule_files(paths)
    if rule_files and not args.dry_run:   # only the files with a rule not stored yet (all when that is unknown)
        counts = rules_to_import(python, paths, rule_files)
        rule_files = rule_files if counts is None else [p for p in rule_files if counts.get(os.path.realpath(p), 1)]
    # Only folders that exist are named: backfill reports a named folder that is missing (an error when
    # none exists), and with no session on disk there is nothing to capture.
    folders = [a for flag, d in (("--claude", claude_dir), ("--codex", codex_dir)) if d.is_dir() for a in (flag, str(d))]
    pending = sessions_to_capture(python, paths, folders) if claude + codex and not args.dry_run else None
    backfill = ["backfill", *folders] if (claude + codex if pending is None else pending) else []
    rules_later = " ".join([cli, "import-rules", *(shlex.quote(str(p)) for p in rule_files)])
    backfill_later = " ".join([cli, *(shlex.quote(a) for a in backfill)]) if backfill else ""
    later = "; rules: ".join(filter(None, [backfill_later, rules_later if rule_files else ""]))
    state = ("" if not claude + codex else " (a backfill skips those captured already)" if pending is None
             else f"; {pending} of them not captured yet" if pending else "; nothing in them left to capture")
    say("--", f"found {claude} Claude Code session(s) in {claude_dir} and {codex} Codex session(s) in {codex_dir}{state}")
    if args.dry_run:
        say("--", f"dry run: no backfill. Later: {later}" if later else "dry run: no backfill.")
        return
    if not backfill and not rule_files:
        return
    if args.no_backfill:
        run = False
    elif args.backfill or args.yes:
        run = True
    elif sys.stdin is not None and sys.stdin.isatty():
        offers = ([f"backfill memory from these {claude + codex} session(s)" if pending is None else
                   f"backfill memory from the {pending} session(s) not captured yet"] if backfill else []) + (
            [f"import the rules of {', '.join(p.name for p in rule_files)}"] if rule_files else [])
        question = " and ".join(offers)
        run = _ask(f"{question[:1].upper()}{question[1:]}? [Y/n] ")
    else:
        run = False
    if not run:
        say("--", f"{'no backfill now' if backfill else 'rules not imported now'}. Run it any time: {later}")
        return
    if backfill:
        res = run_package(python, backfill, paths, capture=False, timeout=None)
        if res.returncode != 0:
            say("!!", f"backfill failed (exit {res.returncode}); run it again with: {backfill_later}")
    if rule_files:
        res = run_package(python, ["import-rules", *map(str, rule_files)], paths, capture=False, timeout=600)
        if res.returncode != 0:
            say("!!", f"import-rules failed (exit {res.returncode}); run it again with: {rules_later}")
    say("--", f"project rules: run `{cli} import-rules` inside a project to import its CLAUDE.md / AGENTS.md")


def hooks_switched_off(paths: Paths, kinds: list[str]) -> list[str]:
    """The user's own settings that keep the hooks we registered from ever running (left as they are)."""
    out, effect = [], "runs no hooks: no session-start briefing, no session capture (the MCP tools still work)"
    if "claude_hooks" in kinds:
        try:
            settings = json.loads(paths.claude_settings.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            settings = None
        if isinstance(settings, dict) and settings.get("disableAllHooks") is True:
            out.append(f'{paths.claude_settings} sets "disableAllHooks": true, so Claude Code {effect}; '
                       "remove that setting to turn them on.")
    if "codex_hooks" in kinds and _tomllib is not None:
        try:
            features = _tomllib.loads(paths.codex_config.read_text(encoding="utf-8")).get("features")
        except (OSError, ValueError):
            features = None
        if isinstance(features, dict) and features.get("codex_hooks") is False:
            out.append(f"{paths.codex_config} sets [features] codex_hooks = false, so Codex {effect}; "
                       "set it to true to turn them on.")
    return out


LOCK_NAME = "install.lock"
_held_lock = []   # the open lock file, kept for the rest of the run


def hold_run_lock(paths: Paths) -> bool:
    """Take <data dir>/install.lock for the rest of this run; False (and why) when another run holds it.

    Two runs at once would create the venv, pip-install into it and edit the same files side by side.
    Where there is no fcntl (Windows) or the file cannot be opened, the run goes on unlocked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return True
    path = paths.data_dir / LOCK_NAME
    try:
        handle = open(path, "a+")
    except OSError:
        return True
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        say("!!", f"another install.py is running for the data dir {paths.data_dir} (it holds {path}); "
                  "wait for it to finish, then re-run.")
        return False
    _held_lock.append(handle)
    return True


def do_install(args, paths: Paths) -> int:
    say("", f"supermemory install{' (dry run: nothing is written)' if args.dry_run else ''}")
    say("--", f"data dir: {paths.data_dir}")
    upgrade = (paths.data_dir / "memory.db").exists()   # an existing store may need the new version's one-time passes
    if not args.dry_run and not paths.data_dir.exists():
        try:
            paths.data_dir.mkdir(parents=True, mode=0o700)
            os.chmod(paths.data_dir, 0o700)
        except OSError as exc:
            say("!!", f"cannot create the data dir {paths.data_dir} ({exc}); set SUPERMEMORY_HOME to a writable place.")
            return 2
    if paths.project and not paths.project.is_dir():
        say("!!", f"--project {paths.project} is not a directory")
        return 2
    if not args.dry_run and not hold_run_lock(paths):
        return 2
    python = prepare_python(args, paths)
    if python is None:
        return 2
    provision_model(args, python, paths)
    if upgrade and args.dry_run:
        say("~~", "would run the one-time passes a new version brings to memory.db (as `supermemory maintenance` does)")
    elif upgrade:
        run_upgrade_passes(python, paths)
    kinds = selected_kinds(args)
    env = package_env(paths)
    block = None
    if any(k.endswith("_instructions") for k in kinds):
        block = guide_block(python, paths, args.dry_run)
    sess = Session(paths, args.dry_run)
    untouched = set()
    for kind in kinds:
        path = paths.default_path(kind)
        if not install_file(sess, kind, path, build_editor(kind, python, env, block, recorded_timeouts(sess.state, path))):
            untouched.add(str(path))
    launcher = False
    if args.no_launcher:
        pass
    elif os.name == "nt":
        say("--", f"no shell launcher on Windows; the CLI is {paths.venv / 'Scripts' / 'supermemory.exe'} "
                  f"(or {python} -m supermemory)")
    else:
        launcher = install_launcher(sess, paths.launcher, python, env)
    fresh_bindir = str(paths.launcher.parent) in sess.state.data["created_dirs"] or not paths.launcher.parent.exists()
    cli = "supermemory" if launcher else direct_cli(python, env)   # a foreign or no `supermemory` on PATH
    if not args.dry_run:
        sess.state.data["python"] = python
        sess.state.save()
    if env and os.name == "nt" and any(k.endswith("_hooks") for k in kinds):
        say("!!", "hooks cannot carry SUPERMEMORY_HOME on Windows; set it in your user environment too.")
    code = 2 if sess.errors else 0
    if args.dry_run:
        if launcher:
            for tag, msg in path_advice(paths.launcher, fresh_bindir, planned=True):
                say(tag, msg)
        offer_backfill(args, python, paths, cli)
        say("", "dry run finished; nothing was written.")
        return code
    if not args.no_selfcheck:
        registered = [k for k in kinds if k in ("claude_mcp", "codex_config")]
        specs = read_back_specs(paths, registered, python, env)
        if not specs:
            specs = [("computed", {"command": python, "args": list(MCP_ARGS), "env": env})]
        if not selfcheck(python, paths, specs, untouched) and code == 0:
            code = 1
    say("", "")
    if sess.errors:
        say("!!", f"{sess.errors} file(s) could not be updated (see above); the rest is registered.")
    else:
        say("ok", "supermemory is registered. Restart Claude Code / Codex to pick it up.")
    if "codex_hooks" in kinds and not sess.errors:
        say("", "Codex runs hooks that are not admin-managed only after you trust them: start `codex`, and when it\n"
                "asks you to review new hooks, check the supermemory SessionStart/PreCompact/Stop hooks and approve\n"
                "them (you can review them again later with /hooks). Older Codex versions also need\n"
                "`[features] codex_hooks = true` in config.toml.")
    for why in hooks_switched_off(paths, kinds):
        say("!!", why)
    if code == 1:
        say("!!", "the self-check failed (see above); registration is in place.")
    if launcher:
        for tag, msg in path_advice(paths.launcher, fresh_bindir):
            say(tag, msg)
    if not sess.errors:
        offer_backfill(args, python, paths, cli)
    say("", f"Undo with: python3 {Path(__file__).name} --uninstall")
    return code


# ---------------------------------------------------------------------------
# uninstall


def registered_entry(kind: str, text: str):
    """The supermemory MCP entry text registers, parsed (None when there is none or it cannot be read)."""
    try:
        if kind == "claude_mcp":
            return json.loads(text)["mcpServers"][SERVER_NAME]
        if kind == "codex_config" and _tomllib is not None:
            return _tomllib.loads(text)["mcp_servers"][SERVER_NAME]
    except (ValueError, KeyError, TypeError):
        pass
    return None


def our_pythons(sess: Session) -> list[str]:
    """The Pythons our registrations run: the one install-state.json recorded (--python or the venv), the venv's."""
    return list(dict.fromkeys(p for p in (sess.state.data.get("python"), str(sess.paths.venv_python())) if p))


def written_by_install(sess: Session, kind: str, timeouts=()):
    """Tell whether one supermemory entry of a file of kind is exactly what this install writes there (an MCP entry,
    a [mcp_servers.supermemory] table, an (event, hook) pair): with a Python of ours, our data dir's env or none,
    a startup_timeout_sec an install wrote. Uninstall removes only those, so one the user edited or wrote by hand
    stays. None without a state file (never written, or lost): then whatever looks like ours is taken for ours."""
    if not sess.state.found:
        return None
    variants = [(py, env) for py in our_pythons(sess) for env in ({}, {"SUPERMEMORY_HOME": str(sess.paths.data_dir)})]
    if kind == "claude_mcp":
        expected = [{"type": "stdio", "command": py, "args": list(MCP_ARGS), **({"env": env} if env else {})}
                    for py, env in variants]
        return lambda entry: (
            {k: v for k, v in entry.items() if not (k == "env" and v == {})} if isinstance(entry, dict) else entry
        ) in expected
    if kind == "codex_config":
        tables = [{**codex_entry(py, list(MCP_ARGS), env), "startup_timeout_sec": t}
                  for py, env in variants for t in dict.fromkeys([CODEX_STARTUP_TIMEOUT_SEC, *timeouts])]
        expected = tables + [tuple(_text_signature(render_entry(t))) for t in tables]   # the second: no tomllib
        return lambda entry: entry in expected
    if kind in ("claude_hooks", "codex_hooks"):
        spec = CLAUDE_HOOKS if kind == "claude_hooks" else CODEX_HOOKS
        expected = [(event, hook) for py, env in variants for event, group in hook_groups(spec, py, env)
                    for hook in group["hooks"]]
        return lambda pair: pair in expected
    return None


def hand_written_entry(sess: Session, kind: str, editor: Editor, text: str, timeouts=()) -> bool:
    """Does text, a file as it was before install, hold a supermemory entry no run of this install wrote?

    An MCP entry is taken for an earlier run's when it runs a Python of ours (by path) with exactly
    `-m supermemory mcp` and holds nothing a user adds (no other key, no env variable but SUPERMEMORY_HOME, a
    startup_timeout_sec an install wrote); hooks are an earlier run's only when exactly ours.
    """
    if kind not in MCP_KINDS:
        return editor.mine is not None and editor.has_ours(editor.strip(text))
    entry = registered_entry(kind, text)
    if not isinstance(entry, dict):
        return False
    command, env = entry.get("command"), entry.get("env", {})
    keys = {"type", "command", "args", "env"} if kind == "claude_mcp" else set(OUR_TOML_KEYS)
    earlier = (isinstance(command, str) and any(_same_path(command, p) for p in our_pythons(sess))
               and entry.get("args") == MCP_ARGS and set(entry) <= keys and entry.get("type", "stdio") == "stdio"
               and isinstance(env, dict) and set(env) <= {"SUPERMEMORY_HOME"})
    if kind == "codex_config":
        earlier = earlier and timeout_is_ours(entry.get("startup_timeout_sec"), timeouts)
    return not earlier


def uninstall_file(sess: Session, kind: str, path: Path) -> None:
    key = str(path)
    rec = sess.state.files.get(key)
    if rec is None and sess.state.was_uninstalled(path):
        # an earlier uninstall gave it back and no install touched it since: whatever it holds now is the user's
        # (a supermemory entry they wrote by hand, kept by that uninstall, included)
        say("--", f"left {path} as it is: an earlier --uninstall already removed our entries")
        return
    timeouts = recorded_timeouts(sess.state, path)
    editor = build_editor(kind, None, {}, None, timeouts)
    editor.mine = written_by_install(sess, kind, timeouts)
    try:
        old_bytes, old_text = read_target(path) if os.path.exists(path) else (None, None)  # a dangling link: nothing
        if old_bytes is None:
            if not sess.dry_run:
                sess.state.files.pop(key, None)
                sess.state.set_uninstalled(path, True)
            return
        stripped = editor.strip(old_text)
        delete = restored = users_kept = False
        new_bytes = stripped.encode("utf-8")
        how = "removed our entries from"
        if rec and rec.get("created"):
            if editor.empty(stripped) and not editor.has_ours(stripped):
                delete, how = True, "deleted (we created it)"
        elif rec and rec.get("backup"):
            backup = Path(rec["backup"])
            try:
                orig = backup.read_bytes()
            except OSError:
                orig = None
            if orig is not None and sha256(orig) == rec.get("original_sha256"):
                try:
                    orig_text = orig.decode("utf-8")
                    # an entry the user had written by hand (a pipx install's `supermemory mcp`) comes back with
                    # the rest of the file; one an earlier run of this install wrote does not
                    hand = bool(rec.get("original_has_ours")) and hand_written_entry(sess, kind, editor, orig_text,
                                                                                     timeouts)
                    theirs = not rec.get("original_has_ours") or rec.get("users_entry") or hand
                    # an entry the strip left (edited since install) is kept, unless it is the hand-written one
                    # install edited in place: that one comes back as it was
                    if theirs and (hand or not editor.has_ours(stripped)) \
                            and editor.same(editor.strip_all(old_text), editor.strip_all(orig_text)):
                        new_bytes, how, restored = orig, "restored the pre-install bytes of", True
                    elif rec.get("users_entry") and (entry := registered_entry(kind, orig_text)) is not None \
                            and registered_entry(kind, old_text) == entry:
                        new_bytes, users_kept = old_bytes, True   # the rest changed since; the entry is still theirs
                except (ConfigError, UnicodeDecodeError):
                    pass
    except (ConfigError, ValueError) as exc:
        sess.errors += 1
        say("!!", f"{path}: {exc}; left untouched. Remove the supermemory entries by hand.")
        return
    # an entry install did not write (edited since, or written by hand) stays where it is, and is named
    kept = not (delete or restored or users_kept) and editor.has_ours(new_bytes.decode("utf-8", "replace"))
    note = (f"{'would keep' if sess.dry_run else 'kept'} the {editor.noun} in {path}: it is not what install.py wrote "
            "(you edited it, or wrote it by hand); remove it yourself if you no longer want it")
    if not delete and new_bytes == old_bytes:
        if rec and rec.get("users_entry") and editor.has_ours(old_text):
            say("--", f"kept {path} as it is: its supermemory entry was there before install (yours)")
        elif kept:
            say("--", note)
        else:
            say("--", f"nothing of ours in {path}")
        if not sess.dry_run:
            sess.state.files.pop(key, None)
            sess.state.set_uninstalled(path, True)
        return
    if sess.dry_run:
        say("~~", f"would {'delete' if delete else 'update'} {path}")
        print_diff(path, old_text, None if delete else new_bytes.decode("utf-8", "replace"))
        if kept:
            say("--", note)
        return
    if read_only(path):
        sess.errors += 1
        say("!!", f"{path}: {READ_ONLY_HINT.format(path=shlex.quote(str(path)))}; the supermemory entries are still in it")
        return
    try:
        sess.backup(path)
        if delete:
            os.unlink(os.path.realpath(path))
        else:
            atomic_write(path, new_bytes, editor.default_mode)
    except OSError as exc:
        sess.errors += 1
        say("!!", f"{path}: cannot update it ({exc}); left as it was.")
        return
    sess.state.files.pop(key, None)
    sess.state.set_uninstalled(path, True)
    sess.state.save()
    say("ok", f"{how} {path}")
    if kept:
        say("--", note)


def do_uninstall(args, paths: Paths) -> int:
    purge = args.purge
    say("", f"supermemory {'purge' if purge else 'uninstall'}{' (dry run: nothing is written)' if args.dry_run else ''}")
    if not args.dry_run and paths.data_dir.is_dir() and not hold_run_lock(paths):
        return 2
    sess = Session(paths, args.dry_run)
    kinds = list(KINDS) if purge else selected_kinds(args)
    targets: dict[str, str] = {}
    for kind in kinds:
        targets[str(paths.default_path(kind))] = kind
        if purge and kind == "claude_mcp":
            targets[str(paths.claude_json)] = kind
    if purge or not paths.project:
        for key, rec in sess.state.files.items():
            if isinstance(rec, dict) and rec.get("kind") in kinds:
                targets.setdefault(key, rec["kind"])
    # everything was given back by an earlier uninstall and nothing installed since: no file is ours to touch
    done_before = all(key not in sess.state.files and sess.state.was_uninstalled(Path(key)) for key in targets)
    if done_before:
        say("--", "nothing is installed: an earlier --uninstall already removed our entries; nothing to remove "
                  "(your files are left as they are)")
    else:
        for key, kind in targets.items():
            uninstall_file(sess, kind, Path(key))
    # the launcher goes with the last registration: a narrower uninstall keeps it while others remain
    narrow = args.claude_only or args.codex_only or args.no_hooks or args.no_instructions
    others = any(isinstance(rec, dict) and rec.get("kind") in KINDS and key not in targets
                 for key, rec in sess.state.files.items())
    if purge or not (args.no_launcher or narrow and others):
        uninstall_launcher(sess, paths.launcher)
    if not args.dry_run:
        remaining = []
        for d in sorted(sess.state.data["created_dirs"], key=lambda p: -len(Path(p).parts)):
            try:
                os.rmdir(d)
                say("ok", f"removed empty directory {d}")
            except FileNotFoundError:
                pass
            except OSError:
                remaining.append(d)
        sess.state.data["created_dirs"] = sorted(remaining)
        if not sess.state.files:
            sess.state.data.pop("python", None)
        if paths.data_dir.is_dir():
            sess.state.save()
    if purge:
        return purge_data_dir(args, paths, sess)
    if sess.errors:
        say("!!", f"{sess.errors} file(s) could not be cleaned (see above).")
    elif args.dry_run:
        say("ok", "uninstall dry run finished; nothing was written.")
    elif not done_before:
        say("ok", "uninstalled.")
    for tag, msg in kept_advice(paths.data_dir, args.dry_run):
        say(tag, msg)
    return 2 if sess.errors else 0


# What a data dir holds, as the closing lines of an uninstall name it.
KEPT_PARTS = (("memory.db", "your memories (memory.db)"), ("models", "the embedding model (models/)"),
              ("venv", "the Python environment the CLI runs in (venv/)"),
              ("backups", "backups of the files install.py edited (backups/)"), ("exports", "exports (exports/)"))


def dir_size(path: Path) -> int:
    """Bytes of the regular files under path (symlinks not followed); unreadable entries count 0."""
    total = 0
    for root, _dirs, files in os.walk(path, onerror=lambda exc: None):
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
    return total


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            break
        size /= 1024
    return f"{n} bytes" if unit == "bytes" else f"{size:.1f} {unit}" if size < 10 else f"{size:.0f} {unit}"


def kept_advice(data_dir: Path, dry_run: bool) -> list[tuple[str, str]]:
    """The closing lines of an uninstall: what stays in the data dir, how big it is, and how --purge removes it."""
    if not data_dir.is_dir():
        return []
    parts = [label for name, label in KEPT_PARTS if (data_dir / name).exists()]
    what = (": " + ", ".join(parts)) if parts else ""
    verb = "would keep" if dry_run else "kept"
    return [("--", f"{verb} the data dir {data_dir} ({human_size(dir_size(data_dir))}){what}."),
            ("", f"      Re-running install.py uses it again; `python3 {Path(__file__).name} --purge` deletes it.")]


def files_still_running(paths: Paths, data_dir: Path) -> list[Path]:
    """The agents' config files that still name a program under `data_dir` (its venv's Python): entries uninstall
    kept because the user had edited them, which a purge leaves pointing at nothing (fresh-user run fu30 D5)."""
    out = []
    for path in dict.fromkeys([paths.default_path(kind) for kind in KINDS] + [paths.claude_json]):
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if str(data_dir) in text or str(paths.data_dir) in text:
            out.append(Path(path))
    return out


def purge_data_dir(args, paths: Paths, sess: Session) -> int:
    d = Path(os.path.realpath(paths.data_dir))
    home = Path(os.path.realpath(paths.home))
    real_home = Path(os.path.realpath(Path.home()))
    if d == Path(d.anchor) or d in (home, real_home) or home.is_relative_to(d) or real_home.is_relative_to(d):
        say("!!", f"refusing to delete {d}: it is a root or home directory")
        return 2
    if not d.exists():
        say("--", f"no data dir at {d}")
    elif args.dry_run:
        say("~~", f"would delete {d}")
    else:
        shutil.rmtree(d)
        say("ok", f"deleted {d}")
    for path in [] if args.dry_run else files_still_running(paths, d):
        say("!!", f"{path} still holds a supermemory entry that runs a Python under {d}, which is gone now (you had "
                  f"edited it, so uninstall left it to you): remove it by hand, or it fails each time the agent runs it")
    if sess.errors:
        say("!!", f"{sess.errors} file(s) could not be cleaned (see above).")
        return 2
    return 0


# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="install.py",
        description="Install supermemory into a private venv and register it with Claude Code and Codex "
        "(MCP server, hooks, usage instructions). Asks one question, on a terminal only: backfill the sessions already on disk (default yes). Data dir: $SUPERMEMORY_HOME or ~/.supermemory.",
        epilog="Exit status: 0 registered, 1 registered but the self-check failed, 2 something could not be "
        "registered (a config file was left untouched, venv/pip failed, bad arguments).",
    )
    p.add_argument("--dry-run", action="store_true",
                   help="print every file that would change as a unified diff; write nothing (not even the data dir)")
    p.add_argument("--dev", action="store_true", help="editable install (pip install -e <checkout>) for development")
    p.add_argument("--uninstall", action="store_true",
                   help="remove our registrations and restore pre-install files; keep the data dir and the DB")
    p.add_argument("--purge", action="store_true", help="uninstall everything and delete the data dir (memories, venv, backups)")
    p.add_argument("--no-hooks", action="store_true", help="do not register (or unregister) Claude Code / Codex hooks")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--claude-only", action="store_true", help="only Claude Code (skip Codex)")
    scope.add_argument("--codex-only", action="store_true", help="only Codex (skip Claude Code)")
    p.add_argument("--project", metavar="DIR",
                   help="register the Claude Code MCP server in DIR/.mcp.json instead of ~/.claude.json")
    p.add_argument("--no-instructions", action="store_true",
                   help="do not add the usage block to ~/.claude/CLAUDE.md and ~/.codex/AGENTS.md")
    p.add_argument("--no-launcher", action="store_true",
                   help="do not write (on --uninstall: keep) the ~/.local/bin/supermemory launcher that puts the CLI on PATH")
    p.add_argument("--no-model", action="store_true", help="skip `supermemory model install`")
    p.add_argument("--no-selfcheck", action="store_true",
                   help="skip `supermemory doctor` and the MCP initialize handshake at the end")
    p.add_argument("--python", metavar="PATH",
                   help="use this interpreter as-is instead of creating <data dir>/venv (it must be able to import supermemory)")
    p.add_argument("--no-pip", action="store_true", help="skip `pip install` of this checkout")
    p.add_argument("--home", metavar="DIR",
                   help="user home used to find ~/.claude.json, ~/.claude/, ~/.codex/ and ~/.local/bin/ (default: your home)")
    offer = p.add_mutually_exclusive_group()
    offer.add_argument("--backfill", action="store_true",
                       help="capture the Claude Code / Codex sessions already on disk and import the user-level "
                       "CLAUDE.md / AGENTS.md rules at the end, without asking")
    offer.add_argument("--no-backfill", action="store_true", help="do not offer the backfill (it prints the command instead)")
    p.add_argument("--yes", "-y", action="store_true",
                   help="answer yes to the one question the installer asks (the backfill offer, asked only on a terminal)")
    return p


def main(argv: list[str] | None = None) -> int:
    if sys.version_info < (3, 10):
        print("supermemory needs Python >= 3.10", file=sys.stderr)
        return 2
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass
    args = build_parser().parse_args(argv)
    paths = Paths(args)
    try:
        if args.uninstall or args.purge:
            return do_uninstall(args, paths)
        return do_install(args, paths)
    except KeyboardInterrupt:
        say("!!", "interrupted")
        return 130
    except BrokenPipeError:  # output piped into `head` etc.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 1


if __name__ == "__main__":
    sys.exit(main())
