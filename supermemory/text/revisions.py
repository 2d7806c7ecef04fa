"""Where a change applies: the area a retirement is limited to, which only the memories of that area share.

A retirement said of one area ("jQuery is no longer used in the admin pages", "we no longer use Docker Compose in
CI", Redis 不再用于任务队列) retires the value there only, so it is about the older memories that state that area,
not those of another one ("The marketing site still uses jQuery") nor those that state the value with no area (still
true of the others: "We use jQuery" stands beside a retirement from the admin pages). Read by `store.supersession`.
"""
from __future__ import annotations

import functools
import re

from supermemory.text import lexicons
from supermemory.text.tokenizer import tokenize
from supermemory.text.traits import _SIDE, _SIDE_CJK, _in_code, _side, content_terms

_WHERE = r"(?:in|for|on|at|inside|within|from)"
_SCOPED = tuple(re.compile(p, re.IGNORECASE) for p in (
    rf"(?<!\S){_SIDE} (?:is|are|was|were|has been|have been) no longer (?:used|needed|in use|installed|run|called) "
    rf"{_WHERE} (?P<scope>{_SIDE})",
    rf"\bno longer (?:use|uses|using|run|runs|need|needs|install|installs) {_SIDE}? {_WHERE} (?P<scope>{_SIDE})",
    rf"不再(?:使用|用)?于(?P<scope>{_SIDE_CJK})", rf"在(?P<scope>[^，。；、,;.在]{{1,12}}?)[中里上]?不再(?:使用|用|需要)",
))


@functools.cache
def _everywhere() -> frozenset:
    """Areas that are the whole project ("no longer used in the codebase" retires the value everywhere), as index
    tokens (stemmed): what a scope's words are compared as (`lexicons/whole_project_words.txt`)."""
    return frozenset(t for word in lexicons.entries("whole_project_words") for t in tokenize(word))


def retirement_scopes(text: str) -> list[frozenset]:
    """The areas the text's retirements are limited to, each as its content words ("jQuery is no longer used in the
    admin pages" → [{admin, pages}]); [] for a retirement of the value itself ("logrus is no longer used", "… in the
    codebase") or no retirement at all."""
    scopes = []
    for pattern in _SCOPED:
        for m in pattern.finditer(text or ""):
            if _in_code(text, m.start(), m.end()):
                continue
            words = content_terms(tokenize(_side(m.group("scope"), leading=False))) - _everywhere()
            if words:
                scopes.append(words)
    return scopes


def in_scope(scopes: list[frozenset], words: frozenset) -> bool:
    """Does a memory with these content words state one of these areas (all of its words)? True without areas."""
    return not scopes or any(scope <= words for scope in scopes)
