"""A plugin never imports another plugin (issue 11): what formalisms share lives in core.

Walks every module of every plugin package with `ast` (module level, functions, `if TYPE_CHECKING` blocks alike)
and fails on any import of `treegram.plugins.<other>`; relative imports are resolved against the module's package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"


def plugin_names() -> list[str]:
    return sorted(p.name for p in PLUGINS.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def imported_modules(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file; `from X import a` also yields X.a (a submodule
    imported that way is a module import too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            out.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
    return out


def cross_plugin_imports(name: str) -> list[str]:
    own = f"treegram.plugins.{name}"
    bad = []
    for path in sorted((PLUGINS / name).rglob("*.py")):
        rel = path.relative_to(PLUGINS / name).with_suffix("")
        package = ".".join([own, *rel.parts[:-1]])
        for line, module in imported_modules(path, package):
            if module.startswith("treegram.plugins.") and not (module == own or module.startswith(own + ".")):
                target = module.split(".")[2]
                if (PLUGINS / target / "__init__.py").exists() or (PLUGINS / f"{target}.py").exists():
                    bad.append(f"plugins/{name}/{path.relative_to(PLUGINS / name)}:{line} imports {module}")
    return bad


def test_there_are_plugins_to_check():
    assert {"tsg", "tig", "ostag", "stsg", "vocabgen"} <= set(plugin_names())


@pytest.mark.parametrize("name", plugin_names())
def test_plugin_imports_no_other_plugin(name):
    bad = cross_plugin_imports(name)
    assert not bad, "a plugin imports another plugin (move the shared code into core):\n" + "\n".join(bad)


def test_the_check_catches_a_cross_plugin_import(tmp_path):
    """The walker sees imports inside functions and relative ones that climb into a sibling plugin."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from treegram.plugins.tsg.data import prepare\nfrom ..tig import model\n")
    mods = {m for _, m in imported_modules(f, "treegram.plugins.ostag")}
    assert "treegram.plugins.tsg.data" in mods and "treegram.plugins.tig.model" in mods
