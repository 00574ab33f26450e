"""The Caffe2Job model: what the archived Caffe2 operator accepts.

Split from ``caffe2`` (the plugin) so its rules (``_caffe2_rules``) read the model
without importing the plugin: no import circle.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PrivateAttr

from trainjobs.k8s.data import PodTemplate
from trainjobs.k8s.model import JobResource, K8sModel

__all__ = [
    "BackendType",
    "Caffe2BackendSpec",
    "Caffe2Job",
    "Caffe2JobSpec",
    "Caffe2ReplicaSpec",
    "ChiefSpec",
    "TerminationPolicy",
]


BackendType = Literal["none", "redis", "nfs"]


class Caffe2BackendSpec(K8sModel):
    """``spec.backendSpecs``: how the workers find each other."""

    backend_type: BackendType | None = Field(
        default=None,
        description=(
            "none, redis or nfs; default none for one replica, redis otherwise. "
            "(There is no gloo type.)"
        ),
    )
    nfs_path: str | None = Field(
        default=None, description="Shared directory for the nfs backend (NFS_PATH); default ''."
    )
    redis_host: str | None = Field(
        default=None, description="Redis host for the redis backend (REDIS_HOST); default ''."
    )
    redis_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="Redis port for the redis backend (REDIS_PORT); default 0.",
    )


class Caffe2ReplicaSpec(K8sModel):
    """``spec.replicaSpecs``: a single spec of identical workers (not a list or map)."""

    replicas: int | None = Field(
        default=None, ge=0, description="Number of workers (NUM_SHARDS); default 1."
    )
    template: PodTemplate = Field(
        description=(
            "The workers' pod template (core/v1 PodTemplateSpec), passed through unchanged; "
            "restartPolicy defaults to Never."
        )
    )


class ChiefSpec(K8sModel):
    """``spec.terminationPolicy.chief``: stored by the controller, never consulted."""

    replica_name: str | None = Field(default=None, description="Default 'WORKER'.")
    replica_index: int | None = Field(default=None, ge=0, description="Default 0.")


class TerminationPolicy(K8sModel):
    """``spec.terminationPolicy``: which worker's exit ends the job (not enforced upstream)."""

    chief: ChiefSpec | None = Field(default=None, description="The chief worker.")


class Caffe2JobSpec(K8sModel):
    """``spec`` of a Caffe2Job."""

    runtime_id: str | None = Field(
        default=None,
        alias="RuntimeID",
        description=(
            "Run id (RUN_ID, label runtime_id); the key is capitalised as upstream wrote it. "
            "Default: 10 digits derived from namespace/name."
        ),
    )
    backend_specs: Caffe2BackendSpec | None = Field(
        default=None, description="Rendezvous backend; default none (1 replica) or redis."
    )
    replica_specs: Caffe2ReplicaSpec = Field(description="The workers. Required.")
    termination_policy: TerminationPolicy | None = Field(
        default=None, description="Default chief WORKER/0 (never consulted upstream)."
    )


class Caffe2Job(JobResource):
    """A Caffe2Job exactly as kubeflow.org/v1alpha1 accepts it."""

    api_version: Literal["kubeflow.org/v1alpha1"] = "kubeflow.org/v1alpha1"
    kind: Literal["Caffe2Job"] = "Caffe2Job"
    spec: Caffe2JobSpec

    # backendSpecs a named backend replaced (the user wrote a host or path): for a warning.
    _replaced_backend: Caffe2BackendSpec | None = PrivateAttr(default=None)

    @property
    def replaced_backend(self) -> Caffe2BackendSpec | None:
        """The ``backendSpecs`` the user wrote, when a backend named in the options replaced it."""
        return self._replaced_backend
