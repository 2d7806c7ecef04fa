"""One exception hierarchy: every shell (CLI, MCP, hooks) maps SupermemoryError in one place."""


class SupermemoryError(Exception):
    """Base class of every error supermemory raises on purpose."""


class InvalidInputError(SupermemoryError, ValueError):
    """An argument was missing, of the wrong type, or out of range."""


class ConfigError(InvalidInputError):
    """A setting in the config file or given to `config --set` is unknown, of the wrong type, or out of range."""


class NotFoundError(SupermemoryError, LookupError):
    """No memory with that id exists in the namespaces searched."""


class MigrationError(SupermemoryError):
    """The database schema cannot be opened or upgraded by this version."""


class ModelMismatchError(SupermemoryError):
    """The database is pinned to another embedding model; run `supermemory reindex`."""


class EmbeddingUnavailableError(SupermemoryError):
    """The configured embedding model cannot be loaded or reached."""


class UnknownProviderError(SupermemoryError):
    """No embedding provider is registered under that name."""


class NamespaceError(SupermemoryError):
    """A write targets a namespace that does not exist yet without explicit consent."""


class StorageError(SupermemoryError):
    """The database file is unreadable, damaged, locked too long, or the disk is full."""


def did_you_mean(word: str, choices, *, cutoff: float = 0.6, prefix: str = "") -> str:
    """'; did you mean 'x' or 'y'?' naming the choices closest to a mistyped word ('' when none is close).

    :param prefix: a prefix every choice shares, left out of the comparison (else it makes them all look alike).
    """
    import difflib

    by_rest = {c.removeprefix(prefix): c for c in choices}
    close = difflib.get_close_matches(word.removeprefix(prefix), list(by_rest), n=3, cutoff=cutoff)
    return "; did you mean " + " or ".join(repr(by_rest[c]) for c in close) + "?" if close else ""
