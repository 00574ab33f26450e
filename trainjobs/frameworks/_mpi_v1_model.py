"""The MPIJob model of kubeflow.org/v1 (Training Operator v1.9.4).

Split from ``mpi_v1`` (the plugin) so what the operator creates (``mpi_v1_pods``) reads
the model without importing the plugin: no import circle.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trainjobs.frameworks.kubeflow_v1 import (
    ReplicaSpec,
    RunPolicy,
    V1Job,
)
from trainjobs.k8s.model import K8sModel

__all__ = ["MPIJobV1", "MPIJobV1Spec"]


class MPIJobV1Spec(K8sModel):
    """``spec`` of an MPIJob ``kubeflow.org/v1``."""

    slots_per_worker: int | None = Field(
        default=None, ge=0, description="MPI slots (ranks) per worker in the hostfile; default 1."
    )
    clean_pod_policy: Literal["All", "Running", "None"] | None = Field(
        default=None,
        description=(
            "Deprecated: use runPolicy.cleanPodPolicy. The operator keeps the two equal; "
            "runPolicy's wins when both are set. Default None."
        ),
    )
    mpi_replica_specs: dict[str, ReplicaSpec] = Field(
        description="Launcher (exactly 1) and Worker (default 0); restartPolicy default Never."
    )
    main_container: str | None = Field(
        default=None,
        description="Container kubectl exec runs ranks in (--container); default the pod's first.",
    )
    run_policy: RunPolicy | None = Field(default=None, description="Run and clean-up policy.")


class MPIJobV1(V1Job):
    """An MPIJob exactly as ``kubeflow.org/v1`` (Training Operator v1.9.4) accepts it."""

    kind: Literal["MPIJob"] = "MPIJob"
    spec: MPIJobV1Spec
