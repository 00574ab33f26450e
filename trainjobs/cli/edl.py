"""``trainjobs edl-scale``: one round of the PaddlePaddle EDL autoscaler, offline."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from trainjobs.cli.common import EXIT_OK, k8s_version, number_in, print_findings
from trainjobs.errors import Finding, SpecError
from trainjobs.output import printable_lines

if TYPE_CHECKING:
    from trainjobs.frameworks.paddle_edl import TrainingJob
    from trainjobs.frameworks.paddle_edl.inventory import ClusterObject

# Named in --help without importing the autoscaler to build the parser; a test holds
# it to trainjobs.platform.edl_controller.DEFAULT_MAX_LOAD.
_DEFAULT_MAX_LOAD_HELP = 0.9

__all__ = ["cmd_edl_scale", "edl_scale_options"]


def _parallelism(texts: Sequence[str]) -> tuple[dict[str, int], list[Finding]]:
    counts: dict[str, int] = {}
    findings = []
    for text in texts:
        name, _, number = text.rpartition("=")
        if not name or not number.lstrip("-").isdigit():
            findings.append(
                Finding(
                    code="edl.parallelism",
                    path="--parallelism",
                    message="expected NAME=N (or NAMESPACE/NAME=N)",
                    value=text,
                    hint="e.g. --parallelism example=4",
                )
            )
            continue
        counts[name] = int(number)
    return counts, findings


def cmd_edl_scale(args: argparse.Namespace) -> int:
    """show how the PaddlePaddle EDL autoscaler would scale TrainingJobs on a cluster

    Run one round of the EDL autoscaler over the TrainingJobs in PATH and print each job's
    trainers now and the count EDL would set.
    """
    from trainjobs.check import run
    from trainjobs.frameworks.paddle_edl import TrainingJob
    from trainjobs.frameworks.paddle_edl.inventory import (
        ClusterObject,
        capacity_node,
        cluster_objects,
    )
    from trainjobs.frameworks.paddle_edl.whatif import format_report, what_if
    from trainjobs.platform.edl_controller import DEFAULT_MAX_LOAD, EdlController
    from trainjobs.spec import load_path
    from trainjobs.spec.load import read_documents

    findings: list[Finding] = []
    edl_jobs: list[TrainingJob] = []
    max_loads: list[float] = []
    for path in args.paths:
        try:
            stack = load_path(path)
            rendering = run(stack, k8s_version=args.k8s_version)
        except SpecError as exc:
            findings += exc.findings
            continue
        print_findings(rendering.findings, sys.stderr)
        edl_jobs += [u.job for u in rendering.jobs if isinstance(u.job, TrainingJob)]
        controllers = [e.resource for e in stack.platform if isinstance(e.resource, EdlController)]
        max_loads += [c.spec.max_load_desired for c in controllers]
    if not edl_jobs and not findings:
        findings.append(
            Finding(
                code="edl.no_jobs",
                path="",
                message="no TrainingJob (paddlepaddle.org/v1) in the input",
                value=list(args.paths),
                hint="name a file holding EDL TrainingJobs",
            )
        )
    objects: list[ClusterObject] = []
    for path in args.cluster or []:
        try:
            objects += cluster_objects(read_documents(Path(path)), path)
        except SpecError as exc:
            findings += exc.findings
    for index, text in enumerate(args.capacity or []):
        node, problems = capacity_node(text, index)
        findings += problems
        if node is not None:
            objects.append(ClusterObject(node, f"--capacity[{index}]"))
    parallelism, problems = _parallelism(args.parallelism or [])
    findings += problems
    if findings:
        raise SpecError.from_findings(findings)
    max_load = args.max_load
    if max_load is None:
        max_load = max_loads[0] if max_loads else DEFAULT_MAX_LOAD
    result = what_if(edl_jobs, objects, max_load=max_load, parallelism=parallelism)
    # The report quotes names and file paths of the cluster input: escaped, lines kept.
    sys.stdout.write(printable_lines(format_report(result)))
    return EXIT_OK


_EDL_SCALE_HELP = """\
Cluster input: --cluster takes what `kubectl get nodes,pods,jobs -A -o yaml` prints
(a List, or separate documents; other kinds are ignored): Nodes give capacity
(status.allocatable), Pods that have not finished give requests and limits (init
containers too) and each job's trainer pods (label paddle-job=<name>), and a Job
<name>-trainer gives a job's current trainers. --capacity adds a node by hand:
cpu=8,memory=32Gi[,gpu=2][,name=n1]; repeat it for more nodes. Without any Pod the
jobs' own pods are simulated (trainers at their current count, each pod on the first
node by name with room, else Pending). Current trainers: --parallelism NAME=N, else
the trainer Job, else min-instance. GPUs count under nvidia.com/gpu and the legacy
alpha.kubernetes.io/nvidia-gpu. The decision is one round of the EDL controller's
autoscaler (see trainjobs/frameworks/paddle_edl/autoscaler.py for its rules).
"""


def edl_scale_options(edl: argparse.ArgumentParser) -> None:
    """The options of ``edl-scale``."""
    edl.epilog = _EDL_SCALE_HELP
    edl.formatter_class = argparse.RawDescriptionHelpFormatter  # the epilog's lines as written
    edl.add_argument("paths", nargs="+", metavar="PATH", help="files or stacks with TrainingJobs")
    edl.add_argument(
        "--cluster",
        "--nodes",
        action="append",
        metavar="FILE",
        help="YAML/JSON of the cluster's Nodes (and Pods, Jobs); repeatable",
    )
    edl.add_argument(
        "--capacity",
        action="append",
        metavar="SPEC",
        help="a node by hand: cpu=8,memory=32Gi[,gpu=2][,name=n1]; repeatable",
    )
    edl.add_argument(
        "--parallelism",
        action="append",
        metavar="NAME=N",
        help="a job's current trainer count (default: its trainer Job, else min-instance)",
    )
    edl.add_argument(
        "--max-load",
        type=number_in(0, 1, example="--max-load 0.9"),
        metavar="F",
        help=(
            "-max_load_desired (default: the EdlController's in PATH, else "
            f"{_DEFAULT_MAX_LOAD_HELP})"
        ),
    )
    edl.add_argument(
        "--k8s-version",
        metavar="X.Y",
        type=k8s_version,
        help="Kubernetes version to check against",
    )
