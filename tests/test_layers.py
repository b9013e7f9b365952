"""Layers point one way. Every module of fm_platform belongs to a declared layer, imports
only from its own layer and the layers below it (an import anywhere in the file counts:
inside a function, under ``TYPE_CHECKING``, relative), and no imports go round in a
circle. The pure layers (rules, hardware, the planner, the CLI) load no aws-cdk-lib."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from tests.support import ROOT

PACKAGE = ROOT / "fm_platform"

# Each layer and the layers it may import besides itself (docs/development.md, "Layers").
# The first part of a module's name after ``fm_platform`` names its layer.
LAYERS: dict[str, frozenset[str]] = {
    "hardware": frozenset(),
    "rules": frozenset({"hardware"}),
    "core": frozenset({"rules", "hardware"}),
    # Container images per family, region and hardware: data the planner and stacks read.
    "containers": frozenset({"rules", "hardware"}),
    # The constructs' default images come from the containers' table, as the planner's do.
    "constructs": frozenset({"core", "containers", "rules", "hardware"}),
    "config": frozenset({"constructs", "core", "rules", "hardware"}),
    "fleet": frozenset({"containers", "rules", "hardware"}),
    "stacks": frozenset(
        {"config", "constructs", "core", "fleet", "containers", "rules", "hardware"}
    ),
    "app": frozenset(
        {"stacks", "config", "constructs", "core", "fleet", "containers", "rules", "hardware"}
    ),
    "cli": frozenset({"fleet", "rules", "hardware"}),
    # The scripts HyperPod runs on every node: they import nothing of the package.
    "lifecycle_assets": frozenset(),
    # The package itself: the public API re-exports names from every layer but the CLI.
    "api": frozenset({"app", "stacks", "config", "constructs", "core", "rules", "hardware"}),
}
# Top-level modules and the layer they sit in.
_TOP_LEVEL = {"fm_platform": "api", "fm_platform.app": "app"}


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__")


def layer_of(module: str) -> str | None:
    if module in _TOP_LEVEL:
        return _TOP_LEVEL[module]
    layer = module.split(".")[1]
    return layer if layer in LAYERS else None


def imports_of(module: str, source: str, known: Iterable[str]) -> list[tuple[str, int]]:
    """The package's modules that ``module`` imports, each with the line of its first
    import: at any depth of the file, relative imports resolved; ``from package import
    name`` counts as an import of the submodule ``package.name`` when there is one."""
    known = set(known)
    is_package = any(other.startswith(module + ".") for other in known)
    found: dict[str, int] = {}

    def add(name: str, line: int) -> None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.setdefault(name, line)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                origin = f"{base}.{node.module}" if node.module else base
            else:
                origin = node.module or ""
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                add(submodule if submodule in known else origin, node.lineno)
    return sorted(found.items(), key=lambda item: item[1])


def import_graph(sources: Mapping[str, str]) -> dict[str, list[tuple[str, int]]]:
    """Module -> the package modules it imports (with the line), for ``sources`` (module
    name -> its text; a package's ``__init__`` is named by the package)."""
    names = set(sources)
    return {module: imports_of(module, text, names) for module, text in sources.items()}


def climbs(graph: Mapping[str, list[tuple[str, int]]]) -> list[str]:
    """Every import that leaves its layer for one it may not import, and every module in
    no declared layer."""
    problems = []
    for module, imported in sorted(graph.items()):
        layer = layer_of(module)
        if layer is None:
            problems.append(f"{module} is in no declared layer (LAYERS in tests/test_layers.py)")
            continue
        for target, line in imported:
            target_layer = layer_of(target)
            if target_layer in (layer, None) or target_layer in LAYERS[layer]:
                continue
            allowed = ", ".join(sorted(LAYERS[layer])) or "nothing else"
            problems.append(
                f"{module} (line {line}) imports {target}: layer {layer!r} may import "
                f"{allowed}, not {target_layer!r}"
            )
    return problems


def cycles(graph: Mapping[str, list[tuple[str, int]]]) -> list[str]:
    """Every group of modules that import each other in a circle (Tarjan's strongly
    connected components), each with the imports that close it."""
    edges = graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target, _ in edges.get(module, []):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    problems = []
    for group in sorted(groups):
        inside = [
            f"{module} (line {line}) imports {target}"
            for module in group
            for target, line in edges[module]
            if target in group
        ]
        problems.append("import cycle among " + ", ".join(group) + ": " + "; ".join(inside))
    return problems


def _package_sources() -> dict[str, str]:
    return {module_name(path): path.read_text() for path in sorted(PACKAGE.rglob("*.py"))}


@pytest.fixture(scope="module")
def graph() -> dict[str, list[tuple[str, int]]]:
    return import_graph(_package_sources())


def test_no_import_climbs_out_of_its_layer(graph):
    problems = climbs(graph)
    assert not problems, "imports that climb:\n  " + "\n  ".join(problems)


def test_no_imports_go_round_in_a_circle(graph):
    problems = cycles(graph)
    assert not problems, "\n".join(problems)


# The checks themselves, on modules of their own.


def test_an_import_inside_a_function_that_climbs_is_named_with_its_line():
    sources = {
        "fm_platform.rules.sizes": "def f():\n    from fm_platform.constructs.tokens import x\n",
        "fm_platform.constructs.tokens": "",
    }
    assert climbs(import_graph(sources)) == [
        "fm_platform.rules.sizes (line 2) imports fm_platform.constructs.tokens: layer 'rules' "
        "may import hardware, not 'constructs'"
    ]


def test_a_cycle_is_named_with_the_imports_that_close_it():
    sources = {
        "fm_platform.core.a": "from . import b\n",
        "fm_platform.core.b": "import fm_platform.core.a\n",
        "fm_platform.core.c": "from fm_platform.core.a import x\n",
    }
    graph = import_graph(sources)
    assert cycles(graph) == [
        "import cycle among fm_platform.core.a, fm_platform.core.b: fm_platform.core.a "
        "(line 1) imports fm_platform.core.b; fm_platform.core.b (line 1) imports "
        "fm_platform.core.a"
    ]


def test_a_module_outside_every_layer_is_reported():
    assert climbs(import_graph({"fm_platform.misc.tool": ""})) == [
        "fm_platform.misc.tool is in no declared layer (LAYERS in tests/test_layers.py)"
    ]


def _modules(folder: str) -> list[str]:
    return sorted(module_name(path) for path in (PACKAGE / folder).rglob("*.py"))


@pytest.mark.parametrize("package", ["rules", "fleet", "cli", "hardware", "containers"])
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
