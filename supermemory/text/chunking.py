"""Splitting long text into overlapping chunks that each fit a token budget, and into two-sentence windows."""
from __future__ import annotations

import re

from supermemory.text.sentences import SENTENCE_END
from supermemory.text.summary import estimate_tokens


def _split_to_fit(piece: str, max_tokens: int, level: int = 0) -> list[str]:
    """Split a piece by blank line → line → sentence → hard cut until each part fits."""
    if estimate_tokens(piece) <= max_tokens:
        return [piece]
    splitters = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?。！？])\s*"))
    for index in range(level, len(splitters)):
        parts = [p for p in splitters[index].split(piece) if p.strip()]
        if len(parts) > 1:
            out: list[str] = []
            for part in parts:
                out.extend(_split_to_fit(part, max_tokens, index + 1))
            return out
    # Hard split: by characters, sized so each slice fits the token budget.
    ratio = max(1, len(piece) // max(1, estimate_tokens(piece)))
    step = max(1, max_tokens * ratio)
    return [piece[i:i + step] for i in range(0, len(piece), step)]


def chunk(text: str, *, max_tokens: int = 260, overlap_tokens: int = 48) -> list[str]:
    """Split long text into retrievable chunks of at most ~`max_tokens`, overlapping a little.

    Short text comes back as one chunk, unchanged.
    """
    text = text or ""
    if estimate_tokens(text) <= max_tokens:
        return [text]
    atoms = [a.strip() for a in _split_to_fit(text, max_tokens) if a.strip()]
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for atom in atoms:
        cost = estimate_tokens(atom)
        if current and size + cost > max_tokens:
            chunks.append("\n".join(current))
            tail: list[str] = []
            tail_size = 0
            for prev in reversed(current):
                prev_cost = estimate_tokens(prev)
                if tail_size + prev_cost > overlap_tokens or tail_size + prev_cost + cost > max_tokens:
                    break
                tail.insert(0, prev)
                tail_size += prev_cost
            current, size = tail, tail_size
        current.append(atom)
        size += cost
    if current:
        chunks.append("\n".join(current))
    return chunks


def sentence_windows(text: str, *, max_windows: int = 32) -> list[str]:
    """Passages of two adjacent sentences (each sentence alone when there are two; none for one), at most
    `max_windows`: a fact said in passing inside a long text is matched by meaning on its own, where the
    whole text's vector averages it away (bench/RESULTS.md, "Two-sentence windows")."""
    sentences = [s.strip() for s in SENTENCE_END.split(text or "") if s and s.strip()]
    if len(sentences) <= 1:
        return []
    if len(sentences) == 2:
        return sentences
    return [" ".join(sentences[i:i + 2]) for i in range(min(len(sentences) - 1, max_windows))]
