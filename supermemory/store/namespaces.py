"""Which namespaces a read covers and a write may target (project + global; '*' = all)."""
from __future__ import annotations

from supermemory.config import ALL_NAMESPACES, GLOBAL_NAMESPACE, normalize_namespace
from supermemory.errors import InvalidInputError, NamespaceError, did_you_mean
from supermemory.store.context import StoreContext


def existing(ctx: StoreContext) -> list[str]:
    """Namespaces that hold at least one memory (any state)."""
    return [r[0] for r in ctx.q("SELECT DISTINCT namespace FROM memories ORDER BY namespace")]


def _exists(ctx: StoreContext, ns: str) -> bool:
    return bool(ctx.q("SELECT 1 FROM memories WHERE namespace = ? LIMIT 1", (ns,)))


def near(ctx: StoreContext, ns: str) -> str:
    """', did you mean …' with the existing namespaces closest to a mistyped one."""
    names = [n for n in existing(ctx) if n != GLOBAL_NAMESPACE]
    if hint := did_you_mean(ns, names):
        return hint
    return ("; existing namespaces: " + ", ".join(names[:10]) + (" …" if len(names) > 10 else "")) if names else ""


def for_write(ctx: StoreContext, namespace: str | None, create: bool) -> str:
    """The namespace a write goes to; one that does not exist yet needs `create`.

    Raises:
        NamespaceError: unknown namespace without consent. InvalidInputError: default is '*'.
    """
    if namespace is None:
        ns = ctx.namespace
        if ns == ALL_NAMESPACES:
            raise InvalidInputError("the default namespace is '*'; give an explicit namespace to write to")
        return ns
    ns = normalize_namespace(namespace)
    if ns in (ctx.namespace, GLOBAL_NAMESPACE) or create:
        return ns
    if not _exists(ctx, ns):
        raise NamespaceError(
            f"namespace {ns!r} does not exist yet (current project is {ctx.namespace!r}){near(ctx, ns)}; "
            "pass create_namespace=true (CLI: --create-namespace) to start it")
    return ns


def for_read(ctx: StoreContext, namespace: str | None, *, must_exist: bool = False) -> list[str] | None:
    """Namespaces a read covers: project + global, one given namespace (+ global), or all (None).

    `must_exist` (recall, list): an explicitly named namespace that holds no memory is a typo
    more often than an empty project, so it is refused with the near names instead of
    answering "nothing found".
    """
    ns = ctx.namespace if namespace is None else normalize_namespace(namespace, allow_all=True)
    if ns == ALL_NAMESPACES:
        return None
    if (must_exist and namespace is not None and ns not in (ctx.namespace, GLOBAL_NAMESPACE)
            and not _exists(ctx, ns)):
        raise NamespaceError(f"namespace {ns!r} does not exist (no memory was ever stored in it){near(ctx, ns)}")
    return [ns] if ns == GLOBAL_NAMESPACE else [ns, GLOBAL_NAMESPACE]


def clause(namespaces: list[str] | None, column: str = "m.namespace") -> tuple[str, list]:
    """SQL condition and parameters restricting `column` to `namespaces` (None: no restriction)."""
    if namespaces is None:
        return "1", []
    return f"{column} IN ({','.join('?' * len(namespaces))})", list(namespaces)
