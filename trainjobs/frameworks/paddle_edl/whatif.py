"""What the EDL autoscaler would do with some TrainingJobs on a cluster (``trainjobs edl-scale``).

Input: the (defaulted) jobs, the cluster's objects (Nodes; Pods and the trainer
Jobs when the jobs already run) and optionally each job's current trainer
parallelism. When no Pod is given, the jobs' own pods are simulated (see
``inventory.simulated_pods``). The result is one autoscaler round as a table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trainjobs.errors import Finding, SpecError
from trainjobs.frameworks.paddle_edl.autoscaler import ClusterResource, ScalePlan, plan
from trainjobs.frameworks.paddle_edl.inventory import (
    ClusterObject,
    cluster_resource,
    elastic_job,
    problems,
    simulated_pods,
    trainer_parallelism,
    trainer_pods,
)
from trainjobs.frameworks.paddle_edl.model import TrainingJob

__all__ = ["WhatIf", "format_report", "what_if"]


@dataclass(frozen=True)
class WhatIf:
    """One autoscaler round and what it was computed from.

    Attributes:
        plan: the decision per job.
        cluster: the figures it decided on.
        simulated: True when the jobs' pods were simulated (no Pod was given).
        sources: where each job's current parallelism came from, by ``namespace/name``.
    """

    plan: ScalePlan
    cluster: ClusterResource
    simulated: bool
    sources: Mapping[str, str]


def _given(parallelism: Mapping[str, int], job: TrainingJob) -> int | None:
    for key in (f"{job.namespace}/{job.name}", job.name):
        if key in parallelism:
            return parallelism[key]
    return None


def what_if(
    jobs: Sequence[TrainingJob],
    objects: Sequence[ClusterObject],
    *,
    max_load: float,
    parallelism: Mapping[str, int] | None = None,
) -> WhatIf:
    """One EDL autoscaler round for ``jobs`` on the cluster ``objects`` describe.

    ``parallelism`` maps ``name`` or ``namespace/name`` to a job's current trainer
    count; otherwise the trainer Job among ``objects`` says, else min-instance (what
    the controller starts). Raises SpecError for unreadable quantities or no nodes.
    """
    findings: list[Finding] = problems(objects)
    if not any(o.kind == "Node" for o in objects):
        findings.append(
            Finding(
                code="edl.no_nodes",
                path="",
                message="no Node among the cluster objects, so there is no capacity to plan with",
                hint="pass --cluster with `kubectl get nodes,pods,jobs -A -o yaml` output "
                "or --capacity cpu=8,memory=32Gi",
            )
        )
    given = parallelism or {}
    for key, count in given.items():
        if count < 0:
            findings.append(
                Finding(
                    code="edl.parallelism",
                    path=f"--parallelism {key}",
                    message="a trainer count cannot be negative",
                    value=count,
                    hint="give the number of trainers the job runs now",
                )
            )
    known = [key for job in jobs for key in (job.name, f"{job.namespace}/{job.name}")]
    for key in given:
        if key not in known:
            # A misspelt name would leave the job on its default count without a word.
            findings.append(
                Finding(
                    code="edl.parallelism",
                    path=f"--parallelism {key}",
                    message="no TrainingJob of this name in the input",
                    value=key,
                    hint=f"name one of: {', '.join(known)}",
                )
            )
    if findings:
        raise SpecError.from_findings(findings)
    current: list[tuple[TrainingJob, int]] = []
    sources: dict[str, str] = {}
    for job in jobs:
        key = f"{job.namespace}/{job.name}"
        value = _given(given, job)
        sources[key] = "--parallelism"
        if value is None:
            value = trainer_parallelism(objects, job)
            sources[key] = "trainer Job" if value is not None else "min-instance"
        current.append((job, job.spec.trainer.min_instance if value is None else value))
    simulated = not any(o.kind == "Pod" for o in objects)
    if simulated:
        nodes = [o for o in objects if o.kind == "Node"]
        objects = [*objects, *simulated_pods(current, nodes)]
    cluster = cluster_resource(objects)
    elastic = [elastic_job(job, count, trainer_pods(objects, job)) for job, count in current]
    return WhatIf(plan(cluster, elastic, max_load), cluster, simulated, sources)


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip() for row in rows]


def format_report(result: WhatIf) -> str:
    """The cluster figures, then one line per job: its trainers now, the target, why."""
    c = result.cluster
    lines = [
        f"cluster: {len(c.nodes)} node{'s' * (len(c.nodes) != 1)}; "
        f"cpu {c.cpu_total_milli}m, {c.cpu_request_milli}m requested; "
        f"memory {c.memory_total_mega}M, {c.memory_request_mega}M requested; "
        f"gpu {c.gpu_total}, {c.gpu_limit} in limits; max load {result.plan.max_load:g}",
    ]
    if result.simulated:
        lines.append("no pods given: the jobs' own pods are simulated, first fit by node name")
    rows = [("JOB", "MIN", "MAX", "TRAINERS", "TARGET", "CHANGE", "NOTE")]
    for decision in result.plan.decisions:
        job = decision.job
        note = decision.reason or f"current trainers from {result.sources.get(job.key, '?')}"
        rows.append(
            (
                job.key,
                str(job.min_instance),
                str(job.max_instance),
                str(job.parallelism),
                "-" if decision.target is None else str(decision.target),
                f"{decision.change:+d}" if decision.target is not None else "-",
                note,
            )
        )
    lines += _table(rows)
    if result.plan.oscillating:
        lines.append(
            "warning: the plan oscillates (a pass undoes the one before); the EDL controller "
            "would loop here forever. Lower max_load_desired or the jobs' max-instance."
        )
    return "\n".join(lines) + "\n"
