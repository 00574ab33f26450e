"""PaddlePaddle: the PaddleJob (kubeflow.org/v1) and its ``PADDLE_*`` env.

Two modes, chosen by whether a Master spec exists. **Collective** (Workers
only): worker 0 is the rendezvous endpoint. **Parameter server** (a Master):
master 0 is the endpoint, Masters are servers and Workers are trainers. The
endpoint pod announces its own IP (``PADDLE_MASTER=$(POD_IP_DUMMY):<port>``),
every other pod dials its Service name.

``elasticPolicy`` is part of the API and defaulted (min/max), but the
operator's PaddleJob controller never reads it: no env, no autoscaler.

Facts: kubeflow-operators.md §1, §2.3, §2.4, §3, §4.4 (Training Operator v1.9.4,
pkg/controller.v1/paddlepaddle).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks.capabilities import Addresses
from trainjobs.frameworks.kubeflow_v1 import (
    KubeflowV1Framework,
    ReplicaSpec,
    V1Job,
    V1JobSpec,
    env_field_ref,
    env_var,
)
from trainjobs.k8s.model import K8sModel
from trainjobs.plan import SuccessPolicy

__all__ = ["FRAMEWORK", "Paddle", "PaddleElasticPolicy", "PaddleJob", "PaddleJobSpec"]

ELASTIC_NEEDS_WORKER = Rule(
    "paddle.elastic_needs_worker",
    "without minReplicas or maxReplicas the operator takes both from the Worker spec, but the "
    "job has none (its controller would crash)",
    hint="add {worker} or set minReplicas/maxReplicas",
)
ELASTIC_IGNORED = Rule(
    "paddle.elastic_ignored",
    "the Training Operator stores a PaddleJob's elasticPolicy but acts on none of it: no env, "
    "no autoscaler",
    hint="scale through the PaddleJob's scale subresource, or drop elasticPolicy",
    severity=Severity.ADVICE,
)


class PaddleElasticPolicy(K8sModel):
    """``spec.elasticPolicy`` of a PaddleJob: stored and defaulted, acted on by nothing."""

    min_replicas: int | None = Field(
        default=None, description="Fewest workers; default maxReplicas, else Worker replicas."
    )
    max_replicas: int | None = Field(
        default=None, description="Most workers; default minReplicas, else Worker replicas."
    )
    max_restarts: int | None = Field(default=None, description="Pod restarts allowed; unset.")
    metrics: list[dict[str, Any]] | None = Field(
        default=None, description="autoscaling/v2 MetricSpecs; unset. No HPA is made from them."
    )


class PaddleJobSpec(V1JobSpec):
    """``spec`` of a PaddleJob."""

    elastic_policy: PaddleElasticPolicy | None = Field(
        default=None, description="Elastic bounds (recorded only); unset = none."
    )
    paddle_replica_specs: dict[str, ReplicaSpec] = Field(
        description="Replica types (Master for parameter-server mode, Worker) and their pods."
    )


class PaddleJob(V1Job):
    """A PaddleJob exactly as kubeflow.org/v1 accepts it."""

    kind: Literal["PaddleJob"] = "PaddleJob"
    spec: PaddleJobSpec


class Paddle(KubeflowV1Framework[PaddleJob], Addresses):
    """PaddlePaddle distributed training, collective or parameter-server."""

    name = "paddle"
    title = "PaddlePaddle (PaddleJob)"
    replica_types = ("Master", "Worker")
    default_port_name = "master"
    default_port = 36543
    default_restart_policy = "OnFailure"
    success_rule = "with a Master: when every Master succeeds; otherwise when every Worker succeeds"

    def success_policy(self, job: PaddleJob) -> SuccessPolicy:
        if "Master" in job.replica_specs:
            return SuccessPolicy(roles=("Master",), summary="every Master succeeds")
        return SuccessPolicy(roles=("Worker",), summary="every Worker succeeds")

    def is_master(self, job: PaddleJob, rtype: str, index: int) -> bool:
        return rtype == "Master"

    def _endpoint_type(self, job: PaddleJob) -> str:
        return "Master" if "Master" in job.replica_specs else "Worker"

    def default_spec(self, job: PaddleJob) -> PaddleJob:
        elastic = job.spec.elastic_policy
        if elastic is None:
            return job
        low, high = elastic.min_replicas, elastic.max_replicas
        if low is None and high is None:
            if "Worker" not in job.replica_specs:
                return job  # validate_spec reports it
            low = high = job.replicas("Worker")
        bounds = {
            "min_replicas": high if low is None else low,
            "max_replicas": low if high is None else high,
        }
        elastic = elastic.model_copy(update=bounds)
        return job.model_copy(
            update={"spec": job.spec.model_copy(update={"elastic_policy": elastic})}
        )

    def validate_spec(self, job: PaddleJob) -> list[Finding]:
        elastic = job.spec.elastic_policy
        if elastic is None:
            return []
        if elastic.min_replicas is None and elastic.max_replicas is None:
            # Only reachable without a Worker spec: the defaulting would read its replicas.
            worker = f"spec.{self.replica_alias}.Worker"
            return [ELASTIC_NEEDS_WORKER.at("spec.elasticPolicy", worker=worker)]
        return [ELASTIC_IGNORED.at("spec.elasticPolicy")]

    def cluster_envs(self, job: PaddleJob) -> Callable[[str, int], list[dict[str, Any]]]:
        endpoint_type = self._endpoint_type(job)
        port = self.port_of(job, endpoint_type, self.default_port)
        nodes = str(job.pod_count)
        master = f"{self.pod_name(job, endpoint_type, 0)}:{port}"

        def env(rtype: str, index: int) -> list[dict[str, Any]]:
            out = [
                env_var("PYTHONUNBUFFERED", "1"),
                env_var("PADDLE_JOB_ID", job.name),
                env_var("PADDLE_NNODES", nodes),
            ]
            if rtype == endpoint_type and index == 0:
                out += [
                    env_field_ref("POD_IP_DUMMY", "status.podIP"),
                    env_var("PADDLE_MASTER", f"$(POD_IP_DUMMY):{port}"),
                ]
            else:
                out.append(env_var("PADDLE_MASTER", master))
            if endpoint_type == "Master":
                # Parameter-server mode: each pod is one server or one trainer.
                name = "PADDLE_SERVER_NUM" if rtype == "Master" else "PADDLE_TRAINER_NUM"
                out.append(env_var(name, "1"))
            return out

        return env

    def addresses(self, job: Any) -> dict[str, str]:
        return self.first_pod_address(job, "master", self._endpoint_type(job))


FRAMEWORK = Paddle()
