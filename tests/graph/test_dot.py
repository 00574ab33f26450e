"""DOT source and SVG drawn by Graphviz, for every stack and example in the repository."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.paths import ROOT, example_job_files, stack_files
from trainjobs.check import run
from trainjobs.graph import (
    SOURCE_MARK,
    Cluster,
    GraphvizMissing,
    Node,
    StackGraph,
    source_digest,
    stack_graph,
    to_dot,
    to_svg,
)
from trainjobs.spec import load_path

SVG = "{http://www.w3.org/2000/svg}"


def _texts(svg: str) -> str:
    root = ET.fromstring(svg.encode())
    assert root.tag == f"{SVG}svg"
    return "\n".join(t.text or "" for t in root.iter(f"{SVG}text"))


@pytest.mark.parametrize(
    "path", [*stack_files(), *example_job_files()], ids=lambda p: f"{p.parent.name}-{p.stem}"
)
def test_every_stack_draws_as_svg_naming_every_unit(path: Path) -> None:
    rendering = run(load_path(path))
    svg = to_svg(stack_graph(rendering, path.name))
    texts = _texts(svg)
    for unit in rendering.units:
        assert str(unit.ref) in texts, unit.ref
    assert f"<!-- {SOURCE_MARK}" in svg


def test_the_readme_picture_is_current() -> None:
    """Redraw with ``make docs``."""
    picture = ROOT / "docs" / "demo-stack.svg"
    assert "(docs/demo-stack.svg)" in (ROOT / "README.md").read_text()
    found = re.search(re.escape(SOURCE_MARK) + r"([0-9a-f]{64})", picture.read_text())
    assert found is not None
    graph = stack_graph(run(load_path(ROOT / "stacks" / "Pulumi.demo.yaml")), "stack demo")
    assert found.group(1) == source_digest(to_dot(graph)), "run `make docs`"
    assert "job kubeflow/mnist" in _texts(picture.read_text())


def test_dot_quoting_and_empty_units() -> None:
    graph = StackGraph(
        'a "b"',
        (
            Cluster("u0", "backend", "backend x\\y", "NfsBackend", ()),
            Cluster(
                "u1",
                "namespace",
                "namespace n",
                "Namespace",
                (Node("u1_n0", "Namespace", ("n",)),),
                "Namespace",
            ),
        ),
        (),
    )
    text = to_dot(graph)
    assert text.startswith('digraph "a \\"b\\"" {\n')
    assert (
        '    graph [style="rounded,filled", fillcolor="#e6f4ea", color="#2e8540", '
        'label="backend x\\\\y\\nNfsBackend"];' in text
    )
    assert '    u0_none [shape=plaintext, style="", label="(no objects)"];' in text
    assert '  u1 [label="namespace n\\nNamespace", fillcolor="#fafafa", color="#9e9e9e"];' in text


def test_without_graphviz_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(GraphvizMissing, match=r"needs Graphviz's dot: install it \(apt-get"):
        to_svg(StackGraph("", (), ()))
