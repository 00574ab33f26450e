"""``trainjobs graph``: a stack as Mermaid, DOT or SVG."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from trainjobs.cli.common import EXIT_OK, add_profile, print_findings, render_paths, write_file
from trainjobs.errors import TrainjobsError
from trainjobs.spec.choices import TARGETS

__all__ = ["add_command", "cmd_graph"]


def _graph_title(path: str) -> str:
    """``stack demo`` for ``stacks/Pulumi.demo.yaml``, else the file's name."""
    name = Path(path).name
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "Pulumi" and parts[2] in ("yaml", "yml"):
        return f"stack {parts[1]}"
    return name


def cmd_graph(args: argparse.Namespace) -> int:
    from trainjobs.graph import stack_graph, to_dot, to_mermaid, to_svg

    writers = {".svg": to_svg, ".mmd": to_mermaid, ".md": to_mermaid, ".dot": to_dot}
    writer = to_mermaid
    if args.output:
        suffix = Path(args.output).suffix.lower()
        if suffix not in writers:
            raise TrainjobsError(
                f"cannot tell the format of {args.output!r}: name it .svg (Graphviz), "
                ".mmd or .md (Mermaid) or .dot (Graphviz source)"
            )
        writer = writers[suffix]
    (rendering,) = render_paths([args.path], args.target, args.k8s_version, profile=args.profile)
    print_findings(rendering.findings, sys.stderr)
    text = writer(stack_graph(rendering, _graph_title(args.path)))
    if not args.output:
        sys.stdout.write(text)
        return EXIT_OK
    write_file(Path(args.output), text)
    units, objects = len(rendering.units), len(rendering.objects)
    print(f"wrote {args.output}: {units} unit{'s' * (units != 1)}, {objects} objects")
    return EXIT_OK


def add_command(sub: Any) -> None:
    """Register ``graph`` with the subcommand parsers ``sub``."""
    graph = sub.add_parser(
        "graph",
        help="draw a stack: its jobs, backends, node pools, queues, operators and dependencies",
        description=(
            "Draw a stack: one box per job, backend, node pool, queue, operator and namespace, "
            "with its objects (replicas of one role grouped), and an arrow from each to what "
            "needs it. Without -o: Mermaid text on stdout. -o FILE.svg draws SVG with "
            "Graphviz's dot; -o FILE.mmd writes Mermaid; -o FILE.dot the Graphviz source."
        ),
    )
    graph.add_argument("path", metavar="PATH", help="a stack config or a YAML file of jobs")
    graph.add_argument("-o", "--output", metavar="FILE", help="write here (.svg, .mmd, .dot)")
    graph.add_argument("--target", choices=TARGETS, help="render every job to this target")
    graph.add_argument("--k8s-version", metavar="X.Y", help="Kubernetes version to check against")
    add_profile(graph)
    graph.set_defaults(func=cmd_graph)
