"""XGBoost: the XGBoostJob (kubeflow.org/v1) and its Rabit/LightGBM env.

One Master runs the Rabit tracker (and rank 0); Workers join it. The operator
also lists the workers for LightGBM (``WORKER_ADDRS``).

Facts: kubeflow-operators.md §1, §2.4, §3, §4.3 (Training Operator v1.9.4,
pkg/controller.v1/xgboost).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field

from trainjobs.errors import Finding, Rule
from trainjobs.frameworks.capabilities import Addresses
from trainjobs.frameworks.kubeflow_v1 import (
    KubeflowV1Framework,
    ReplicaSpec,
    V1Job,
    V1JobSpec,
    env_var,
    replica_name,
)
from trainjobs.plan import SuccessPolicy

__all__ = ["FRAMEWORK", "XGBoost", "XGBoostJob", "XGBoostJobSpec"]

MASTER_MISSING = Rule(
    "xgboost.master_missing",
    "an XGBoostJob needs a Master (it runs the Rabit tracker)",
    hint="add {master} with replicas: 1",
)
MASTER_REPLICAS = Rule(
    "xgboost.master_replicas",
    "an XGBoostJob has exactly one Master",
    hint="set Master.replicas to 1 and add Worker replicas instead",
)


@lru_cache(maxsize=64)
def _worker_addrs(name: str, count: int) -> str:
    """WORKER_ADDRS: the first ``count`` worker names; every pod of a job shares it."""
    return ",".join(replica_name(name, "Worker", i) for i in range(count))


class XGBoostJobSpec(V1JobSpec):
    """``spec`` of an XGBoostJob."""

    xgb_replica_specs: dict[str, ReplicaSpec] = Field(
        description="Replica types (Master: exactly one, Worker) and their pods."
    )


class XGBoostJob(V1Job):
    """An XGBoostJob exactly as kubeflow.org/v1 accepts it."""

    kind: Literal["XGBoostJob"] = "XGBoostJob"
    spec: XGBoostJobSpec


class XGBoost(KubeflowV1Framework[XGBoostJob], Addresses):
    """Distributed XGBoost (Rabit) or LightGBM: one Master, any number of Workers."""

    name = "xgboost"
    title = "XGBoost (XGBoostJob)"
    # xgboostjob_webhook.go validateXGBReplicaSpecs: a Master must be present, replicas 1.
    webhook_rules = KubeflowV1Framework.webhook_rules | {
        "xgboost.master_missing",
        "xgboost.master_replicas",
    }
    replica_types = ("Master", "Worker")
    default_port = 9999
    default_restart_policy = "Never"
    success_rule = "when the Master succeeds"

    def success_policy(self, job: XGBoostJob) -> SuccessPolicy:
        return SuccessPolicy(roles=("Master",), summary="the Master succeeds")

    def is_master(self, job: XGBoostJob, rtype: str, index: int) -> bool:
        return rtype == "Master"

    def validate_spec(self, job: XGBoostJob) -> list[Finding]:
        path = f"spec.{self.replica_alias}.Master"
        if "Master" not in job.replica_specs:
            return [MASTER_MISSING.at(path, master=path)]
        if job.replicas("Master") != 1:
            return [MASTER_REPLICAS.at(f"{path}.replicas", job.replicas("Master"))]
        return []

    def cluster_envs(self, job: XGBoostJob) -> Callable[[str, int], list[dict[str, Any]]]:
        # What every pod shares is worked out once per job; only the rank differs.
        total = job.pod_count
        masters = job.replicas("Master")
        port = str(self.port_of(job, "Master", self.default_port))
        master = self.pod_name(job, "Master", 0)
        tail: list[tuple[str, str]] = []
        if total > 1:
            # For LightGBM. The operator lists total - 1 worker names, which
            # with the one Master the webhook allows is every Worker.
            tail = [
                ("WORKER_PORT", str(self.port_of(job, "Worker", self.default_port))),
                ("WORKER_ADDRS", _worker_addrs(job.name, total - 1)),
            ]

        def env(rtype: str, index: int) -> list[dict[str, Any]]:
            rank = index + masters if rtype == "Worker" else index
            return [
                env_var("MASTER_PORT", port),
                env_var("MASTER_ADDR", master),
                env_var("WORLD_SIZE", str(total)),
                env_var("RANK", str(rank)),
                env_var("PYTHONUNBUFFERED", "1"),
                *(env_var(name, value) for name, value in tail),
            ]

        return env

    def addresses(self, job: Any) -> dict[str, str]:
        return self.first_pod_address(job, "master", "Master")


FRAMEWORK = XGBoost()
