"""TensorFlow: the TFJob (kubeflow.org/v1) and its ``TF_CONFIG``.

Facts: kubeflow-operators.md §1, §2.3, §4.1 (Training Operator v1.9.4,
pkg/controller.v1/tensorflow).
"""

from __future__ import annotations

import json
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

__all__ = ["FRAMEWORK", "TFJob", "TFJobSpec", "TensorFlow"]

# Replica types counted by the operator's "is this job distributed" test.
_DISTRIBUTED_TYPES = ("Chief", "Evaluator", "Master", "PS", "Worker")

CHIEF_AND_MASTER = Rule(
    "tfjob.chief_and_master",
    "a TFJob may have a Chief or a Master, not both",
    hint="keep one of them (Chief is the usual name)",
)


class TFJobSpec(V1JobSpec):
    """``spec`` of a TFJob."""

    success_policy: Literal["", "AllWorkers"] | None = Field(
        default=None,
        description=(
            "Without a Chief/Master: '' (default) succeeds when worker 0 succeeds, "
            "AllWorkers when every worker succeeds."
        ),
    )
    tf_replica_specs: dict[str, ReplicaSpec] = Field(
        description="Replica types (Chief, Master, PS, Worker, Evaluator) and their pods."
    )
    enable_dynamic_worker: bool | None = Field(
        default=None,
        description="Sparse TF_CONFIG so workers can come and go; default false.",
    )


class TFJob(V1Job):
    """A TFJob exactly as kubeflow.org/v1 accepts it."""

    kind: Literal["TFJob"] = "TFJob"
    spec: TFJobSpec


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


@lru_cache(maxsize=256)
def _cluster_json(name: str, namespace: str, layout: tuple[tuple[str, int, int], ...]) -> str:
    """The ``cluster`` part of TF_CONFIG: every replica's ``host:port``, types sorted."""
    cluster = {
        rtype.lower(): [
            f"{replica_name(name, rtype, i)}.{namespace}.svc:{port}" for i in range(replicas)
        ]
        for rtype, replicas, port in layout
    }
    return _compact(dict(sorted(cluster.items())))


class TensorFlow(KubeflowV1Framework[TFJob], Addresses):
    """TensorFlow distributed training (parameter servers or multi-worker)."""

    name = "tensorflow"
    title = "TensorFlow (TFJob)"
    # tfjob_webhook.go validateTFReplicaSpecs: "must not have more than 1 Chief or Master".
    webhook_rules = KubeflowV1Framework.webhook_rules | {"tfjob.chief_and_master"}
    replica_types = ("Chief", "Master", "PS", "Worker", "Evaluator")
    check_replica_types = False
    default_port = 2222
    default_restart_policy = "Never"
    env_into = "default"
    success_rule = (
        "with a Chief or Master: when it succeeds; otherwise when worker 0 succeeds "
        "(successPolicy '') or when every worker succeeds (AllWorkers)"
    )

    listens_on_all_addresses = True  # the gRPC server binds 0.0.0.0:<port>

    def success_policy(self, job: TFJob) -> SuccessPolicy:
        tolerated = ("Worker",) if job.spec.enable_dynamic_worker else ()
        chief = tuple(t for t in ("Chief", "Master") if t in job.replica_specs)
        if chief:
            return SuccessPolicy(
                roles=chief, tolerated=tolerated, summary=f"the {chief[0]} succeeds"
            )
        if job.spec.success_policy == "AllWorkers":
            return SuccessPolicy(
                roles=("Worker",), tolerated=tolerated, summary="every Worker succeeds"
            )
        return SuccessPolicy(
            roles=("Worker",), index=0, tolerated=tolerated, summary="Worker 0 succeeds"
        )

    def _has_chief(self, job: TFJob) -> bool:
        return any(t in job.replica_specs for t in ("Chief", "Master"))

    def is_master(self, job: TFJob, rtype: str, index: int) -> bool:
        if self._has_chief(job):
            return rtype in ("Chief", "Master")
        return rtype == "Worker" and index == 0

    def _host(self, job: TFJob, rtype: str, index: int) -> str:
        port = self.port_of(job, rtype, self.default_port)
        return f"{self.pod_name(job, rtype, index)}.{job.namespace}.svc:{port}"

    def cluster_envs(self, job: TFJob) -> Callable[[str, int], list[dict[str, Any]]]:
        if sum(job.replicas(t) for t in _DISTRIBUTED_TYPES) == 1:
            return lambda rtype, index: []
        if job.spec.enable_dynamic_worker:

            def sparse(rtype: str, index: int) -> list[dict[str, Any]]:
                cluster = _compact(self._sparse_cluster(job, rtype, index))
                task = _compact({"type": rtype.lower(), "index": index})
                return [env_var("TF_CONFIG", f'{{"cluster":{cluster},"task":{task}}}')]

            return sparse
        layout = tuple(
            (t, job.replicas(t), self.port_of(job, t, self.default_port) or self.default_port)
            for t in job.replica_specs
        )
        cluster = _cluster_json(job.name, job.namespace, layout)

        def dense(rtype: str, index: int) -> list[dict[str, Any]]:
            # Same bytes as dumping the whole config; the cluster part, which every pod
            # shares, is built once per job, and the task is spelt out (once per pod).
            task = f'{{"type":{json.dumps(rtype.lower())},"index":{int(index)}}}'
            value = f'{{"cluster":{cluster},"task":{task},"environment":"cloud"}}'
            return [env_var("TF_CONFIG", value)]

        return dense

    def _sparse_cluster(self, job: TFJob, rtype: str, index: int) -> dict[str, Any]:
        # Dynamic workers: each worker sees only itself and the parameter servers.
        # The operator marshals a struct here, so the order is worker, then ps.
        all_ps = [self._host(job, "PS", i) for i in range(job.replicas("PS"))]
        if rtype == "Worker":
            # A worker gets the cluster's ps list itself: a job without a PS type has
            # none (a nil Go slice), which json.Marshal writes as null, not [].
            ps = all_ps if "PS" in job.replica_specs else None
            return {"worker": {str(index): self._host(job, rtype, index)}, "ps": ps}
        if rtype == "PS":
            return {"worker": {}, "ps": [self._host(job, rtype, index)]}
        return {"worker": {}, "ps": []}

    def validate_spec(self, job: TFJob) -> list[Finding]:
        if all(t in job.replica_specs for t in ("Chief", "Master")):
            return [CHIEF_AND_MASTER.at(f"spec.{self.replica_alias}", ["Chief", "Master"])]
        return []

    def addresses(self, job: Any) -> dict[str, str]:
        for rtype in ("Chief", "Master"):
            if rtype in job.replica_specs:
                return {"chief": self._host(job, rtype, 0)}
        if "Worker" in job.replica_specs:
            return {"chief": self._host(job, "Worker", 0)}
        return {}


FRAMEWORK = TensorFlow()
