"""Extractive session digests from Claude Code transcripts and Codex rollouts (one parser per platform).

Hooks (PreCompact / SessionEnd / Stop) read a session's JSONL log incrementally
with :func:`read_new_lines`, fold the new lines into a :class:`SessionDigest`
with :func:`parse`, persist ``digest_to_dict(d)`` plus the byte offset between
runs, and store ``render_digest(d)`` as the one "session" memory.

No LLM is involved: everything is pulled out of the log as written (user
requests, files edited or read, shell commands, errors, standing instructions, open ends).  The package
is standard library only and imports nothing else from supermemory; redaction
of secrets is the caller's job.

Paths under the session's working directory are stored relative to it, so the
digest reads ``src/app.py`` rather than ``/home/me/project/src/app.py``.

Modules: ``reader`` (incremental reading), ``digest`` (model, caps, snapshot,
rendering), ``fold`` and ``commands`` (what both parsers share), ``claude_code``
and ``codex`` (one parser each), ``detect`` (which parser a log needs).
"""

from __future__ import annotations

from supermemory.transcripts.claude_code import parse_claude
from supermemory.transcripts.codex import find_codex_rollout, parse_codex
from supermemory.transcripts.detect import detect_platform, parse, unknown_lines
from supermemory.transcripts.digest import (
    COMMAND_CHARS,
    ERROR_CHARS,
    MAX_COMMANDS,
    MAX_ERRORS,
    MAX_FILES,
    MAX_FILES_READ,
    MAX_INSTRUCTIONS,
    MAX_OPEN_ENDS,
    MAX_REQUESTS,
    NOTE_CHARS,
    PATH_CHARS,
    REQUEST_CHARS,
    SessionDigest,
    digest_from_dict,
    digest_to_dict,
    render_digest,
)
from supermemory.transcripts.reader import read_new_lines

__all__ = [
    "SessionDigest",
    "read_new_lines",
    "detect_platform",
    "parse_claude",
    "parse_codex",
    "parse",
    "unknown_lines",
    "digest_to_dict",
    "digest_from_dict",
    "render_digest",
    "find_codex_rollout",
    "MAX_REQUESTS",
    "MAX_FILES",
    "MAX_FILES_READ",
    "MAX_INSTRUCTIONS",
    "MAX_COMMANDS",
    "MAX_ERRORS",
    "MAX_OPEN_ENDS",
    "REQUEST_CHARS",
    "COMMAND_CHARS",
    "ERROR_CHARS",
    "NOTE_CHARS",
    "PATH_CHARS",
]
