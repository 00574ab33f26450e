"""The operator contract: an installable controller that runs jobs of some kinds.

Operator kinds (TrainingOperator, MPIOperator, Trainer, JobSet) are platform kinds of
category ``operator``. Besides their objects they state what the rest of trainjobs
needs to know about them: which job kinds they run (so a job can depend on the
operator that runs it) and whether they were installed with gang scheduling on
(so a job's ``runPolicy.schedulingPolicy`` is honoured, or a finding says it is not).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field

from trainjobs import errors
from trainjobs.errors import Finding, Severity
from trainjobs.k8s.data import deep_copy
from trainjobs.k8s.model import K8sModel
from trainjobs.platform.base import Category, DocT, PlatformKind, PlatformResource
from trainjobs.platform.gang import (
    DEFAULT_COSCHEDULER,
    GANG_MECHANISMS,
    VOLCANO,
    GangMechanism,
    GangScheduler,
)
from trainjobs.platform.install import PolicyRule
from trainjobs.platform.workload import create_namespace_field, harden_pod_spec

__all__ = [
    "DEFAULT_COSCHEDULER",
    "GANG_MECHANISMS",
    "VOLCANO",
    "GangMechanism",
    "GangScheduler",
    "OperatorKind",
    "OperatorSpec",
    "gang_prerequisite",
    "wildcard_findings",
]


class OperatorSpec(K8sModel):
    """Options every operator install has."""

    image: str | None = Field(
        default=None, description="Controller image; default the pinned upstream image."
    )
    create_namespace: bool = create_namespace_field()
    pod_security: Literal["restricted", "upstream"] = Field(
        default="restricted",
        description=(
            "The controller pod's security settings. restricted (default): it meets the "
            "restricted Pod Security level (non-root uid 65532 unless upstream names a "
            "user, seccomp RuntimeDefault, no privilege escalation, all capabilities "
            "dropped), where the release does not already (TrainingOperator, "
            "MPIOperator); upstream: exactly as the release ships it."
        ),
    )
    resources: dict[str, dict[str, str | int]] | None = Field(
        default=None,
        description=(
            "The controller container's resources (requests, limits). Default: what the "
            "upstream install sets, which for TrainingOperator, MPIOperator and Trainer is "
            "nothing (`trainjobs check` warns); set requests so the scheduler keeps room "
            "for the controller."
        ),
    )

    def finish_pod_spec(self, pod_spec: dict[str, Any]) -> dict[str, Any]:
        """The controller's pod spec with the chosen security settings applied."""
        return harden_pod_spec(pod_spec) if self.pod_security == "restricted" else pod_spec

    def apply_resources(self, container: dict[str, Any]) -> None:
        """Write ``resources`` into the controller container when the user set them."""
        if self.resources is not None:
            container["resources"] = deep_copy(self.resources)


class OperatorKind(PlatformKind[DocT]):
    """An operator install: its objects, the job kinds it runs, its gang scheduler."""

    category: ClassVar[Category] = "operator"
    version: ClassVar[str] = ""
    """The upstream release the objects reproduce, e.g. ``v1.9.4``."""
    served: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(apiVersion, kind) of every custom resource every install of the kind runs; default
    none. A kind whose installs differ (enabled schemes) overrides :meth:`served_kinds`."""

    def served_kinds(self, resource: PlatformResource) -> tuple[tuple[str, str], ...]:
        """(apiVersion, kind) of every custom resource this install runs; default ``served``."""
        return self.served

    def serves(self, resource: PlatformResource, api_version: str, kind: str) -> bool:
        """Whether this install runs custom resources of ``api_version``/``kind``."""
        return (api_version, kind) in self.served_kinds(resource)

    def gang(self, resource: PlatformResource) -> GangScheduler | None:
        """The gang scheduler the install was configured with; None: gang scheduling off."""
        return None

    def describe(self, resource: PlatformResource) -> str:
        """``TrainingOperator 'kubeflow' (v1.9.4)`` for messages."""
        return f"{self.kind} {resource.name!r} ({self.version})"


RBAC_WILDCARD = errors.Rule(
    "operator.rbac_wildcard",
    "the operator is granted '*' on {granted}",
    hint="{fix}",
    severity=Severity.WARNING,
)
GANG_PREREQUISITE = errors.Rule(
    "operator.gang_prerequisite",
    "the operator stops at start unless the PodGroup CRD podgroups.{group} exists; {what} "
    "must be installed in the cluster",
    hint="install {what} before this stack (its CRD is not part of the operator)",
    severity=Severity.ADVICE,
)


def wildcard_findings(rules: Sequence[PolicyRule], path: str, fix: str) -> list[Finding]:
    """A warning when an install grants wildcard RBAC (only on explicit request)."""
    wild = [r for r in rules if r.is_wildcard]
    if not wild:
        return []
    granted = sorted(
        {f"{'/'.join(r.api_groups) or 'core'}: {', '.join(r.resources)}" for r in wild}
    )
    return [RBAC_WILDCARD.at(path, "upstream", granted="; ".join(granted), fix=fix)]


def gang_prerequisite(flag: str | None) -> list[Finding]:
    """Advice that a gang-scheduling operator needs its scheduler's PodGroup CRD first."""
    if not flag:
        return []
    scheduler = GangScheduler.from_flag(flag)
    group = "scheduling.volcano.sh" if scheduler.mechanism == "volcano" else "scheduling.x-k8s.io"
    what = "Volcano" if scheduler.mechanism == "volcano" else "scheduler-plugins (coscheduling)"
    return [GANG_PREREQUISITE.at("spec.gangScheduler", flag, group=group, what=what)]
