"""The README's "Where things live" map matches the code (issue 28): every core package and module and every
plugin folder has its line, nothing listed is gone, and every plugin keeps the one layout the map states
(``plugin.py`` hooks only; the formalism and its settings in ``formalism.py``; the trained model in ``model.py``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _map_entries() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Where things live")
    block = text[start:].split("```")[1]  # the first fenced block after the heading
    entries, section = set(), None
    for line in block.splitlines():
        m = re.match(r"^(\s*)(\S+)", line)
        if not m or line.startswith(" " * 20):
            continue  # continuation lines of a description
        name = m.group(2)
        if not m.group(1):
            section = name.rstrip("/")
            continue
        entries.add(f"{section}/{name}")
    return entries


def _code_entries() -> set[str]:
    out = set()
    for top in ("core", "plugins"):
        for p in sorted((ROOT / top).iterdir()):
            if p.is_dir() and (p / "__init__.py").exists():
                out.add(f"{top}/{p.name}/")
            elif p.suffix == ".py" and p.name != "__init__.py":
                out.add(f"{top}/{p.name}")
    return out


def test_every_package_and_module_has_its_line_and_none_is_stale():
    listed, present = _map_entries(), _code_entries()
    assert present - listed == set(), f"missing from the README map: {sorted(present - listed)}"
    assert listed - present == set(), f"listed in the README map but gone: {sorted(listed - present)}"


def _plugins() -> list[Path]:
    return [p for p in sorted((ROOT / "plugins").iterdir()) if (p / "__init__.py").exists()]


def test_plugin_py_holds_hooks_only():
    for plugin in _plugins():
        tree = ast.parse((plugin / "plugin.py").read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                raise AssertionError(f"{plugin.name}/plugin.py defines class {node.name}: it belongs in "
                                     "formalism.py (settings, formalism) or model.py (the trained model)")
            if isinstance(node, ast.FunctionDef):
                marks = [ast.unparse(d) for d in node.decorator_list]
                assert "hookimpl" in marks, f"{plugin.name}/plugin.py: {node.name} is not a hook implementation"


def test_a_formalism_lives_in_formalism_py():
    for plugin in _plugins():
        for path in plugin.glob("*.py"):
            if path.name == "formalism.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and any(ast.unparse(b) == "Formalism" for b in node.bases):
                    raise AssertionError(f"{plugin.name}/{path.name} defines the formalism {node.name}; the map "
                                         "says formalisms live in formalism.py")


def test_tests_never_import_a_benchmark_script():
    """Benchmark scripts are not part of the package or its tests; their own helpers are checked by
    `python -m pytest benchmarks/`."""
    scripts = {p.stem for p in (ROOT / "benchmarks").glob("*.py")
               if p.stem != "conftest" and not p.stem.startswith("test_")}
    for path in (ROOT / "tests").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            assert not (isinstance(node, ast.Attribute) and node.attr == "spec_from_file_location"), \
                f"{path.name} loads a module by its path"
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name.split(".")[0] not in scripts, f"{path.name} imports the benchmark script {name}"
