"""Which namespaces a read covers and a write may target, and the project's name claimed at its first write.

A read covers the project plus global ('*' = all)."""
from __future__ import annotations

import os

from pathlib import PurePath

from supermemory.config import (ALL_NAMESPACES, GLOBAL_NAMESPACE, looks_like_path, normalize_namespace,
                                project_namespace)
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


def named(ctx: StoreContext, namespace: str, *, allow_all: bool = False) -> str:
    """A namespace argument as stored. A name is normalised (`config.normalize_namespace`); one written as a path
    (`config.looks_like_path`: `/`, `\\`, a leading `~` or `.`) is the namespace of the project whose root it
    names (the current project's, or one this data dir records), and any other path is refused: a namespace is
    never made from a path, nor a path's last part silently taken as a name.

    Raises:
        NamespaceError: a path that is not a known project's root (with the name it may have meant).
        InvalidInputError: see `normalize_namespace`.
    """
    if not looks_like_path(namespace):
        return normalize_namespace(namespace, allow_all=allow_all)
    found, exact = project_namespace(namespace, home=ctx.config.home, project_dir=ctx.config.project_dir,
                                     current=ctx.namespace)
    if found is not None and exact:
        return found
    if found is not None:
        hint = f"; did you mean {found!r} (the project that folder is in)?"
    else:
        try:
            last = normalize_namespace(PurePath(namespace.strip().replace("\\", "/")).name)
        except InvalidInputError:
            last = ""
        hint = f"; did you mean {last!r}?" if last and _exists(ctx, last) else near(ctx, last) if last else ""
        hint = hint or near(ctx, "")
    raise NamespaceError(f"namespaces are names, not paths: {namespace.strip()!r} is not the root folder of a project "
                         f"this store knows{hint}")


def for_write(ctx: StoreContext, namespace: str | None, create: bool) -> str:
    """The namespace a write goes to; one that does not exist yet needs `create`.

    Raises:
        NamespaceError: unknown namespace without consent. InvalidInputError: default is '*'.
    """
    if namespace is None:
        if ctx.namespace == ALL_NAMESPACES:
            raise InvalidInputError("the default namespace is '*'; give an explicit namespace to write to")
        return claim_default(ctx)
    ns = named(ctx, namespace)
    if ns in (ctx.namespace, GLOBAL_NAMESPACE) or create:
        return ns
    if not _exists(ctx, ns):
        hint, flag = near(ctx, ns), "pass create_namespace=true (CLI: --create-namespace)"
        raise NamespaceError(
            f"namespace {ns!r} does not exist yet (current project is {ctx.namespace!r})"
            + (f"{hint} To start it anyway, {flag}" if hint.endswith("?") else f"{hint}; {flag} to start it"))
    return ns


def claim_default(ctx: StoreContext) -> str:
    """The store's default namespace, claimed for its project before a write: opening a store only looks the
    name up (a read never claims), so without this the first project to write under a folder name would not
    hold it, and the next one with that folder name would take the name and the memories with it.

    Only the store the data dir's records describe (`config.db_path`) claims; a read-only one writes nothing.
    When another root claimed the name since the store opened, the default becomes this project's own name.
    """
    if ctx.readonly or os.path.abspath(ctx.path) != os.path.abspath(ctx.config.db_path):
        return ctx.namespace
    ctx.namespace = ctx.config.claim_namespace(ctx.namespace)
    return ctx.namespace


def for_read(ctx: StoreContext, namespace: str | None, *, must_exist: bool = False) -> list[str] | None:
    """Namespaces a read covers: project + global, one given namespace (+ global), or all (None).

    `must_exist` (recall, list): an explicitly named namespace that holds no memory is a typo
    more often than an empty project, so it is refused with the near names instead of
    answering "nothing found".
    """
    ns = ctx.namespace if namespace is None else named(ctx, namespace, allow_all=True)
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
