"""Word lists and tables from `lexicons/*.txt`, each read on first use and cached (stdlib only).

A lexicon file is plain UTF-8: `#` lines are comments (the first says where the words come from,
`# provenance: …`), blank lines are skipped, every other line is one entry; a table's columns are
separated by tabs. Loaders return immutable values, so callers can share them freely.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from types import MappingProxyType

FOLDER = Path(__file__).with_name("lexicons")   # package data next to this module (wheel and checkout alike)


def _read(name: str) -> str:
    return (FOLDER / f"{name}.txt").read_text(encoding="utf-8")


def names() -> tuple[str, ...]:
    """Every lexicon shipped with the package, by name (file name without `.txt`)."""
    return tuple(sorted(path.stem for path in FOLDER.glob("*.txt")))


def provenance(name: str) -> str:
    """The file's `# provenance:` line without its prefix ("" when it has none)."""
    for line in _read(name).splitlines():
        if line.startswith("# provenance:"):
            return line[len("# provenance:"):].strip()
    return ""


@functools.cache
def entries(name: str) -> tuple[str, ...]:
    """The lexicon's entries in file order (comments and blank lines left out).

    Raises:
        FileNotFoundError: no lexicon of that name.
    """
    out = []
    for line in _read(name).splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return tuple(out)


@functools.cache
def word_set(name: str) -> frozenset:
    """The lexicon's entries as a set."""
    return frozenset(entries(name))


@functools.cache
def table(name: str) -> tuple[tuple[str, ...], ...]:
    """The lexicon's rows, each split into its tab-separated columns."""
    return tuple(tuple(column.strip() for column in row.split("\t")) for row in entries(name))


@functools.cache
def irregular_forms() -> MappingProxyType:
    """Irregular English form → its base ("went" → "go", "children" → "child"), from `irregular_forms`."""
    return MappingProxyType({form: row[0] for row in table("irregular_forms") for form in row[1:]})


@functools.cache
def marker_pattern(name: str) -> re.Pattern:
    """One case-insensitive regular expression from a lexicon of alternatives.

    Alternatives that start with an ASCII character must match as whole words; the others (CJK
    wording, which has no word boundaries) match anywhere. The whole-word ones come first, each kind
    in file order: at a given position the first alternative that matches wins.
    """
    words = [e for e in entries(name) if e[0].isascii()]
    anywhere = [e for e in entries(name) if not e[0].isascii()]
    pattern = r"\b(?:" + "|".join(words) + r")\b" if words else ""
    return re.compile("|".join(([pattern] if pattern else []) + anywhere), re.IGNORECASE)


def lazy_constants(module: str, loaders: dict):
    """A module `__getattr__` that reads word-list constants on first access (PEP 562)."""
    def __getattr__(name: str):
        try:
            loader = loaders[name]
        except KeyError:
            raise AttributeError(f"module {module!r} has no attribute {name!r}") from None
        return loader()
    return __getattr__
