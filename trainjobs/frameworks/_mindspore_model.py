"""The MSJob model (2020 ms-operator, kubeflow.org/v1) and its naming constants.

Split from ``mindspore`` (the plugin) so its rules (``_mindspore_rules``) read the
model without importing the plugin: no import circle.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trainjobs.k8s.data import PodTemplate
from trainjobs.k8s.model import JobResource, K8sModel

__all__ = [
    "DEFAULT_IMAGE",
    "ENV_ORDER",
    "NAME_PREFIX",
    "MSJob",
    "MSJobSpec",
    "MSReplicaSpec",
    "MasterSpec",
    "ReplicaType",
    "TerminationPolicy",
]


DEFAULT_IMAGE = "mindspore/mindspore:v0.1.0-alpha"
"""Upstream's default ``msImage`` (recorded, never used for a pod)."""
ENV_ORDER = ("MS_CONFIG", "MASTER_PORT", "MASTER_ADDR", "WORLD_SIZE", "RANK")
NAME_PREFIX = 40
"""Upstream truncates the job name to 40 characters in object names."""

ReplicaType = Literal["MASTER", "WORKER"]


class MSReplicaSpec(K8sModel):
    """One entry of ``spec.replicaSpecs``."""

    replicas: int | None = Field(default=None, ge=0, description="Pods of this type; default 1.")
    template: PodTemplate = Field(description="The pod template (core/v1 PodTemplateSpec).")
    master_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="Port of this type's Services and its MASTER_PORT; default 23456.",
    )
    replica_type: ReplicaType | None = Field(
        default=None, description="MASTER (rank 0, exactly one) or WORKER; default MASTER."
    )


class MasterSpec(K8sModel):
    """``spec.terminationPolicy.master``: the replica whose exit ends the job."""

    replica_name: str | None = Field(default=None, description="Replica type; default MASTER.")
    replica_rank: int | None = Field(default=None, ge=0, description="Its rank; default 0.")


class TerminationPolicy(K8sModel):
    """``spec.terminationPolicy``."""

    master: MasterSpec | None = Field(default=None, description="Default MASTER rank 0.")


class MSJobSpec(K8sModel):
    """``spec`` of a 2020 MSJob."""

    runtime_id: str | None = Field(
        default=None,
        alias="RuntimeId",
        description=(
            "Id in every object name (key spelt as upstream); default 4 characters "
            "derived from namespace/name."
        ),
    )
    replica_specs: list[MSReplicaSpec] = Field(description="MASTER and WORKER specs. Required.")
    ms_image: str | None = Field(
        default=None, description=f"Recorded only; default {DEFAULT_IMAGE}."
    )
    termination_policy: TerminationPolicy | None = Field(
        default=None, description="Default master MASTER rank 0."
    )
    scheduler_name: str | None = Field(
        default=None, description="Scheduler of every pod (replaces the template's); default none."
    )
    backend: str | None = Field(
        default=None,
        description=(
            "Not part of the upstream API (the seed example set 'tcp'; the operator dropped "
            "it). Accepted for that example: 'tcp' is what the operator does anyway."
        ),
    )
    master_port: int | str | None = Field(
        default=None,
        description=(
            "Not part of the upstream API (the seed example set it here; the operator "
            "dropped it). Applied to every replica spec without masterPort."
        ),
    )


class MSJob(JobResource):
    """A 2020 MSJob exactly as kubeflow.org/v1 (ms-operator) accepts it."""

    api_version: Literal["kubeflow.org/v1"] = "kubeflow.org/v1"
    kind: Literal["MSJob"] = "MSJob"
    spec: MSJobSpec
