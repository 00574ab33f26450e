"""``trainjobs graph``: a stack as Mermaid, DOT or SVG."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from trainjobs.cli.common import (
    EXIT_OK,
    add_profile,
    add_quiet,
    k8s_version,
    print_findings,
    render_paths,
    require_output,
)
from trainjobs.errors import TrainjobsError
from trainjobs.output import printable
from trainjobs.targets.names import TARGETS

if TYPE_CHECKING:
    from trainjobs.graph import StackGraph

__all__ = ["FILE_MARK", "cmd_graph", "graph_options"]

FILE_MARK = "drawn by trainjobs graph; replaced when drawn again"
"""The comment in every Mermaid or DOT file ``graph -o`` writes: only a file holding it (or,
for SVG, the source digest comment) is replaced by the next ``graph -o``."""


def _graph_title(path: str) -> str:
    """``stack demo`` for ``stacks/Pulumi.demo.yaml``, else the file's name."""
    name = Path(path).name
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "Pulumi" and parts[2] in ("yaml", "yml"):
        return f"stack {parts[1]}"
    return name


def _mermaid_file(graph: StackGraph) -> str:
    from trainjobs.graph import to_mermaid

    lines = to_mermaid(graph).split("\n")
    at = lines.index("flowchart LR") + 1  # after any front matter, which must come first
    return "\n".join([*lines[:at], f"  %% {FILE_MARK}", *lines[at:]])


def _dot_file(graph: StackGraph) -> str:
    from trainjobs.graph import to_dot

    head, _, rest = to_dot(graph).partition("\n")
    return f"{head}\n  // {FILE_MARK}\n{rest}"


def cmd_graph(args: argparse.Namespace) -> int:
    """draw a stack: its jobs, backends, node pools, queues, operators and dependencies

    Draw a stack: one box per job, backend, node pool, queue, operator and namespace, with
    its objects (replicas of one role grouped), and an arrow from each to what needs it.
    Without -o: Mermaid text on stdout. -o FILE.svg draws SVG with Graphviz's dot; -o
    FILE.mmd writes Mermaid; -o FILE.dot the Graphviz source.
    """
    # Here, not at the top: building the parser must not load the graph model.
    from trainjobs.graph import SOURCE_MARK, stack_graph, to_mermaid, to_svg
    from trainjobs.output.folder import write_files

    writers: dict[str, tuple[Callable[[StackGraph], str], str]] = {
        ".svg": (to_svg, SOURCE_MARK),
        ".mmd": (_mermaid_file, FILE_MARK),
        ".md": (_mermaid_file, FILE_MARK),
        ".dot": (_dot_file, FILE_MARK),
    }
    require_output(args, "--overwrite", "the Mermaid graph")
    writer: Callable[[StackGraph], str] = to_mermaid
    mark = FILE_MARK
    if args.output:
        suffix = Path(args.output).suffix.lower()
        if suffix not in writers:
            raise TrainjobsError(
                f"cannot tell the format of {printable(repr(args.output))}: name it .svg "
                "(Graphviz), .mmd or .md (Mermaid) or .dot (Graphviz source)"
            )
        writer, mark = writers[suffix]
    (rendering,) = render_paths([args.path], args.target, args.k8s_version, profile=args.profile)
    print_findings(rendering.findings, sys.stderr, args.quiet)
    text = writer(stack_graph(rendering, _graph_title(args.path)))
    if not args.output:
        sys.stdout.write(text)
        return EXIT_OK
    write_files({Path(args.output): text}, mark=mark, overwrite=args.overwrite)
    if not args.quiet:
        units, objects = len(rendering.units), len(rendering.objects)
        print(
            f"wrote {printable(args.output)}: {units} unit{'s' * (units != 1)}, {objects} objects"
        )
    return EXIT_OK


def graph_options(graph: argparse.ArgumentParser) -> None:
    """The options of ``graph``."""
    graph.add_argument("path", metavar="PATH", help="a stack config or a YAML file of jobs")
    graph.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write here (.svg, .mmd, .dot); an existing FILE only if trainjobs drew it",
    )
    graph.add_argument(
        "--overwrite",
        action="store_true",
        help="replace FILE even though trainjobs did not draw it",
    )
    add_quiet(graph)
    graph.add_argument("--target", choices=TARGETS, help="render every job to this target")
    graph.add_argument(
        "--k8s-version",
        metavar="X.Y",
        type=k8s_version,
        help="Kubernetes version to check against",
    )
    add_profile(graph)
