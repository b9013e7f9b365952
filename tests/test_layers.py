"""Layers point one way: the rules, the planner and the CLI load no aws-cdk-lib, the stacks
never import the CLI, and nothing below the stacks imports them."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

PACKAGE = ROOT / "fm_platform"


def _modules(folder: str) -> list[str]:
    base = PACKAGE / folder
    return sorted(
        "fm_platform."
        + ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
        for path in base.rglob("*.py")
    )


@pytest.mark.parametrize("package", ["rules", "fleet", "cli", "hardware"])
def test_a_pure_package_loads_no_aws_cdk_lib(package):
    modules = _modules(package)
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('aws_cdk', 'jsii', 'constructs', 'cdk_nag'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == [], f"{package} loads aws-cdk-lib"


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports (at any depth of the file, lazily too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _importers_of(target: str, folders: list[str]) -> list[str]:
    offenders = []
    for folder in folders:
        paths = [PACKAGE / folder] if folder.endswith(".py") else (PACKAGE / folder).rglob("*.py")
        for path in paths:
            if any(name == target or name.startswith(target + ".") for name in _imports(path)):
                offenders.append(str(path.relative_to(ROOT)))
    return offenders


def test_the_stacks_never_import_the_cli():
    assert _importers_of("fm_platform.cli", ["stacks", "constructs", "config"]) == []


def test_nothing_below_the_stacks_imports_them():
    below = ["rules", "hardware", "config", "constructs", "fleet", "cli", "mapping.py"]
    below += ["images.py", "compliance.py"]
    assert _importers_of("fm_platform.stacks", below) == []
    assert _importers_of("fm_platform.app", below) == []


def test_the_rules_import_nothing_above_them():
    for upper in ("fm_platform.constructs", "fm_platform.config", "fm_platform.stacks"):
        assert _importers_of(upper, ["rules", "hardware", "mapping.py"]) == []


def _module_graph() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports (at any depth of the
    file, ``TYPE_CHECKING`` and lazy imports too)."""
    modules = {name: PACKAGE.parent / (name.replace(".", "/") + ".py") for name in _modules(".")}
    for name in list(modules):
        if not modules[name].exists():
            modules[name] = PACKAGE.parent / name.replace(".", "/") / "__init__.py"
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[name] = {other for other in found if other in modules and other != name}
    return graph


def test_no_module_imports_one_that_imports_it_back():
    graph = _module_graph()
    cycles = []
    for start in graph:
        seen, stack = set(), [(start, (start,))]
        while stack:
            module, path = stack.pop()
            for imported in graph[module]:
                if imported == start:
                    cycles.append(" -> ".join((*path, start)))
                elif imported not in seen:
                    seen.add(imported)
                    stack.append((imported, (*path, imported)))
    assert cycles == []
