"""The JobSet plan: what a job's operator has a JobSet controller run, as data.

A TrainJob's framework works out what the Trainer controller would create (the
replicated jobs with their pod templates, and, by ML and gang policy, the MPI files
and the PodGroup); the ``jobset`` target writes those objects, and the ``pods`` target
chains on to what the JobSet controller makes of the JobSet (``targets.jobset_pods``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["JobSetPlan", "MpiFiles", "PodGroupPlan"]


@dataclass(frozen=True)
class MpiFiles:
    """The SSH key pair Secret and the hostfile ConfigMap the Trainer makes for an MPI job.

    Attributes:
        secret: the Secret's name (``<job>-mpi-ssh-auth``); its keys are placeholders the
            stack generates, never a key in the render.
        config_map: the ConfigMap's name (``<job>-mpi-hostfile``).
        hostfile_key: the ConfigMap key holding the hostfile (``hostfile``).
        hostfile: the hostfile's text, one ``<host> slots=<n>`` line per node.
    """

    secret: str
    config_map: str
    hostfile_key: str
    hostfile: str


@dataclass(frozen=True)
class PodGroupPlan:
    """The PodGroup the Trainer makes for a gang policy.

    Attributes:
        mechanism: ``volcano`` or ``scheduler-plugins`` (coscheduling), which names the
            PodGroup's API group.
        spec: the PodGroup's spec (``minMember``, ``minResources`` …), as plain data.
    """

    mechanism: Literal["volcano", "scheduler-plugins"]
    spec: Mapping[str, Any]


@dataclass(frozen=True)
class JobSetPlan:
    """The JobSet an operator makes for a job, and what it makes beside it.

    Attributes:
        name: the JobSet's name (the job's).
        namespace: the JobSet's namespace.
        spec: the JobSet's spec, as plain data (replicated jobs with their pod templates,
            network, success policy …).
        labels: the JobSet's labels; default none.
        annotations: the JobSet's annotations; default none.
        mpi: the MPI Secret and hostfile, for an MPI job; None (default): none.
        pod_group: the PodGroup of a gang policy; None (default): none.
    """

    name: str
    namespace: str
    spec: Mapping[str, Any]
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    mpi: MpiFiles | None = None
    pod_group: PodGroupPlan | None = None
