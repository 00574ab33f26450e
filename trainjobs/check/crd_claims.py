"""Stack rule: one CustomResourceDefinition name, one definition per cluster.

A CRD name (``mpijobs.kubeflow.org``) can be defined once in a cluster. Units of a
stack *claim* CRD names: an operator install by shipping the CRD (at the versions its
file serves), a job on the ``operator`` target by needing it at its apiVersion. Two
claims conflict when

* two units install the same CRD name (the Training Operator's MPIJob ``v1`` and the
  MPI Operator's ``v2beta1`` are both ``mpijobs.kubeflow.org``; two Trainers both
  bring JobSet): the second apply would replace the first one's definition;
* a job needs a version the stack's installer of that CRD does not serve;
* with no installer in the stack, two jobs need the CRD at different versions (an
  MPIJob ``v1`` and an MPIJob ``v2beta1``): no cluster can serve both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trainjobs.errors import Finding
from trainjobs.render import RenderedJob, RenderedUnit

__all__ = ["crd_claim_findings"]


@dataclass(frozen=True)
class _Install:
    unit: RenderedUnit
    versions: tuple[str, ...]


def _installs(unit: RenderedUnit) -> dict[str, tuple[str, ...]]:
    found = {}
    for obj in unit.objects:
        manifest = obj.manifest
        if manifest.get("kind") == "CustomResourceDefinition":
            versions = (manifest.get("spec") or {}).get("versions") or []
            names = tuple(str(v.get("name")) for v in versions if v.get("served", True))
            found[str(manifest["metadata"]["name"])] = names
    return found


def _where(unit: RenderedUnit, source: str) -> str:
    return unit.origin if unit.source in ("", source) else f"{unit.origin} in {unit.source}"


def _describe(job: RenderedJob) -> str:
    framework = job.entry.framework
    return (
        f"{framework.kind.kind} {job.job.namespace}/{job.job.name} "
        f"({framework.kind.api_version}, {framework.operator})"
    )


def _jobs_disagree(job: RenderedJob, first: RenderedJob) -> Finding:
    kind = job.entry.framework.kind
    source = job.source
    return Finding(
        code="crd.version_conflict",
        path=job.origin,
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


def crd_claim_findings(units: Sequence[RenderedUnit]) -> list[Finding]:
    """An error for every unit whose CRD claim conflicts with an earlier unit's."""
    installed: dict[str, _Install] = {}
    findings: list[Finding] = []
    for unit in units:
        for name, versions in _installs(unit).items():
            first = installed.setdefault(name, _Install(unit, versions))
            if first.unit is unit:
                continue
            findings.append(
                Finding(
                    code="crd.installed_twice",
                    path=unit.origin,
                    message=(
                        f"{unit.kind} {unit.ref.name} installs the CRD {name} "
                        f"({', '.join(versions)}), and so does {_where(first.unit, unit.source)} "
                        f"({first.unit.kind} {first.unit.ref.name}, {', '.join(first.versions)}); "
                        "a cluster holds one definition per name, so one install would "
                        "replace the other's"
                    ),
                    value=name,
                    hint=(
                        "install it once: leave the kind out of one operator (a "
                        "TrainingOperator's spec.enabledSchemes, a Trainer's installJobSet: "
                        "false), or put the operators in stacks for different clusters"
                    ),
                    source=unit.source,
                )
            )
    first_job: dict[str, RenderedJob] = {}
    for unit in units:
        if not isinstance(unit, RenderedJob) or unit.target != "operator":
            continue
        kind = unit.entry.framework.kind
        install = installed.get(kind.crd_name)
        if install is None:
            earlier = first_job.setdefault(kind.crd_name, unit)
            if earlier.entry.framework.kind.api_version != kind.api_version:
                findings.append(_jobs_disagree(unit, earlier))
            continue
        if kind.version in install.versions:
            continue
        findings.append(
            Finding(
                code="crd.version_missing",
                path=unit.origin,
                message=(
                    f"{kind.kind} {unit.ref.name} is {kind.api_version}, but the CRD "
                    f"{kind.crd_name} that {_where(install.unit, unit.source)} "
                    f"({install.unit.kind} {install.unit.ref.name}) installs serves "
                    f"{', '.join(install.versions)} only"
                ),
                value=kind.api_version,
                hint=(
                    "render the job with `trainjobs: {target: pods}` (no operator needed), or "
                    "install the operator that serves this version instead"
                ),
                source=unit.source,
            )
        )
    return findings
