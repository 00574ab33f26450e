"""XGBoost: the XGBoostJob (kubeflow.org/v1) and its Rabit/LightGBM env.

One Master runs the Rabit tracker (and rank 0); Workers join it. The operator
also lists the workers for LightGBM (``WORKER_ADDRS``).

Facts: kubeflow-operators.md §1, §2.4, §3, §4.3 (Training Operator v1.9.4,
pkg/controller.v1/xgboost).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from trainjobs.errors import Finding
from trainjobs.frameworks.base import JobResource, K8sModel, KindRef
from trainjobs.frameworks.kubeflow_v1 import (
    KubeflowV1Framework,
    ReplicaSpec,
    RunPolicy,
    V1Job,
    env_var,
)
from trainjobs.frameworks.lifecycle import SuccessPolicy

__all__ = ["FRAMEWORK", "XGBoost", "XGBoostJob", "XGBoostJobSpec"]


class XGBoostJobSpec(K8sModel):
    """``spec`` of an XGBoostJob."""

    run_policy: RunPolicy | None = Field(default=None, description="Run and clean-up policy.")
    xgb_replica_specs: dict[str, ReplicaSpec] = Field(
        description="Replica types (Master: exactly one, Worker) and their pods."
    )


class XGBoostJob(V1Job):
    """An XGBoostJob exactly as kubeflow.org/v1 accepts it."""

    replica_field: ClassVar[str] = "xgb_replica_specs"
    api_version: Literal["kubeflow.org/v1"] = "kubeflow.org/v1"
    kind: Literal["XGBoostJob"] = "XGBoostJob"
    spec: XGBoostJobSpec


class XGBoost(KubeflowV1Framework):
    """Distributed XGBoost (Rabit) or LightGBM: one Master, any number of Workers."""

    name = "xgboost"
    title = "XGBoost (XGBoostJob)"
    kind = KindRef("kubeflow.org/v1", "XGBoostJob", "xgboostjobs")
    model = XGBoostJob
    crd_file = "training-operator-v1.9.4/kubeflow.org_xgboostjobs.yaml"
    replica_types = ("Master", "Worker")
    default_container = "xgboost"
    default_port_name = "xgboostjob-port"
    default_port = 9999
    default_restart_policy = "Never"
    operator_name = "xgboostjob-controller"
    success_rule = "when the Master succeeds"

    def success_policy(self, job: JobResource) -> SuccessPolicy:
        return SuccessPolicy(roles=("Master",), summary="the Master succeeds")

    def is_master(self, job: V1Job, rtype: str, index: int) -> bool:
        return rtype == "Master"

    def validate_spec(self, job: V1Job) -> list[Finding]:
        path = f"spec.{self.replica_alias}.Master"
        if "Master" not in job.replica_specs:
            return [
                Finding(
                    code="xgboost.master_missing",
                    path=path,
                    message="an XGBoostJob needs a Master (it runs the Rabit tracker)",
                    hint=f"add {path} with replicas: 1",
                )
            ]
        if job.replicas("Master") != 1:
            return [
                Finding(
                    code="xgboost.master_replicas",
                    path=f"{path}.replicas",
                    message="an XGBoostJob has exactly one Master",
                    value=job.replicas("Master"),
                    hint="set Master.replicas to 1 and add Worker replicas instead",
                )
            ]
        return []

    def cluster_env(self, job: V1Job, rtype: str, index: int) -> list[dict[str, Any]]:
        total = sum(job.replicas(t) for t in job.replica_specs)
        rank = index + job.replicas("Master") if rtype == "Worker" else index
        env = [
            env_var("MASTER_PORT", str(self.port_of(job, "Master", self.default_port))),
            env_var("MASTER_ADDR", self.pod_name(job, "Master", 0)),
            env_var("WORLD_SIZE", str(total)),
            env_var("RANK", str(rank)),
            env_var("PYTHONUNBUFFERED", "1"),
        ]
        if total > 1:
            # For LightGBM. The operator lists total - 1 worker names, which
            # with the one Master the webhook allows is every Worker.
            workers = ",".join(self.pod_name(job, "Worker", i) for i in range(total - 1))
            env += [
                env_var("WORKER_PORT", str(self.port_of(job, "Worker", self.default_port))),
                env_var("WORKER_ADDRS", workers),
            ]
        return env

    def addresses(self, job: Any) -> dict[str, str]:
        if "Master" not in job.replica_specs:
            return {}
        port = self.port_of(job, "Master", self.default_port)
        return {"master": f"{self.pod_name(job, 'Master', 0)}:{port}"}


FRAMEWORK = XGBoost()
