"""Claude Code transcript lines for capture tests: a user turn and an assistant's text turn."""
from __future__ import annotations


def user_line(uuid: str, text: str, *, cwd: str, session: str) -> dict:
    return {"type": "user", "uuid": uuid, "cwd": cwd, "sessionId": session,
            "message": {"role": "user", "content": text}}


def said_line(uuid: str, text: str, *, cwd: str, session: str) -> dict:
    return {"type": "assistant", "uuid": uuid, "cwd": cwd, "sessionId": session,
            "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}]}}
