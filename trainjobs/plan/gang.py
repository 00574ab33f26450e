"""What an operator does when it gang-schedules a job, as data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "GROUP_NAME_ANNOTATION",
    "POD_GROUP_API_VERSIONS",
    "POD_GROUP_LABEL",
    "QUEUE_ANNOTATION",
    "TASK_SPEC_ANNOTATION",
    "GangFacts",
    "GangMember",
]

GROUP_NAME_ANNOTATION: Final = "scheduling.k8s.io/group-name"
"""A Volcano pod's PodGroup."""
TASK_SPEC_ANNOTATION: Final = "volcano.sh/task-spec"
"""A Volcano pod's task within its PodGroup."""
QUEUE_ANNOTATION: Final = "scheduling.volcano.sh/queue-name"
"""The Volcano queue of a job or PodGroup."""
POD_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
"""A scheduler-plugins (coscheduling) pod's PodGroup."""
POD_GROUP_API_VERSIONS: Final = {
    "volcano": "scheduling.volcano.sh/v1beta1",
    "scheduler-plugins": "scheduling.x-k8s.io/v1alpha1",
}
"""The apiVersion of a PodGroup, per gang mechanism."""


@dataclass(frozen=True)
class GangMember:
    """One replica type of a gang: its pods join the job's PodGroup.

    Attributes:
        role: the replica type (``Worker``, ``Launcher`` …), as in :class:`PodSet`.
        pods: how many pods it contributes.
        task: the Volcano task name its pods are annotated with (``volcano.sh/task-spec``);
            empty when the operator sets none.
    """

    role: str
    pods: int
    task: str = ""


@dataclass(frozen=True)
class GangFacts:
    """What a framework's operator does when it gang-schedules a job (kubeflow-operators.md §5).

    The generic gang mechanism (``platform.gang``) builds the PodGroup and decorates
    the pods from these facts alone, so no framework carries its own copy of it.

    Attributes:
        members: the replica types whose pods join the gang, in the order their pods
            count towards the computed ``minResources``.
        min_member: ``minMember`` when ``schedulingPolicy.minAvailable`` is unset.
        replace_scheduler_name: True when the operator overwrites a template's own
            ``schedulerName`` (MPI Operator); False when it keeps it (Training Operator).
        default_queue: the Volcano queue when ``schedulingPolicy.queue`` is unset (the
            Training Operator says ``default``); empty: none.
        queue_annotation: True when the job's annotation ``scheduling.volcano.sh/queue-name``
            names the Volcano queue before the default (MPI Operator).
        priority_roles: roles whose template ``priorityClassName`` becomes the PodGroup's
            when ``schedulingPolicy.priorityClass`` is unset, first found wins.
        default_timeout: ``scheduleTimeoutSeconds`` of a scheduler-plugins PodGroup when the
            policy sets none; None: left out.
        started_late: roles the operator creates only once the other pods are Ready
            (the MPI launcher with ``WaitForWorkersReady``); a gang that waits for them
            would never start.
        unsupported: why the job cannot be gang-scheduled at all; empty: it can.
    """

    members: tuple[GangMember, ...]
    min_member: int
    replace_scheduler_name: bool = False
    default_queue: str = "default"
    queue_annotation: bool = False
    priority_roles: tuple[str, ...] = ()
    default_timeout: int | None = None
    started_late: tuple[str, ...] = ()
    unsupported: str = ""

    @property
    def pods(self) -> int:
        """Every pod of the job."""
        return sum(m.pods for m in self.members)
