"""The JobSet plan: what a job's operator has a JobSet controller run, as data.

A TrainJob's framework works out what the Trainer controller would create (the
replicated jobs with their pod templates, and, by ML and gang policy, the MPI files
and the PodGroup); the ``jobset`` target writes those objects, and the ``pods`` target
chains on to what the JobSet controller makes of the JobSet (``targets.jobset_pods``).

The JobSet v0.12.0 controller's rules that both read live here too: the defaults its
webhook and CRD apply (:func:`defaulted_spec`), the names of its Jobs
(:func:`job_name`), the volumes its ``volumeClaimPolicies`` add (:func:`claim_volumes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from trainjobs.k8s.data import deep_copy

__all__ = [
    "JobSetPlan",
    "MpiFiles",
    "PodGroupPlan",
    "claim_volumes",
    "defaulted_spec",
    "job_name",
]


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
        source_path: where findings about the JobSet's pods point in the user's
            document (a TrainJob's ``spec.runtimeRef``); empty (default): at the JobSet.
        source: what the JobSet's spec comes from, said before a finding's own path
            (``runtime 'torch-distributed' spec.template.spec.``); default empty.
    """

    name: str
    namespace: str
    spec: Mapping[str, Any]
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    mpi: MpiFiles | None = None
    pod_group: PodGroupPlan | None = None
    source_path: str = ""
    source: str = ""


def job_name(jobset: str, replicated_job: str, index: int) -> str:
    """``<jobset>-<replicatedJob>-<index>`` (``placement.GenJobName``)."""
    return f"{jobset}-{replicated_job}-{index}"


def defaulted_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A JobSet's spec with the defaults its webhook and CRD apply (a copy)."""
    spec = deep_copy(spec)
    spec.setdefault("successPolicy", {"operator": "All"})
    spec.setdefault("startupPolicy", {"startupPolicyOrder": "AnyOrder"})
    for rjob in spec.get("replicatedJobs") or []:
        rjob.setdefault("groupName", "default")
        rjob.setdefault("replicas", 1)
        job_spec = rjob.setdefault("template", {}).setdefault("spec", {})
        job_spec.setdefault("completionMode", "Indexed")
        pod_spec = job_spec.setdefault("template", {}).setdefault("spec", {})
        pod_spec.setdefault("restartPolicy", "OnFailure")
    network = spec.setdefault("network", {})
    network.setdefault("enableDNSHostnames", True)
    network.setdefault("publishNotReadyAddresses", True)
    failure = spec.get("failurePolicy")
    if isinstance(failure, dict):
        failure.setdefault("restartStrategy", "Recreate")
        for index, rule in enumerate(failure.get("rules") or []):
            if isinstance(rule, dict) and not rule.get("name"):
                rule["name"] = f"failurePolicyRule{index}"
    for policy in spec.get("volumeClaimPolicies") or []:
        if isinstance(policy, dict):
            policy.setdefault("retentionPolicy", {"whenDeleted": "Delete"})
    return spec


def _mounts(pod_spec: Mapping[str, Any]) -> set[str]:
    names = set()
    for key in ("containers", "initContainers"):
        for container in pod_spec.get(key) or []:
            for mount in (
                (container.get("volumeMounts") or []) if isinstance(container, dict) else []
            ):
                names.add(mount.get("name"))
    return names


def claim_volumes(
    jobset: str, spec: Mapping[str, Any], pod_spec: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The volumes JobSet adds to a pod spec for the ``volumeClaimPolicies`` of the JobSet
    ``jobset`` (its name) with ``spec``: one per claim template a container mounts, the
    PVC ``<claim>-<jobset>``."""
    used = _mounts(pod_spec)
    out = []
    for policy in spec.get("volumeClaimPolicies") or []:
        for claim in policy.get("templates") or []:
            claim_name = (claim.get("metadata") or {}).get("name")
            if claim_name in used:
                out.append(
                    {
                        "name": claim_name,
                        "persistentVolumeClaim": {"claimName": f"{claim_name}-{jobset}"},
                    }
                )
    return out
