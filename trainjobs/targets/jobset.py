"""The ``jobset`` target: the objects Kubeflow Trainer's controller would create.

For a TrainJob that is the JobSet (and, by ML policy, the MPI ssh Secret and hostfile
ConfigMap, the PodGroup): only the JobSet controller is needed on the cluster, not the
Trainer. The framework states the :class:`JobSetPlan` (``TargetInput.jobset``, on the plan);
this module writes its objects, and adds the plan's admission (a queue's label, or the
one the TrainJob carries) to the JobSet when that owns the pods.
"""

from __future__ import annotations

from typing import Any, Final

from trainjobs.k8s.data import Manifest, deep_copy
from trainjobs.plan import JobPlan
from trainjobs.plan.gang import POD_GROUP_API_VERSIONS
from trainjobs.plan.jobset import JobSetPlan, MpiFiles, PodGroupPlan
from trainjobs.plan.objects import ConfigMapPlan, SshKeySecretPlan
from trainjobs.targets.base import Rendered, TargetPlugin, stated
from trainjobs.targets.objects import object_manifest

__all__ = ["JOBSET_API_VERSION", "JobSetTarget", "jobset_manifest", "jobset_objects"]

JOBSET_API_VERSION: Final = "jobset.x-k8s.io/v1alpha2"


def jobset_manifest(jobset: JobSetPlan) -> Manifest:
    """The JobSet object of ``jobset``."""
    metadata: dict[str, Any] = {"name": jobset.name, "namespace": jobset.namespace}
    if jobset.labels:
        metadata["labels"] = dict(jobset.labels)
    if jobset.annotations:
        metadata["annotations"] = dict(jobset.annotations)
    return {
        "apiVersion": JOBSET_API_VERSION,
        "kind": "JobSet",
        "metadata": metadata,
        "spec": deep_copy(jobset.spec),
    }


def _mpi_objects(files: MpiFiles, namespace: str) -> list[Manifest]:
    # The Trainer makes its key Secret immutable and labels neither object.
    secret = SshKeySecretPlan(files.secret, immutable=True)
    config_map = ConfigMapPlan(files.config_map, {files.hostfile_key: files.hostfile})
    return [object_manifest(secret, namespace), object_manifest(config_map, namespace)]


def _pod_group(group: PodGroupPlan, name: str, namespace: str) -> Manifest:
    return {
        "apiVersion": POD_GROUP_API_VERSIONS[group.mechanism],
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": deep_copy(group.spec),
    }


def jobset_objects(jobset: JobSetPlan) -> list[Manifest]:
    """Every object of ``jobset`` in apply order: the MPI Secret and hostfile ConfigMap,
    the PodGroup, the JobSet."""
    objects: list[Manifest] = []
    if jobset.mpi is not None:
        objects += _mpi_objects(jobset.mpi, jobset.namespace)
    if jobset.pod_group is not None:
        objects.append(_pod_group(jobset.pod_group, jobset.name, jobset.namespace))
    objects.append(jobset_manifest(jobset))
    return objects


class JobSetTarget(TargetPlugin):
    name = "jobset"
    description = "the JobSet (and its Secret, ConfigMap, PodGroup) the Trainer controller makes"
    takes_over = True

    def render(self, plan: JobPlan) -> Rendered:
        given = stated(plan, self.name)
        jobset, findings = given.jobset, list(given.findings)
        if jobset is None:
            return [], findings
        owner = plan.pod_owner(self.name)
        admission = plan.admission
        return [admission.apply(m, owner) for m in jobset_objects(jobset)], findings
