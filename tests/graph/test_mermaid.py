"""Mermaid text: a subgraph per unit, escaped labels, edges, styles."""

from __future__ import annotations

from syrupy.assertion import SnapshotAssertion

from tests.support.paths import STACKS
from trainjobs.check import run
from trainjobs.graph import Cluster, Edge, Node, StackGraph, stack_graph, to_mermaid
from trainjobs.spec import load_path


def test_the_demo_stack(yaml_snapshot: SnapshotAssertion) -> None:
    graph = stack_graph(run(load_path(STACKS / "Pulumi.demo.yaml")), "stack demo")
    assert to_mermaid(graph) == yaml_snapshot


def test_labels_are_escaped_and_empty_units_kept() -> None:
    graph = StackGraph(
        "",
        (
            Cluster("u0", "backend", 'backend "x" <y> & z', "NfsBackend", ()),
            Cluster(
                "u1",
                "job",
                "job a/b",
                "TFJob, pods target",
                (Node("u1_n0", "Pod", ("p-0", "p-1")),),
            ),
        ),
        (Edge("u0", "u1"),),
    )
    assert to_mermaid(graph) == (
        "flowchart LR\n"
        '  subgraph u0["backend #quot;x#quot; #lt;y#gt; #amp; z<br/>NfsBackend"]\n'
        "  end\n"
        '  subgraph u1["job a/b<br/>TFJob, pods target"]\n'
        '    u1_n0["2 Pods<br/>p-0 … p-1"]\n'
        "  end\n"
        "  u0 --> u1\n"
        "  style u0 fill:#e6f4ea,stroke:#2e8540\n"
        "  style u1 fill:#e8f0fe,stroke:#3b6fc4\n"
    )
