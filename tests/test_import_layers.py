"""No import cycle inside `treegram` (issue 28): the package is layered, every import runs down the layers.

The graph is read from the source (the `ast` of every module under core/ and plugins/), counting imports anywhere
in a module -- inside functions too, since a deferred import is still a dependency -- except those under
``if TYPE_CHECKING:``, which never run.  ``from package import name`` points at the submodule when ``name`` is
one, else at the package's ``__init__``.  A cycle is a strongly connected component of more than one module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    parts = (["treegram"] + parts[1:]) if parts[0] == "core" else (["treegram", "plugins"] + parts[1:])
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    files = [p for d in ("core", "plugins") for p in (ROOT / d).rglob("*.py")]
    return {_module_name(p): p for p in files}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node, skipping `if TYPE_CHECKING:` bodies (without recursion limits)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def import_graph() -> dict[str, set[str]]:
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [resolve(a.name) for a in node.names]
            else:
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = []
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    targets.append(sub if sub in mods else resolve(source))
            graph[mod].update(t for t in targets if t and t != mod and t.startswith("treegram"))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _explain(graph, component):
    inside = set(component)
    return "\n".join(f"  {a} -> {b}" for a in component for b in sorted(graph[a] & inside))


def test_the_checker_sees_a_cycle():
    graph = {"treegram.a": {"treegram.b"}, "treegram.b": {"treegram.c"}, "treegram.c": {"treegram.a"},
             "treegram.d": {"treegram.a"}}
    assert cycles(graph) == [["treegram.a", "treegram.b", "treegram.c"]]
    graph["treegram.c"] = set()
    assert cycles(graph) == []


def test_no_import_cycle_inside_treegram():
    """The whole package, core and plugins alike."""
    graph = import_graph()
    assert len(graph) > 100, "the module scan found too few modules"
    assert any(m.startswith("treegram.plugins.") for m in graph), "the module scan missed the plugins"
    found = cycles(graph)
    if found:
        pytest.fail("import cycles inside treegram:\n" + "\n\n".join(_explain(graph, c) for c in found))
