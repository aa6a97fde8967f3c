"""The package's layout rules (docs/architecture.md), read from the code's own imports: no import circles in
``construct/`` or ``cli/``, and construction stages that import only the workspace, the shared modules and earlier
stages."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
#: The stage groups of ``zuhyo.construct`` in pipeline order; a group may import only groups at or before it.
STAGE_ORDER = ("workspace", "collect", "filter", "select", "qa", "publish")
SHARED = ("executor", "asking")


def _modules() -> dict[str, Path]:
    mods = {}
    for path in (SRC / "zuhyo").rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()


def _imports(module: str) -> set[str]:
    """Every zuhyo module ``module`` imports, at module level or inside functions (type-only imports included)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target.startswith("zuhyo") and target != module:
                found.add(target)
    return found


def _cycles(prefix: str) -> list[list[str]]:
    """Strongly connected components of more than one module among the modules under ``prefix`` (Tarjan)."""
    graph = {m: sorted(t for t in _imports(m) if t.startswith(prefix)) for m in MODULES if m.startswith(prefix)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def _group(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["zuhyo", "construct"] and len(parts) > 2 else None


@pytest.mark.parametrize("prefix", ["zuhyo.construct", "zuhyo.cli"])
def test_no_import_circles(prefix):
    assert _cycles(prefix) == []


def test_a_stage_imports_only_the_workspace_shared_modules_and_earlier_stages():
    groups = {_group(m) for m in MODULES} - {None}
    assert groups == set(STAGE_ORDER) | set(SHARED), "docs/architecture.md and STAGE_ORDER name every group"
    wrong = []
    for module in MODULES:
        group = _group(module)
        if group is None:
            continue
        for target in _imports(module):
            other = _group(target)
            if other is None or other == group:
                continue
            if group in SHARED and other in STAGE_ORDER:
                wrong.append(f"{module} (shared) -> {target}")
            elif group in STAGE_ORDER and other in STAGE_ORDER and STAGE_ORDER.index(other) > STAGE_ORDER.index(group):
                wrong.append(f"{module} -> {target} (a later stage)")
    assert wrong == []


def test_only_the_cli_and_the_web_app_import_construction():
    importers = sorted(m for m in MODULES if _group(m) is None and m != "zuhyo.construct"
                       and any(t.startswith("zuhyo.construct") for t in _imports(m))
                       and not m.startswith(("zuhyo.cli", "zuhyo.annotate", "zuhyo.demo", "zuhyo.testing")))
    assert importers == []


def test_the_checker_sees_a_circle_and_a_later_stage(tmp_path, monkeypatch):
    """The rules above can fail: a planted circle and a planted backward import are both found."""
    fake = {"zuhyo.construct.select.x": tmp_path / "x.py", "zuhyo.construct.qa.y": tmp_path / "y.py"}
    fake["zuhyo.construct.select.x"].write_text("from zuhyo.construct.qa import y\n")
    fake["zuhyo.construct.qa.y"].write_text("def f():\n    from zuhyo.construct.select import x\n")
    monkeypatch.setattr(sys.modules[__name__], "MODULES", {**MODULES, **fake})
    assert ["zuhyo.construct.qa.y", "zuhyo.construct.select.x"] in _cycles("zuhyo.construct")
    with pytest.raises(AssertionError, match="a later stage"):
        test_a_stage_imports_only_the_workspace_shared_modules_and_earlier_stages()


def test_public_entry_points_resolve():
    import zuhyo.construct as construct

    for name in construct.__all__:
        assert callable(getattr(construct, name)) or getattr(construct, name) is not None, name
    with pytest.raises(AttributeError):
        construct.not_a_stage  # noqa: B018
