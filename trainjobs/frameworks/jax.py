"""JAX: the JAXJob (kubeflow.org/v1) and the env ``jax.distributed.initialize`` reads.

Workers only; worker 0 hosts the coordinator. The JAXJob webhook does not check
``runPolicy.managedBy`` and its controller ignores the field.

Facts: kubeflow-operators.md §1, §2.4, §3, §4.5 (Training Operator v1.9.4,
pkg/controller.v1/jax).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from trainjobs.frameworks.capabilities import Addresses
from trainjobs.frameworks.kubeflow_v1 import (
    V1_WEBHOOK_RULES,
    KubeflowV1Framework,
    ReplicaSpec,
    V1Job,
    V1JobSpec,
    env_var,
)
from trainjobs.plan import SuccessPolicy

__all__ = ["FRAMEWORK", "JAX", "JAXJob", "JAXJobSpec"]


class JAXJobSpec(V1JobSpec):
    """``spec`` of a JAXJob."""

    jax_replica_specs: dict[str, ReplicaSpec] = Field(
        description="Replica types (Worker only) and their pods."
    )


class JAXJob(V1Job):
    """A JAXJob exactly as kubeflow.org/v1 accepts it."""

    kind: Literal["JAXJob"] = "JAXJob"
    spec: JAXJobSpec


class JAX(KubeflowV1Framework[JAXJob], Addresses):
    """Multi-process JAX: one process per Worker pod, coordinated by worker 0."""

    name = "jax"
    title = "JAX (JAXJob)"
    # The JAXJob webhook does not call util.ValidateRunPolicy.
    webhook_rules = V1_WEBHOOK_RULES
    replica_types = ("Worker",)
    default_port = 6666
    default_restart_policy = "Never"
    webhook_checks_managed_by = False
    reconciled_managed_by = None  # its controller never reads managedBy
    success_rule = "when every Worker succeeds"

    def success_policy(self, job: JAXJob) -> SuccessPolicy:
        return SuccessPolicy(roles=("Worker",), summary="every Worker succeeds")

    def is_master(self, job: JAXJob, rtype: str, index: int) -> bool:
        return index == 0

    def cluster_envs(self, job: JAXJob) -> Callable[[str, int], list[dict[str, Any]]]:
        port = str(self.port_of(job, "Worker", self.default_port))
        coordinator = self.pod_name(job, "Worker", 0)
        processes = str(job.pod_count)

        def env(rtype: str, index: int) -> list[dict[str, Any]]:
            return [
                env_var("PYTHONUNBUFFERED", "1"),
                env_var("COORDINATOR_PORT", port),
                env_var("COORDINATOR_ADDRESS", coordinator),
                env_var("NUM_PROCESSES", processes),
                env_var("PROCESS_ID", str(index)),
            ]

        return env

    def addresses(self, job: Any) -> dict[str, str]:
        return self.first_pod_address(job, "coordinator", "Worker")


FRAMEWORK = JAX()
