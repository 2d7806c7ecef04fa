"""Builders of Claude Code transcripts and Codex rollouts on disk, for the backfill tests and bench."""
from __future__ import annotations

import itertools
import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

_COUNTER = itertools.count(1)


def stamp(day: str, minutes: float = 0) -> str:
    """`2026-10-01` plus minutes as the ISO time both agents write (`...Z`, milliseconds)."""
    t = datetime.fromisoformat(day).replace(tzinfo=timezone.utc) + timedelta(minutes=minutes)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _uuid() -> str:
    n = next(_COUNTER)
    return f"00000000-0000-4000-8000-{n:012d}"


class ClaudeSession:
    """Lines of one Claude Code transcript (same shape as ~/.claude/projects/<slug>/<id>.jsonl)."""

    def __init__(self, session_id: str, cwd: str, day: str, *, sidechain: bool = False, agent_id: str | None = None):
        self.session_id, self.cwd, self.day = session_id, cwd, day
        self.sidechain, self.agent_id = sidechain, agent_id
        self.lines: list[dict] = []
        self.minute = 0.0
        self.parent = None

    def _base(self, kind: str, **extra) -> dict:
        self.minute += 1
        uid = _uuid()
        line = {"parentUuid": self.parent, "isSidechain": self.sidechain, "userType": "external", "cwd": self.cwd,
                "sessionId": self.session_id, "version": "2.0.50", "gitBranch": "main", "type": kind,
                "uuid": uid, "timestamp": stamp(self.day, self.minute)}
        if self.agent_id:
            line["agentId"] = self.agent_id
        line.update(extra)
        self.parent = uid
        self.lines.append(line)
        return line

    def user(self, text: str, **extra) -> "ClaudeSession":
        self._base("user", message={"role": "user", "content": text}, **extra)
        return self

    def bash(self, command: str, output: str, *, error: bool = False) -> "ClaudeSession":
        tool_id = "toolu_" + _uuid()[-8:]
        self._base("assistant", message={"role": "assistant", "model": "claude-sonnet-4-5", "type": "message",
                                         "content": [{"type": "text", "text": "Running it."},
                                                     {"type": "tool_use", "id": tool_id, "name": "Bash",
                                                      "input": {"command": command}}]})
        self._base("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": output, "is_error": error}]})
        return self

    def edit(self, path: str) -> "ClaudeSession":
        tool_id = "toolu_" + _uuid()[-8:]
        self._base("assistant", message={"role": "assistant", "model": "claude-sonnet-4-5", "type": "message",
                                         "content": [{"type": "tool_use", "id": tool_id, "name": "Edit",
                                                      "input": {"file_path": os.path.join(self.cwd, path),
                                                                "old_string": "a", "new_string": "b"}}]})
        self._base("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": "The file has been updated."}]})
        return self

    def say(self, text: str) -> "ClaudeSession":
        self._base("assistant", message={"role": "assistant", "model": "claude-sonnet-4-5", "type": "message",
                                         "content": [{"type": "text", "text": text}]})
        return self

    def compact(self, summary: str) -> "ClaudeSession":
        """A compaction: the boundary marker, then the summary as a user line flagged isCompactSummary."""
        self._base("system", subtype="compact_boundary", content="Conversation compacted",
                   compactMetadata={"trigger": "auto", "preTokens": 150000})
        self._base("user", isCompactSummary=True, isVisibleInTranscriptOnly=True, message={
            "role": "user", "content": "This session is being continued from a previous conversation that ran out "
                                       "of context. Summary: " + summary})
        return self

    def raw(self, obj: dict) -> "ClaudeSession":
        self.lines.append(obj)
        return self

    def write(self, path: Path, *, tail: str = "") -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            for line in self.lines:
                fh.write(json.dumps(line) + "\n")
            fh.write(tail)
        return path


class CodexRollout:
    """Lines of one Codex rollout (~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl)."""

    def __init__(self, session_id: str, cwd: str, day: str, *, source=None):
        self.session_id, self.cwd, self.day = session_id, cwd, day
        self.minute = 0.0
        self.calls = 0
        meta = {"id": session_id, "timestamp": stamp(day), "cwd": cwd, "originator": "codex_cli_rs",
                "cli_version": "0.171.0", "model_provider": "openai", "git": {"branch": "main"}}
        if source is not None:
            meta["source"] = source
        self.lines = [{"timestamp": stamp(day), "type": "session_meta", "payload": meta},
                      {"timestamp": stamp(day), "type": "turn_context",
                       "payload": {"cwd": cwd, "model": "gpt-5-codex", "approval_policy": "on-request"}}]

    def _add(self, kind: str, payload: dict) -> None:
        self.minute += 1
        self.lines.append({"timestamp": stamp(self.day, self.minute), "type": kind, "payload": payload})

    def user(self, text: str) -> "CodexRollout":
        self._add("response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": text}]})
        self._add("event_msg", {"type": "user_message", "message": text, "kind": "plain"})
        return self

    def shell(self, command: list[str], output: str, code: int = 0) -> "CodexRollout":
        self.calls += 1
        call = f"call_{self.session_id[:6]}_{self.calls}"
        self._add("response_item", {"type": "function_call", "name": "shell", "call_id": call,
                                    "arguments": json.dumps({"command": command, "workdir": self.cwd})})
        self._add("response_item", {"type": "function_call_output", "call_id": call,
                                    "output": json.dumps({"output": output, "metadata": {"exit_code": code}})})
        return self

    def say(self, text: str) -> "CodexRollout":
        self._add("response_item", {"type": "message", "role": "assistant",
                                    "content": [{"type": "output_text", "text": text}]})
        return self

    def compacted(self, summary: str) -> "CodexRollout":
        self._add("compacted", {"message": summary})
        return self

    def raw(self, obj: dict) -> "CodexRollout":
        self.lines.append(obj)
        return self

    def write(self, root: Path, *, name: str | None = None, tail: str = "") -> Path:
        y, m, d = self.day.split("-")
        path = root / y / m / d / (name or f"rollout-{self.day}T10-00-00-{self.session_id}.jsonl")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            for line in self.lines:
                fh.write(json.dumps(line) + "\n")
            fh.write(tail)
        return path


def claude_path(root: Path, cwd: str, session_id: str) -> Path:
    """Where Claude Code keeps a session: projects/<cwd with / and . as ->/<id>.jsonl."""
    slug = cwd.replace("/", "-").replace(".", "-")
    return root / slug / f"{session_id}.jsonl"
