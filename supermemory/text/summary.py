"""Token estimates, a memory's summary (its lead, more when that is only a label) and a passage's excerpt."""
from __future__ import annotations

import itertools
import math
import re

from supermemory.text.sentences import SENTENCE_END
from supermemory.text.tokenizer import _CJK_CHAR


def estimate_tokens(text: str) -> int:
    """Rough LLM token count: one per CJK character, one per ~4 other characters."""
    if not text:
        return 0
    if text.isascii():   # most memories: no CJK character to count (recall sizes a hundred candidates)
        return math.ceil(len(text) / 4)
    cjk = len(_CJK_CHAR.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


_ASKS = ("?", ":", "？", "：")   # a sentence ending so asks a question or leads into what follows
_LABEL_WORDS = 4   # a sentence of this many words or fewer is a label ("Celery gotcha."), not a statement
SUMMARY_CHARS = 200   # a summary's length at most
SUMMARY_TOKENS = 100   # and its token estimate when extended (200 characters of English are ~50, of Chinese 200)
_CODE_SHARE = 0.25   # a text reading as code this much keeps its first line: its lines are not sentences
_MIN_ROOM = 24   # characters of the next sentence worth showing cut; less room ends the summary before it
SUMMARY_VERSION = "4"   # bump when `summarize` makes other summaries: maintenance recomputes the stored ones


def _words(text: str) -> float:
    """Words for telling a label from a statement: a Latin word counts one, a CJK character half."""
    cjk = len(_CJK_CHAR.findall(text))
    return len(re.findall(r"\w+", _CJK_CHAR.sub(" ", text))) + cjk / 2


def _says_little(sentence: str) -> bool:
    """Whether a sentence alone tells nothing: a question, a lead-in ending in ':' or a label of a few words."""
    sentence = sentence.strip()
    return sentence.endswith(_ASKS) or _words(sentence) <= _LABEL_WORDS


def _reads_as_code(text: str) -> bool:
    """Whether the text is source code (`text.traits.code_share`), whose first line names it ("def f(x):")."""
    from supermemory.text.traits import code_share   # traits reads its word lists: not at import time

    return code_share(text) >= _CODE_SHARE


def _fit(text: str) -> int:
    """How many characters of `text` fit `SUMMARY_CHARS` and `SUMMARY_TOKENS` with a closing '…'."""
    cost = 1.0   # the '…'
    for end, char in enumerate(text[:SUMMARY_CHARS - 1]):
        cost += 1 if _CJK_CHAR.match(char) else 0.25
        if math.ceil(cost) > SUMMARY_TOKENS:
            return end
    return min(len(text), SUMMARY_CHARS - 1)


def summarize(text: str, *, max_chars: int | None = None) -> str:
    """A memory's summary (no model involved): its first sentence and, when that says little by itself (a
    label such as "Celery gotcha.", a question, a lead-in ending in ':') and the text is not code, the
    sentences after it up to the first that says something, within `SUMMARY_CHARS` characters and
    `SUMMARY_TOKENS` tokens (the last one cut with '…' when it does not fit whole); an extended summary's
    whitespace runs become one space.

    :param text: the memory's text; only its start is read (a long text is summarised, never shown whole).
    :param max_chars: a title's length: the first sentence alone, cut to that, never extended.
    """
    text = (text or "").lstrip()[:4 * SUMMARY_CHARS + (max_chars or 0)].rstrip()
    if not text:
        return ""
    ends = itertools.chain((m.start() for m in SENTENCE_END.finditer(text)), [len(text)])
    start = next(ends)
    first = text[:start].strip() or text
    limit = max_chars or SUMMARY_CHARS
    if len(first) > limit:
        return first[: limit - 1].rstrip() + "…"
    if max_chars is not None or not _says_little(first) or _reads_as_code(text):
        return first
    summary = first
    for end in ends:
        longer = " ".join(text[:end].split())
        if len(longer) > SUMMARY_CHARS or estimate_tokens(longer) > SUMMARY_TOKENS:
            keep = _fit(longer)
            return longer[:keep].rstrip() + "…" if keep - len(summary) >= _MIN_ROOM else summary
        summary, added, start = longer, text[start:end], end
        if not _says_little(added):
            break
    return summary


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
