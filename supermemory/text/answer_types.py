"""What kind of answer a question asks for (a number, a time, a person) and which of them a text could hold.

A question asking "how many", "when" or "who" is answered only by a memory holding a quantity, a time or a person;
a memory on the same subject without one is about the question, not its answer. The relevance model reads the
mismatch as one input (`retrieval/relevance.py`, `lacks_answer_type`), weighed by the fit on every dev set. The
words are data (`lexicons/answer_types.txt`); digits, month and weekday names (`date_words`) and a capitalised word
inside a sentence are read here.
"""
from __future__ import annotations

import functools
import re

from supermemory.text import lexicons

TYPES = ("number", "time", "person")
_WORD = re.compile(r"[a-z]+")
# A capitalised word that does not open a sentence, or an @handle: a name (or a product: a text naming things may
# name a person too).
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+\b|@\w")
_DIGIT = re.compile(r"\d")


@functools.cache
def _asks() -> dict:
    rows: dict[str, list[str]] = {}
    for kind, side, pattern in lexicons.table("answer_types"):
        if side == "asks":
            rows.setdefault(kind, []).append(pattern)
    return {kind: re.compile("|".join(patterns), re.I) for kind, patterns in rows.items()}


@functools.cache
def _holds() -> dict:
    """Per type: (English words, Chinese strings, a pattern or None): a set look-up and a few substring tests,
    one pass of a lower-cased word scan for all of them (a regex alternation of every word was ten times slower)."""
    words: dict[str, set] = {kind: set() for kind in TYPES}
    strings: dict[str, list] = {kind: [] for kind in TYPES}
    patterns: dict[str, list] = {"number": [_DIGIT], "time": [_DIGIT], "person": [_NAME]}
    for kind, side, entry in lexicons.table("answer_types"):
        if side == "holds":
            for item in entry.split():
                (words[kind].add(item) if item.isascii() else strings[kind].append(item))
        elif side == "surnames":
            patterns[kind].append(re.compile(f"[{re.escape(entry)}][\u4e00-\u9fff]"))
    words["time"] |= lexicons.word_set("date_words")
    return {kind: (frozenset(words[kind]), tuple(strings[kind]), tuple(patterns[kind])) for kind in TYPES}


def asked(question: str) -> frozenset:
    """The answer types a question asks for (none for most questions)."""
    return frozenset(kind for kind, pattern in _asks().items() if pattern.search(question))


def held(text: str, wanted: frozenset = frozenset(TYPES)) -> frozenset:
    """Which of the `wanted` answer types the text could hold."""
    found, words = set(), None
    for kind, (kind_words, kind_strings, kind_patterns) in _holds().items():
        if kind not in wanted:
            continue
        if any(pattern.search(text) for pattern in kind_patterns) or any(s in text for s in kind_strings):
            found.add(kind)
            continue
        if words is None:
            words = set(_WORD.findall(text.lower()))
        if words & kind_words:
            found.add(kind)
    return frozenset(found)
