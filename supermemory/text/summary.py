"""Token estimates, the one-sentence summary and a passage's excerpt (no model involved)."""
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


def excerpt(text: str, query: str, tokens: int = 100) -> str:
    """About `tokens` tokens of `text` on one line (~400 characters of English, ~100 of Chinese), from a
    little before where it first holds the query word it holds least often (a chunk is ~1,000 characters;
    the answer is often past the first few hundred). A Chinese query's words are its character pairs."""
    flat = " ".join(text.split())
    width = max(40, round(tokens * len(flat) / max(1, estimate_tokens(flat))))
    if len(flat) <= width:
        return flat
    lowered, asked = flat.lower(), query.lower()
    words = re.findall(r"\w{3,}", _CJK_CHAR.sub(" ", asked))
    words += [run[i:i + 2] for run in re.findall(_CJK_CHAR.pattern + "+", asked) for i in range(len(run) - 1)]
    held = [(lowered.count(w), -len(w), lowered.find(w)) for w in words if w in lowered]
    start = max(0, min(held)[2] - width // 4) if held else 0
    start = min(start, len(flat) - width)
    return ("…" if start else "") + flat[start:start + width] + ("…" if start + width < len(flat) else "")
