"""The package's structure, measured: import circles, and which layer builds manifests.

Rerun the numbers by hand with ``python -m pytest tests/test_structure.py -q -s``: each
test prints what it measured.
"""

from __future__ import annotations

import ast
import inspect
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grimp

from trainjobs.frameworks.base import Framework
from trainjobs.targets.registry import PLUGINS

PACKAGE = Path(__file__).resolve().parent.parent / "trainjobs"

KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset()
"""Circles left to break: none; keep it so."""


def circles(package: str, where: Path) -> list[frozenset[str]]:
    """Strongly connected components (more than one module) of the import graph of
    ``package`` (found in the folder ``where``), ``TYPE_CHECKING`` imports included: a
    type-only import is still a dependency a reader follows."""
    sys.path.insert(0, str(where))
    try:
        graph = grimp.build_graph(package, cache_dir=None)
    finally:
        sys.path.remove(str(where))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(start: str) -> None:
        # Tarjan's algorithm, iterative: the package's depth would exceed recursion.
        work: list[tuple[str, Iterator[str]]] = []

        def enter(module: str) -> None:
            index[module] = low[module] = len(index)
            stack.append(module)
            on_stack.add(module)
            work.append((module, iter(sorted(graph.find_modules_directly_imported_by(module)))))

        enter(start)
        while work:
            module, edges = work[-1]
            for target in edges:
                if target not in graph.modules:
                    continue
                if target not in index:
                    enter(target)
                    break
                if target in on_stack:
                    low[module] = min(low[module], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_circle_but_the_known_ones() -> None:
    found = set(circles("trainjobs", PACKAGE.parent))
    print(f"import circles: {len(found)}: {sorted(sorted(c) for c in found)}")
    assert found <= KNOWN_CIRCLES, sorted(sorted(c) for c in found - KNOWN_CIRCLES)


def test_the_circle_finder_finds_a_type_only_circle(tmp_path: Path) -> None:
    # The finder itself, on a package with one circle (a test that cannot fail is none).
    package = tmp_path / "probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from probe import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from probe import a\n"
    )
    (package / "c.py").write_text("from probe import a\n")
    assert circles("probe", tmp_path) == [frozenset({"probe.a", "probe.b"})]


def manifest_literals(folder: str) -> list[str]:
    """``file:line kind`` of each dict display with both ``apiVersion`` and ``kind`` keys
    in the modules under ``trainjobs/<folder>``: an object shape written there."""
    found = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Dict):
                continue
            keys = {
                k.value: v
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant)
            }
            if "apiVersion" in keys and "kind" in keys:
                where = path.relative_to(PACKAGE.parent)
                found.append(f"{where}:{node.lineno} {ast.unparse(keys['kind'])}")
    return found


KNOWN_FRAMEWORK_SHAPES = Counter(
    {
        # Not workloads: the generated CRDs (`trainjobs crds`), and the EDL what-if
        # tool's simulated cluster (the Nodes it reads, the Pods it would place).
        "trainjobs/frameworks/crds.py 'CustomResourceDefinition'": 1,
        "trainjobs/frameworks/paddle_edl/inventory.py 'Node'": 1,
        "trainjobs/frameworks/paddle_edl/inventory.py 'Pod'": 1,
    }
)
"""The object shapes still written in frameworks/, by file and kind."""


def test_frameworks_write_no_new_object_shape() -> None:
    found = Counter(
        line.split(":", 1)[0] + " " + line.split(" ", 1)[1]
        for line in manifest_literals("frameworks")
    )
    targets = len(manifest_literals("targets"))
    print(f"manifest literals: frameworks {sum(found.values())}, targets {targets}")
    assert not found - KNOWN_FRAMEWORK_SHAPES, "build objects in targets/, not in a framework"
    assert not KNOWN_FRAMEWORK_SHAPES - found, "moved out: strike it from the list"


def test_the_literal_finder_sees_a_shape() -> None:
    # Every target writes at least one object shape; the finder must see them.
    assert any(line.endswith("'Pod'") for line in manifest_literals("targets"))


FRAMEWORK_CONTRACT_CEILING = 12
"""Public methods of ``frameworks.base.Framework`` (the plugin contract); this only
shrinks (issue 36 aims at 12 across small capabilities)."""


def test_the_framework_contract_does_not_grow() -> None:
    methods = sorted(
        name for name, value in vars(Framework).items() if callable(value) and name[0] != "_"
    )
    print(f"framework contract: {len(methods)} methods: {methods}")
    assert len(methods) <= FRAMEWORK_CONTRACT_CEILING, "put it on a capability, not on Framework"
    assert len(methods) == FRAMEWORK_CONTRACT_CEILING, "it shrank: lower the ceiling"


def test_targets_take_only_the_plan() -> None:
    # A target's render has one argument, the plan: nothing beside it reaches a framework.
    for plugin in PLUGINS.values():
        assert list(inspect.signature(plugin.render).parameters) == ["plan"], plugin.name
