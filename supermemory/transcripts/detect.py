"""Which agent wrote a log (`detect_platform`), and `parse`, which folds lines with that platform's parser."""

from __future__ import annotations

from typing import Iterable

from supermemory.transcripts.claude_code import _CLAUDE_TYPES, parse_claude
from supermemory.transcripts.codex import _CODEX_ITEM_TYPES, _CODEX_TYPES, parse_codex
from supermemory.transcripts.digest import SessionDigest


def detect_platform(lines: list[dict]) -> str:
    """Return "codex", "claude-code", or "unknown" when the lines give no hint."""
    for obj in lines:
        if not isinstance(obj, dict):
            continue
        typ = obj.get("type")
        if typ in _CODEX_TYPES and isinstance(obj.get("payload"), dict):
            return "codex"
        if "sessionId" in obj or "parentUuid" in obj:
            return "claude-code"
        if typ in _CLAUDE_TYPES and ("uuid" in obj or "message" in obj or typ in ("summary", "file-history-snapshot")):
            return "claude-code"
        if typ in _CODEX_ITEM_TYPES or obj.get("record_type") == "state":
            return "codex"  # pre-envelope rollout format
        if typ is None and "instructions" in obj and "id" in obj:
            return "codex"
    return "unknown"


def unknown_lines(lines: list[dict], platform: str | None) -> int:
    """How many lines carry a record type the platform's parser does not read (they are skipped)."""
    if platform == "codex":
        known = _CODEX_TYPES | _CODEX_ITEM_TYPES
        return sum(1 for obj in lines if obj.get("type") not in known and "instructions" not in obj
                   and obj.get("record_type") != "state")
    if platform == "claude-code":
        return sum(1 for obj in lines if obj.get("type") not in _CLAUDE_TYPES)
    return 0


def parse(
    lines: Iterable[dict], digest: SessionDigest | None = None, platform: str | None = None
) -> SessionDigest:
    """Fold `lines` into `digest`, choosing the parser by `platform`, the digest's
    platform, or :func:`detect_platform` — in that order.  Lines that give no
    hint of their format leave a fresh digest with platform "unknown"."""
    lines = list(lines)
    plat = platform
    if plat not in ("claude-code", "codex"):
        plat = digest.platform if digest is not None else None
    if plat not in ("claude-code", "codex"):
        plat = detect_platform(lines)
    if plat == "codex":
        return parse_codex(lines, digest)
    if plat == "claude-code":
        return parse_claude(lines, digest)
    return digest if digest is not None else SessionDigest(platform="unknown")
