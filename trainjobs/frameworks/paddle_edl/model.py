"""The PaddlePaddle EDL ``TrainingJob`` (``paddlepaddle.org/v1``) as its controller read it.

Spellings are upstream's, odd ones included: ``ports_num``, ``fault_tolerant``,
``min-instance``, ``etcd-endpoint``, ``VolumeMounts`` and ``HostNetwork`` (its Go
tag was misspelt, so the key is the field name). Also accepted, as the later CRD
variant and Go's case-insensitive decoding allowed: ``host_network``,
``hostNetwork`` and ``volumeMounts`` (re-emitted in the canonical spelling),
``NodeSelector``, ``trainer.etcd-endpoint`` and the controller-written
``replicaSpec`` (dropped, like ``status``).

Facts: seed-systems.md §3.1 [EDL pkg/resource/training_job.go; EDLB types.go].
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from trainjobs.k8s.model import JobResource, K8sModel
from trainjobs.k8s.structural import kubernetes_type

__all__ = [
    "DEFAULT_IMAGE",
    "DEFAULT_PASSES",
    "DEFAULT_PORT",
    "DEFAULT_PORTS_NUM",
    "DEFAULT_PORTS_NUM_FOR_SPARSE",
    "MasterSpec",
    "PserverSpec",
    "Quantity",
    "ResourceRequirements",
    "TrainerSpec",
    "TrainingJob",
    "TrainingJobSpec",
]

DEFAULT_IMAGE = "paddlepaddle/paddlecloud-job"
DEFAULT_PORT = 7164
DEFAULT_PORTS_NUM = 1
DEFAULT_PORTS_NUM_FOR_SPARSE = 1
DEFAULT_PASSES = 1

Quantity = int | float | str
"""A resource quantity as YAML gives it: ``2``, ``0.5`` or ``"500m"``."""

Volume = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.Volume")]
VolumeMount = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.VolumeMount")]
LocalObjectReference = Annotated[
    dict[str, Any], kubernetes_type("io.k8s.api.core.v1.LocalObjectReference")
]

# Spellings Go's case-insensitive JSON decoding let through, and the canonical key each
# stands for (seed-systems.md §3.1 HostNetwork note, UNCONFIRMED upstream).
_CASE_VARIANTS = {"hostNetwork": "HostNetwork", "volumeMounts": "VolumeMounts"}


class ResourceRequirements(K8sModel):
    """core/v1 ResourceRequirements of one component's container."""

    limits: dict[str, Quantity] | None = Field(
        default=None, description="Most of each resource the container may use; default none."
    )
    requests: dict[str, Quantity] | None = Field(
        default=None,
        description="Resources reserved for the container; default the limits (Kubernetes).",
    )
    claims: list[dict[str, Any]] | None = Field(
        default=None, description="Dynamic resource claims used by the container; default none."
    )


Resources = Annotated[
    ResourceRequirements, kubernetes_type("io.k8s.api.core.v1.ResourceRequirements")
]


class TrainerSpec(K8sModel):
    """``spec.trainer``: the trainers, the only component EDL scales."""

    entrypoint: str | None = Field(
        default=None,
        description="Shell command each trainer runs (env ENTRY, run as sh -c). Required.",
    )
    workspace: str | None = Field(
        default=None,
        description="Folder the trainer changes into and puts on PYTHONPATH "
        "(env TRAINER_PACKAGE); default ''.",
    )
    min_instance: int = Field(
        alias="min-instance",
        ge=1,
        le=100_000,
        description="Trainers started (Job parallelism; env TRAINERS). Required.",
    )
    max_instance: int | None = Field(
        default=None,
        alias="max-instance",
        ge=0,
        le=100_000,
        description="Most trainers the autoscaler may run; the job is elastic when it is "
        "above min-instance. Default: not elastic.",
    )
    resources: Resources | None = Field(
        default=None, description="Resources of each trainer; GPUs make it a GPU job."
    )
    passes: int | None = Field(
        default=None,
        description="Ignored, as upstream ignored it: the examples put passes here by "
        "mistake; the number of passes is spec.passes.",
    )
    etcd_endpoint: str | None = Field(
        default=None, alias="etcd-endpoint", description="Never read (CRD variant only)."
    )
    replica_spec: Any = Field(
        default=None,
        exclude=True,
        description="Written by the CRD-variant controller; ignored and dropped.",
    )


