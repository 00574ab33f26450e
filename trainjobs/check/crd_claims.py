"""Stack rule: one CustomResourceDefinition name, one definition per cluster.

A CRD name (``mpijobs.kubeflow.org``) can be defined once in a cluster. Units of a
stack *claim* CRD names: an operator install by shipping the CRD (at the versions its
file serves), a job on the ``operator`` target by needing it at its apiVersion. Two
claims conflict when

* two units install the same CRD name (the Training Operator's MPIJob ``v1`` and the
  MPI Operator's ``v2beta1`` are both ``mpijobs.kubeflow.org``; two Trainers both
  bring JobSet): the second apply would replace the first one's definition, or
* a job needs a version the stack's installer of that CRD does not serve.
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

    @property
    def who(self) -> str:
        return f"{self.unit.origin} ({self.unit.kind} {self.unit.ref.name})"


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
    for unit in units:
        if not isinstance(unit, RenderedJob) or unit.target != "operator":
            continue
        kind = unit.entry.framework.kind
        install = installed.get(kind.crd_name)
        if install is None or kind.version in install.versions:
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
