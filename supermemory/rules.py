"""Hand-written rules: each bullet or short paragraph of a CLAUDE.md / AGENTS.md as a `preference` memory, kept in step with its file.

A rule is known by its heading path and its text, not its line, so inserting a line changes
nothing else; a rule whose text changed under the same heading gets a new version, a rule gone
from the file is forgotten (soft delete). The usage block the installer writes between the
`guide` markers is never imported. Project files go to the project's namespace, the user-level
files (`~/.claude/CLAUDE.md`, `~/.codex/AGENTS.md`) to `global`.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Sequence

from supermemory.config import GLOBAL_NAMESPACE, namespace_for_dir, project_root
from supermemory.errors import InvalidInputError
from supermemory.guide import BEGIN_MARK, END_MARK
from supermemory.jsonl import read_text
from supermemory.store import reads, versions, writes
from supermemory.store.context import StoreContext
from supermemory.store.records import format_id
from supermemory.text import summarize

RULE_FILES = ("CLAUDE.md", "AGENTS.md", os.path.join(".claude", "CLAUDE.md"))
# The file each platform loads by itself: the briefing leaves its rules out (they are in context already).
OWN_FILE = {"claude-code": "CLAUDE.md", "codex": "AGENTS.md"}
MAX_RULE_CHARS = 1200      # a longer paragraph is prose, not a rule
TAG = "rule"
KEY_PREFIX = "rules:"

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*\S)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_WS = re.compile(r"\s+")


def file_tag(label: str) -> str:
    """The tag naming the file a rule came from (`rules:CLAUDE.md`)."""
    return KEY_PREFIX + label


@dataclass(frozen=True)
class Rule:
    """One rule as read: the headings above it, its text, its first line (1-based)."""

    heading: tuple
    text: str
    line: int

    @property
    def identity(self) -> str:
        key = " > ".join(self.heading) + "\n" + _WS.sub(" ", self.text).strip()
        return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def parse_rules(text: str) -> tuple[list[Rule], int]:
    """The rules of a markdown file (bullets, short paragraphs) and how many long paragraphs were
    left out; code blocks, tables, HTML comments, `@file` imports, front matter and the
    supermemory usage block are skipped."""
    rules: list[Rule] = []
    long_ones = 0
    stack: list[tuple[int, str]] = []
    current: dict | None = None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    in_fence = in_ours = in_comment = False
    start = 0
    if lines and lines[0].strip() == "---":   # front matter
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        start = end + 1 if end is not None else 0

    def flush() -> None:
        nonlocal current, long_ones
        if current is not None:
            body = " ".join(current["parts"]).strip()
            if len(body) > MAX_RULE_CHARS:
                long_ones += 1
            elif len(body) >= 3:
                rules.append(Rule(tuple(title for _, title in stack), body, current["line"]))
        current = None

    for index in range(start, len(lines)):
        raw = lines[index]
        line = raw.strip()
        if in_ours:
            in_ours = line != END_MARK
            continue
        if line == BEGIN_MARK:
            flush()
            in_ours = True
            continue
        if in_fence:
            in_fence = not _FENCE.match(raw)
            continue
        if _FENCE.match(raw):
            flush()
            in_fence = True
            continue
        if in_comment:
            in_comment = "-->" not in line
            continue
        if line.startswith("<!--"):
            flush()
            in_comment = "-->" not in line
            continue
        heading = _HEADING.match(raw)
        if heading:
            flush()
            level = len(heading.group(1))
            stack = [(lvl, title) for lvl, title in stack if lvl < level] + [(level, heading.group(2).strip())]
            continue
        if not line or line.startswith("|") or line.startswith("@") or set(line) <= set("-=*_ "):
            flush()
            continue
        bullet = _BULLET.match(raw)
        if bullet:
            flush()
            current = {"line": index + 1, "parts": [bullet.group(2).strip()]}
        elif current is not None:
            current["parts"].append(line)
        else:
            current = {"line": index + 1, "parts": [line]}
    flush()
    unique: dict[str, Rule] = {}
    for rule in rules:
        unique.setdefault(rule.identity, rule)
    return list(unique.values()), long_ones


def user_files(env: dict | None = None) -> list[str]:
    """The user-level rule files both agents read in every project."""
    env = os.environ if env is None else env
    home = os.path.expanduser("~")
    return [os.path.join(env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"), "CLAUDE.md"),
            os.path.join(env.get("CODEX_HOME") or os.path.join(home, ".codex"), "AGENTS.md")]


def _targets(paths: Sequence[str] | None) -> tuple[list[str], list[dict]]:
    """Rule files to read (real paths) and the paths given that hold none."""
    if not paths:
        root = str(project_root(os.getcwd()))
        paths = [p for p in user_files() if os.path.isfile(p)] + [root]
    found, missing = [], []
    for given in paths:
        path = os.path.abspath(os.path.expanduser(str(given)))
        if os.path.isdir(path):
            inside = [os.path.join(path, name) for name in RULE_FILES if os.path.isfile(os.path.join(path, name))]
            if not inside:
                missing.append({"path": path, "reason": "no CLAUDE.md or AGENTS.md in this folder"})
            found.extend(inside)
        elif os.path.isfile(path):
            found.append(path)
        else:
            missing.append({"path": path, "reason": "not found"})
    unique = []
    for path in found:
        real = os.path.realpath(path)
        if real not in unique:
            unique.append(real)
    return unique, missing


def _namespace(path: str, *, home, record: bool) -> str:
    """The namespace a rules file's memories go to: the user's own files are global, a project's file names its
    project as a write there would (claimed only when `record`: a dry run looks without claiming), in the store's
    own data dir."""
    users = {os.path.realpath(p) for p in user_files()}
    return GLOBAL_NAMESPACE if path in users else namespace_for_dir(os.path.dirname(path), home=home, record=record)


def _title(label: str, rule: Rule) -> str:
    where = " › ".join(rule.heading[-2:])
    return f"{label}{' › ' + where if where else ''}: {summarize(rule.text, max_chars=80)}"[:300]


def _source(path: str, rule: Rule) -> dict:
    return {"platform": "rules", "file": path, "line": rule.line, "heading": " > ".join(rule.heading),
            "rule": rule.identity}


def _import_file(ctx: StoreContext, path: str, dry_run: bool = False) -> dict:
    label = os.path.basename(path)
    ns = _namespace(path, home=ctx.config.home, record=not dry_run)
    key = KEY_PREFIX + path
    out = {"path": path, "namespace": ns, "file": label, "rules": 0, "created": 0, "changed": 0, "unchanged": 0,
           "removed": 0, "long_paragraphs": 0}
    try:
        text = read_text(path)
    except InvalidInputError as exc:   # unreadable or not UTF-8: reported with the file, the others go on
        out["error"] = str(exc)
        return out
    rules, out["long_paragraphs"] = parse_rules(text)
    out["rules"] = len(rules)
    existing = reads.live_by_key(ctx, ns, key)
    by_identity = {}
    for rec in existing:
        ident = _source_of(rec).get("rule")
        by_identity.setdefault(ident, rec)
    fresh = [r for r in rules if r.identity not in by_identity]
    out["unchanged"] = len(rules) - len(fresh)
    kept = {r.identity for r in rules}
    gone = [rec for rec in existing if _source_of(rec).get("rule") not in kept]
    tags = [TAG, file_tag(label)]
    for rule in fresh:
        match = _closest(rule, gone)
        if match is not None:
            gone.remove(match)
            out["changed"] += 1
            if dry_run:
                continue
            versions.update(ctx, match["id"], content=rule.text, title=_title(label, rule), tags=tags,
                            source=_source(path, rule), namespace="*", revise_superseded=True)
            continue
        out["created"] += 1
        if dry_run:
            continue
        writes.remember(ctx, rule.text, title=_title(label, rule), kind="preference", tags=tags, importance=0.6,
                        namespace=ns, source=_source(path, rule), create_namespace=True, external_key=key)
    if gone and not dry_run:
        versions.forget(ctx, [format_id(rec["id"]) for rec in gone], namespace="*", reason="rule removed from its file")
    out["removed"] = len(gone)
    return out


def _source_of(rec: dict) -> dict:
    try:
        value = json.loads(rec["source"] or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _closest(rule: Rule, candidates: list[dict]) -> dict | None:
    """The removed rule under the same heading that this new one most resembles (an edit), if any."""
    heading = " > ".join(rule.heading)
    best, score = None, 0.5
    for rec in candidates:
        if _source_of(rec).get("heading") != heading:
            continue
        ratio = difflib.SequenceMatcher(None, rec["body"], rule.text).ratio()
        if ratio >= score:
            best, score = rec, ratio
    return best


def import_rules(ctx: StoreContext, paths: Sequence[str] | None = None, dry_run: bool = False) -> dict:
    """Import the rules of CLAUDE.md / AGENTS.md files as `preference` memories (tagged `rule` and
    `rules:<file name>`, file and line in `source`); re-running keeps them in step with the files.

    :param paths: files or folders (a folder means its CLAUDE.md, AGENTS.md, .claude/CLAUDE.md);
        default: the user-level files and the current project's.
    :param dry_run: write nothing; the counts say what a real run would do (`--dry-run`: the installer asks it
        whether a file holds a rule not stored yet before offering to import it).
    :returns: {"files": [{path, namespace, file, rules, created, changed, unchanged, removed, ...}],
        "missing": [{path, reason}], the totals, and "dry_run"}.
    Raises:
        InvalidInputError: no rule file among the paths given.
    """
    files, missing = _targets(paths)
    if not files and paths:
        raise InvalidInputError("no rule file found: " + "; ".join(f"{m['path']} ({m['reason']})" for m in missing))
    results = [_import_file(ctx, path, dry_run) for path in files]
    totals = {k: sum(r[k] for r in results) for k in ("rules", "created", "changed", "unchanged", "removed")}
    return {"files": results, "missing": missing, **totals, "dry_run": dry_run}