class PserverSpec(K8sModel):
    """``spec.pserver``: the parameter servers (a fixed number; they never scale)."""

    min_instance: int = Field(
        alias="min-instance",
        ge=1,
        le=100_000,
        description="Parameter servers started (ReplicaSet replicas; env PSERVERS). Required.",
    )
    max_instance: int | None = Field(
        default=None,
        alias="max-instance",
        ge=0,
        le=100_000,
        description="Never read: parameter servers do not scale.",
    )
    resources: Resources | None = Field(
        default=None, description="Resources of each parameter server."
    )
    replica_spec: Any = Field(
        default=None,
        exclude=True,
        description="Written by the CRD-variant controller; ignored and dropped.",
    )


class MasterSpec(K8sModel):
    """``spec.master``: the task master (with its etcd) of a fault-tolerant job."""

    etcd_endpoint: str | None = Field(
        default=None,
        alias="etcd-endpoint",
        description="Never read: the etcd in the master pod is used.",
    )
    resources: Resources | None = Field(
        default=None, description="Resources of the master container (not its etcd)."
    )
    replica_spec: Any = Field(
        default=None,
        exclude=True,
        description="Written by the CRD-variant controller; ignored and dropped.",
    )


class TrainingJobSpec(K8sModel):
    """``spec`` of a TrainingJob."""

    image: str | None = Field(
        default=None, description=f"Image of every job container; default {DEFAULT_IMAGE}."
    )
    port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description=f"First job port (env PADDLE_INIT_PORT); unset or 0: {DEFAULT_PORT}.",
    )
    ports_num: int | None = Field(
        default=None,
        alias="ports_num",
        ge=0,
        le=65535,
        description=f"Dense ports after port; unset or 0: {DEFAULT_PORTS_NUM}.",
    )
    ports_num_for_sparse: int | None = Field(
        default=None,
        alias="ports_num_for_sparse",
        ge=0,
        le=65535,
        description=f"Sparse ports after those; unset or 0: {DEFAULT_PORTS_NUM_FOR_SPARSE}.",
    )
    fault_tolerant: bool | None = Field(
        default=None,
        alias="fault_tolerant",
        description="true: the master and etcd coordinate (start_new_* commands) and the "
        "trainers may scale. Default false.",
    )
    passes: int | None = Field(
        default=None,
        ge=0,
        description=f"Passes over the data (env PADDLE_INIT_NUM_PASSES); unset or 0: "
        f"{DEFAULT_PASSES}.",
    )
    volumes: list[Volume] | None = Field(
        default=None, description="Volumes of every job pod; default none."
    )
    volume_mounts: list[VolumeMount] | None = Field(
        default=None,
        alias="VolumeMounts",
        description="Mounts of the trainer and master containers (not the pservers); default none.",
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None, description="Pull secrets of every job pod; default none."
    )
    host_network: bool | None = Field(
        default=None,
        alias="HostNetwork",
        description="true: every job pod uses the node's network; default false.",
    )
    node_selector: dict[str, str] | None = Field(
        default=None,
        alias="NodeSelector",
        description="Node labels every job pod requires (CRD variant); default none.",
    )
    trainer: TrainerSpec = Field(description="The trainers. Required.")
    pserver: PserverSpec = Field(description="The parameter servers. Required.")
    master: MasterSpec | None = Field(default=None, description="The master; default empty.")

    @model_validator(mode="before")
    @classmethod
    def _canonical_spelling(cls, data: Any) -> Any:
        """``hostNetwork``/``volumeMounts`` → the canonical keys, unless both are given."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for variant, canonical in _CASE_VARIANTS.items():
            if variant in out and canonical not in out:
                out[canonical] = out.pop(variant)
        return out


class TrainingJob(JobResource):
    """A TrainingJob exactly as the EDL controller accepts it."""

    api_version: Literal["paddlepaddle.org/v1"] = "paddlepaddle.org/v1"
    kind: Literal["TrainingJob"] = "TrainingJob"
    spec: TrainingJobSpec
