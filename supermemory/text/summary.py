"""Token estimates and the one-sentence summary (no model involved)."""
from __future__ import annotations

import math
import re

from supermemory.text.tokenizer import _CJK_CHAR


def estimate_tokens(text: str) -> int:
    """Rough LLM token count: one per CJK character, one per ~4 other characters."""
    if not text:
        return 0
    cjk = len(_CJK_CHAR.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")


def summarize(text: str, *, max_chars: int = 200) -> str:
    """The first sentence (no model involved), capped at `max_chars`."""
    text = (text or "").strip()
    if not text:
        return ""
    first = _SENTENCE_END.split(text, maxsplit=1)[0].strip() or text
    if len(first) > max_chars:
        first = first[: max_chars - 1].rstrip() + "…"
    return first
