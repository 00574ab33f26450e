"""The MPIJob model (kubeflow.org/v2beta1, MPI Operator v0.8) and the defaults it reads.

Split from ``mpi`` (the plugin) so what the operator creates (``mpi_pods``) reads the
model without importing the plugin: no import circle.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trainjobs.frameworks.kubeflow_v1 import ReplicaSpec, RunPolicy
from trainjobs.k8s.model import JobResource, K8sModel

__all__ = [
    "MULTIKUEUE_MANAGER",
    "OPERATOR_MANAGER",
    "REPLICA_DEFAULTS",
    "ROOT_SSH_PATH",
    "MPIJob",
    "MPIJobSpec",
    "MPIRunPolicy",
]

OPERATOR_MANAGER = "kubeflow.org/mpi-operator"
MULTIKUEUE_MANAGER = "kueue.x-k8s.io/multikueue"
REPLICA_DEFAULTS = {"Launcher": (1, "OnFailure"), "Worker": (0, "Never")}
"""Replicas and restartPolicy the operator fills in per replica type."""
ROOT_SSH_PATH = "/root/.ssh"
"""Where container[0] mounts the SSH key pair when ``sshAuthMountPath`` is unset."""


class MPIRunPolicy(RunPolicy):
    """How the MPI Operator runs and cleans up the job (``spec.runPolicy``).

    ``ttlSecondsAfterFinished``, ``activeDeadlineSeconds`` and ``backoffLimit``
    are copied onto the launcher's batch/v1 Job.
    """

    managed_by: str | None = Field(
        default=None,
        description=(
            f"Controller that owns the job: {OPERATOR_MANAGER} (default) or "
            f"{MULTIKUEUE_MANAGER}, which makes this cluster's operator skip it."
        ),
    )


class MPIJobSpec(K8sModel):
    """``spec`` of an MPIJob ``kubeflow.org/v2beta1``."""

    slots_per_worker: int | None = Field(
        default=None, ge=0, description="MPI slots (ranks) per worker in the hostfile; default 1."
    )
    run_launcher_as_worker: bool | None = Field(
        default=None,
        description="The launcher also runs ranks (first line of the hostfile); default false.",
    )
    run_policy: MPIRunPolicy | None = Field(default=None, description="Run and clean-up policy.")
    mpi_replica_specs: dict[str, ReplicaSpec] = Field(
        description=(
            "Launcher (exactly 1 replica, restartPolicy default OnFailure) and Worker "
            "(restartPolicy default Never); restartPolicy Never or OnFailure only."
        )
    )
    ssh_auth_mount_path: str | None = Field(
        default=None,
        description=f"Where container[0] mounts the SSH key pair; default {ROOT_SSH_PATH}.",
    )
    launcher_creation_policy: Literal["AtStartup", "WaitForWorkersReady"] | None = Field(
        default=None,
        description=(
            "AtStartup (default) starts the launcher with the workers; WaitForWorkersReady "
            "once every worker pod is Ready."
        ),
    )
    mpi_implementation: Literal["OpenMPI", "Intel", "MPICH"] | None = Field(
        default=None,
        description="Decides the hostfile format and launcher env; default OpenMPI.",
    )


class MPIJob(JobResource):
    """An MPIJob exactly as ``kubeflow.org/v2beta1`` (MPI Operator v0.8) accepts it."""

    api_version: Literal["kubeflow.org/v2beta1"] = "kubeflow.org/v2beta1"
    kind: Literal["MPIJob"] = "MPIJob"
    spec: MPIJobSpec

    def replicas(self, rtype: str) -> int:
        """Replicas of ``rtype``, unset ones as the operator defaults them; 0 when absent."""
        spec = self.spec.mpi_replica_specs.get(rtype)
        if spec is None:
            return 0
        return (
            spec.replicas if spec.replicas is not None else REPLICA_DEFAULTS.get(rtype, (0, ""))[0]
        )
