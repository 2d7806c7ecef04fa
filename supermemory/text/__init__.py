"""Text handling: the one tokenizer, chunking, summaries, query traits and the Chinese–English glossary.

Modules: `tokenizer` (index and query tokens, FTS5 MATCH, TOKENIZER_VERSION), `chunking` (chunks, sentence windows), `summary`
(summarize, estimate_tokens), `traits` (names, change markers, code share), `glossary`, and
`lexicons` (the word lists in `lexicons/*.txt`, read on first use). Word-list constants such as
`STOPWORDS` are loaded when first accessed, so importing this package reads no file.
"""
from __future__ import annotations

from supermemory.text import lexicons
from supermemory.text.chunking import chunk, sentence_windows
from supermemory.text.glossary import cross_terms, english_gloss
from supermemory.text.summary import estimate_tokens, excerpt, summarize
from supermemory.text.tokenizer import (FTS_TOKENIZE, TOKENIZER_VERSION, cjk_share, fts_match, index_text, is_cjk,
                                        normalize, query_terms, stopwords, tokenize)
from supermemory.text.names import asked_name, leading_word, name_forms, named_terms
from supermemory.text.traits import asks, code_share, date_words, has_revision_marker, revision_marker

# Word-list constants, each read from its lexicon on first access: name → the module that defines it.
_LAZY = {
    "STOPWORDS": "tokenizer", "CJK_FUNCTION_CHARS": "tokenizer", "CJK_STOP_BIGRAMS": "tokenizer",
    "CJK_STOP_UNIGRAMS": "tokenizer", "DATE_WORDS": "traits",
}

__all__ = [
    "FTS_TOKENIZE", "TOKENIZER_VERSION", "asked_name", "asks", "chunk", "cjk_share", "code_share", "cross_terms", "date_words",
    "english_gloss", "estimate_tokens", "excerpt", "fts_match", "has_revision_marker",
    "index_text", "is_cjk", "leading_word", "lexicons", "name_forms", "named_terms", "normalize",
    "query_terms", "revision_marker", "sentence_windows",
    "stopwords", "summarize", "tokenize", *_LAZY,
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(globals()[module], name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
