"""What owns a job's pods on each target, and what a capability puts on that owner.

A queue admits a job through the object that owns its pods, and which object that is
depends on what the target makes: the custom resource itself on the ``operator`` and
``trainer`` targets (its operator makes the rest), bare Pods on the ``pods`` target for
most kinds, the batch Jobs a JobSet would make (a TrainJob on the ``pods`` target), the
JobSet (a TrainJob on the ``jobset`` target). A framework states the owner per target
(:attr:`JobPlan.pod_owners <trainjobs.plan.JobPlan.pod_owners>`); a capability acts on
it: labels on the resource (``JobPlan.with_labels``), on the pod templates
(``JobPlan.with_templates``), or an :class:`Admission` of the Jobs or JobSet the
framework makes (``JobPlan.with_admission``), which the target applies to them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from trainjobs.k8s.data import Manifest

__all__ = [
    "ADMITTED_LABELS",
    "DEFAULT_POD_OWNERS",
    "OWNER_KINDS",
    "POD_GROUP_COUNT",
    "POD_GROUP_LABEL",
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "Admission",
    "PodOwner",
]

PodOwner = Literal["resource", "trainjob", "pods", "jobs", "jobset"]
"""What owns a job's pods on a target: ``resource``, the job's custom resource;
``trainjob``, the TrainJob the ``trainer`` target makes of it; ``pods``, nothing (bare
Pods made from the pod templates); ``jobs``, the batch Jobs the framework makes;
``jobset``, the JobSet it makes."""

DEFAULT_POD_OWNERS: Final[Mapping[str, PodOwner]] = MappingProxyType(
    {"operator": "resource", "trainer": "trainjob", "pods": "pods"}
)
"""The owners of a Kubeflow v1 kind's pods: its operator's resource, the TrainJob made
of it, and on the ``pods`` target none (but see :attr:`JobPlan.job_roles
<trainjobs.plan.JobPlan.job_roles>`)."""

QUEUE_LABEL: Final = "kueue.x-k8s.io/queue-name"
"""The Kueue LocalQueue a workload is admitted through."""
PRIORITY_LABEL: Final = "kueue.x-k8s.io/priority-class"
"""The Kueue workload priority class of a workload."""
POD_GROUP_LABEL: Final = "kueue.x-k8s.io/pod-group-name"
"""The Kueue pod group a bare pod belongs to (Kueue's pod integration admits the group)."""
POD_GROUP_COUNT: Final = "kueue.x-k8s.io/pod-group-total-count"
"""The annotation giving a Kueue pod group's size: admitted only once that many exist."""
ADMITTED_LABELS: Final = (QUEUE_LABEL, PRIORITY_LABEL)
"""Labels by which Kueue (v0.19.2) admits a workload: its LocalQueue and priority class.
A TrainJob that carries them itself has them carried to what owns its pods
(:meth:`Admission.carried`)."""

OWNER_KINDS: Final[Mapping[PodOwner, tuple[str, str]]] = MappingProxyType(
    {"jobs": ("batch/v1", "Job"), "jobset": ("jobset.x-k8s.io/v1alpha2", "JobSet")}
)
"""``(apiVersion, kind)`` of the owners the framework makes as finished objects."""


@dataclass(frozen=True)
class Admission:
    """What a capability puts on the Jobs or JobSet that own a job's pods.

    Attributes:
        labels: labels added after the object's own (a queue's name); default none.
        suspend: True when the objects are created suspended and the capability's
            controller resumes them once it admits the job; default False (their
            ``suspend`` is the framework's).
    """

    labels: Mapping[str, str] = field(default_factory=dict)
    suspend: bool = False

    @classmethod
    def carried(cls, labels: Mapping[str, str]) -> Admission:
        """The admission a job's own ``labels`` ask for: those a queue admits by
        (:data:`ADMITTED_LABELS`), in their order."""
        return cls({k: v for k, v in labels.items() if k in ADMITTED_LABELS})

    @property
    def queued(self) -> bool:
        """Whether a queue admits (and so resumes) the objects: they name a LocalQueue."""
        return QUEUE_LABEL in self.labels

    def merged(self, labels: Mapping[str, str], suspend: bool = False) -> Admission:
        """This admission with ``labels`` added (theirs win) and ``suspend`` or'ed in."""
        return Admission({**self.labels, **labels}, self.suspend or suspend)

    def apply(self, manifest: Manifest, owner: PodOwner) -> Manifest:
        """``manifest`` with the admission applied when it is an object of ``owner``
        (:data:`OWNER_KINDS`); any other object unchanged."""
        if (manifest.get("apiVersion"), manifest.get("kind")) != OWNER_KINDS.get(owner):
            return manifest
        if not self.labels and not self.suspend:
            return manifest
        metadata: dict[str, Any] = dict(manifest.get("metadata") or {})
        metadata["labels"] = {**(metadata.get("labels") or {}), **self.labels}
        out = {**manifest, "metadata": metadata}
        if self.suspend:
            out["spec"] = {**(manifest.get("spec") or {}), "suspend": True}
        return out
