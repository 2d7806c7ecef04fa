"""Deprecated location: re-exports supermemory.text.glossary until core.py's split lands."""
from supermemory.text.glossary import cross_terms, english_gloss  # noqa: F401
