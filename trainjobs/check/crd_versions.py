"""Stack rule: custom resources that need one CRD at two versions cannot share a cluster.

Two frameworks may serve the same CRD name at different versions — the
Training Operator's MPIJob ``kubeflow.org/v1`` and the MPI Operator's
``kubeflow.org/v2beta1`` both install ``mpijobs.kubeflow.org``, each with its
version only. A stack that renders jobs of both to the ``operator`` target
needs both CRDs in one cluster, which cannot be.
"""

from __future__ import annotations

from collections.abc import Sequence

from trainjobs.errors import Finding
from trainjobs.render import RenderedJob

__all__ = ["crd_version_findings"]


def _describe(job: RenderedJob) -> str:
    framework = job.entry.framework
    return (
        f"{framework.kind.kind} {job.job.namespace}/{job.job.name} "
        f"({framework.kind.api_version}, {framework.operator})"
    )


def _where(job: RenderedJob, source: str) -> str:
    if job.entry.source and job.entry.source != source:
        return f"{job.entry.path} in {job.entry.source}"
    return job.entry.path


def crd_version_findings(jobs: Sequence[RenderedJob]) -> list[Finding]:
    """An error for each operator-target job whose CRD another job needs at another version."""
    first_by_crd: dict[str, RenderedJob] = {}
    findings: list[Finding] = []
    for job in jobs:
        if job.target != "operator":
            continue
        kind = job.entry.framework.kind
        first = first_by_crd.setdefault(kind.crd_name, job)
        if first.entry.framework.kind.api_version == kind.api_version:
            continue
        source = job.entry.source
        findings.append(
            Finding(
                code="crd.version_conflict",
                path=job.entry.path,
                message=(
                    f"{_describe(job)} and {_where(first, source)}, {_describe(first)}, both "
                    f"need the CRD {kind.crd_name} on the operator target, but a cluster "
                    "serves it at one version only"
                ),
                value=kind.api_version,
                hint=(
                    "render one of them with `trainjobs: {target: pods}` (no operator or CRD "
                    "needed), or put them in stacks for different clusters"
                ),
                source=source,
            )
        )
    return findings
