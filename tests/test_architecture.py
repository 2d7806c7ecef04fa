"""The package's shape: no import cycles, one-sentence module docstrings, short files, private names kept inside.

Read from the source with `ast` (nothing is imported), so a test fails on the layout alone. The
allow-lists below name what the restructure (issue 15) still has to remove; they only ever shrink.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "supermemory"
MAX_LINES = 600

# Import cycles still being taken apart in other modules' restructures. Each entry is the set of
# modules of one known cycle; a cycle found among (a subset of) them passes, any other fails. Empty
# an entry when the cycle is gone (test_the_allow_lists_name_only_what_is_still_true says when); never add one.
KNOWN_CYCLES_TO_REMOVE: list[set[str]] = []

# Files over MAX_LINES lines. Only the redaction rule table is long by design (install.py, the other
# exception, is outside the package).
LONG_BY_DESIGN = {"supermemory/redact.py"}
# Still too long: the restructure splits each of these into a package of short modules; then delete the entry.
STILL_TOO_LONG: set[str] = set()

# Modules whose docstring does not open with one sentence yet; rewritten by their restructure.
DOCSTRINGS_TO_FIX: set[str] = set()


# --- reading the package ------------------------------------------------------------------------

def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package is its `__init__.py`)."""
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


@lru_cache(maxsize=None)
def tree(name: str) -> ast.Module:
    path = modules()[name]
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _base(name: str, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom names (relative levels resolved against `name`)."""
    if not node.level:
        return node.module or ""
    parts = name.split(".")
    if modules()[name].name != "__init__.py":
        parts = parts[:-1]                       # a plain module's level 1 is its package
    parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _known(dotted: str) -> str | None:
    """The longest prefix of `dotted` that is a module of the package."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules():
            return candidate
    return None


def imports(name: str) -> list[tuple[str, int]]:
    """(module of the package, line) for every import in `name`, at any depth: module level, inside
    functions and classes, and `importlib.import_module("...")` / `__import__("...")` with a literal.
    `from X import y` counts as importing the submodule `X.y` when there is one, else `X`."""
    found = []
    for node in ast.walk(tree(name)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base(name, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in modules() else base)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__"):
                targets = [node.args[0].value]
        for target in targets:
            module = _known(target)
            if module is not None and module != name:
                found.append((module, node.lineno))
    return found


def import_graph() -> dict[str, dict[str, int]]:
    """module → {imported module of the package: first line importing it}."""
    graph: dict[str, dict[str, int]] = {}
    for name in modules():
        edges: dict[str, int] = {}
        for target, line in imports(name):
            edges.setdefault(target, line)
        graph[name] = edges
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[set[str]]:
    """Tarjan's strongly connected components with more than one module: each holds a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                out.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def _cycle_path(graph: dict[str, dict[str, int]], component: set[str]) -> str:
    """The shortest cycle through a module of `component` that no known cycle covers, as
    `a (a.py:12) → b (b.py:40) → a`; shown with every module of the component."""
    fresh = sorted(m for m in component if not any(m in known for known in KNOWN_CYCLES_TO_REMOVE))
    options = [_shortest_cycle(graph, component, start) for start in (fresh or sorted(component))]
    best = min(options, key=len)
    steps = [f"{a} ({_rel(modules()[a])}:{graph[a][b]})" for a, b in zip(best, best[1:])]
    return " → ".join(steps + [best[0]]) + f"\n    (all modules on cycles with it: {', '.join(sorted(component))})"


def _shortest_cycle(graph: dict[str, dict[str, int]], component: set[str], start: str) -> list[str]:
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node]):
            if nxt == start:
                return paths[node] + [start]
            if nxt in component and nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    raise AssertionError(f"{start} is on no cycle inside {sorted(component)}")


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _first_line_problem(docstring: str | None) -> str | None:
    if not docstring or not docstring.strip():
        return "has no module docstring"
    lines = docstring.strip().splitlines()
    first = lines[0].strip()
    if not first.endswith("."):
        return f"docstring's first line is not a whole sentence ending in '.': {first!r}"
    if re.search(r"[.!?]\s", first[:-1]):
        return f"docstring's first line holds more than one sentence: {first!r}"
    if len(lines) > 1 and lines[1].strip():
        return f"docstring's first line runs on into the second (leave a blank line after it): {first!r}"
    return None


def subpackages() -> list[str]:
    """Packages inside the package (`supermemory.mcp`, ...), not the top-level package itself."""
    return [name for name, path in modules().items() if path.name == "__init__.py" and "." in name]


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _private(attr: str) -> bool:
    return attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__"))


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def private_uses(name: str) -> list[str]:
    """Underscore names of a subpackage that module `name`, outside that subpackage, imports or reads
    (`from supermemory.mcp.tools import _x`, `tools._x`, `supermemory.mcp.tools._x`)."""
    foreign = [pkg for pkg in subpackages() if not _inside(name, pkg)]

    def is_foreign(module: str | None) -> bool:
        return module is not None and any(_inside(module, pkg) for pkg in foreign)

    path = _rel(modules()[name])
    found = []
    bound: dict[str, str] = {}       # local name → the package module it is bound to
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.ImportFrom):
            base = _base(name, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules():
                    bound[alias.asname or alias.name] = sub
                if _private(alias.name) and is_foreign(_known(sub)):
                    found.append(f"{path}:{node.lineno}: from {base} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules():
                    bound[alias.asname] = alias.name
                elif not alias.asname and _known(alias.name):
                    bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
    for node in ast.walk(tree(name)):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        owner = _dotted(node.value)
        head, _, rest = (owner or "").partition(".")
        if head not in bound:
            continue
        module = bound[head] + (f".{rest}" if rest else "")
        if module in modules() and is_foreign(module):
            found.append(f"{path}:{node.lineno}: {owner}.{node.attr}")
    return found


# --- the rules ---------------------------------------------------------------------------------------

def test_no_module_imports_a_module_that_imports_it_back():
    graph = import_graph()
    unknown = [component for component in strongly_connected(graph)
               if not any(component <= known for known in KNOWN_CYCLES_TO_REMOVE)]
    assert not unknown, "import cycles (imports inside functions count too):\n" + "\n".join(
        "  " + _cycle_path(graph, component) for component in unknown)


def test_every_module_opens_its_docstring_with_one_sentence_saying_its_job():
    problems = []
    for name in modules():
        problem = _first_line_problem(ast.get_docstring(tree(name), clean=True))
        if problem and name not in DOCSTRINGS_TO_FIX:
            problems.append(f"{_rel(modules()[name])} {problem}")
    assert not problems, "\n".join(problems)


def test_no_file_in_the_package_is_longer_than_600_lines():
    allowed = LONG_BY_DESIGN | STILL_TOO_LONG
    long = [f"{_rel(path)}: {_line_count(path)} lines" for path in modules().values()
            if _line_count(path) > MAX_LINES and _rel(path) not in allowed]
    assert not long, f"over {MAX_LINES} lines (split by job):\n" + "\n".join(long)


def test_no_module_outside_a_subpackage_uses_its_underscore_names():
    found = [use for name in modules() for use in private_uses(name)]
    assert not found, "private names used from outside their package (make them public or move the caller):\n" \
        + "\n".join(found)


def test_the_allow_lists_name_only_what_is_still_true():
    graph = import_graph()
    components = strongly_connected(graph)
    stale = [f"KNOWN_CYCLES_TO_REMOVE entry {sorted(known)}: no cycle among these modules any more"
             for known in KNOWN_CYCLES_TO_REMOVE if not any(len(c & known) > 1 for c in components)]
    stale += [f"STILL_TOO_LONG entry {rel}: gone or now {MAX_LINES} lines or fewer" for rel in sorted(STILL_TOO_LONG)
              if not (ROOT / rel).exists() or _line_count(ROOT / rel) <= MAX_LINES]
    stale += [f"DOCSTRINGS_TO_FIX entry {name}: gone or fixed" for name in sorted(DOCSTRINGS_TO_FIX)
              if name not in modules() or _first_line_problem(ast.get_docstring(tree(name), clean=True)) is None]
    assert not stale, "delete these allow-list entries:\n" + "\n".join(stale)


# --- storage behind one seam --------------------------------------------------------------------

SQL_CALL = re.compile(r"\.(execute|executemany|executescript)\s*\(")


def test_no_code_outside_the_store_package_executes_sql():
    """Retrieval, lifecycle, shells: they call the store layer; a second backend means a new store/."""
    offenders = []
    for name, path in modules().items():
        if name == "supermemory.store" or name.startswith("supermemory.store."):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if SQL_CALL.search(line):
                offenders.append(f"{_rel(path)}:{number}: {line.strip()}")
    assert not offenders, "SQL outside supermemory/store/:\n" + "\n".join(offenders)


def test_memory_store_is_a_facade_without_base_classes():
    core = tree("supermemory.core")
    classes = [node for node in core.body if isinstance(node, ast.ClassDef)]
    assert [c.name for c in classes] == ["MemoryStore"]
    assert classes[0].bases == [], "MemoryStore has no base classes or mixins"
    assert _line_count(ROOT / "supermemory" / "core.py") <= 400


def test_the_store_and_the_recall_pipeline_return_data_and_only_the_shells_render():
    graph = import_graph()
    layers = [name for name in graph if name in ("supermemory.core", "supermemory.briefing", "supermemory.capture")
              or name.startswith(("supermemory.store", "supermemory.retrieval"))]
    rendering = [name for name in layers if "supermemory.render" in graph[name]]
    assert rendering == [], f"these modules render text instead of returning data: {rendering}"
