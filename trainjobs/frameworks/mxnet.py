"""MXNet: the MXJob (kubeflow.org/v1, Training Operator ≤ v1.8.1), ``MX_CONFIG`` and ``DMLC_*``.

Legacy: MXJob was removed in Training Operator v1.9.0, so the ``operator``
target needs an operator at v1.8.1 or older (whose CRD is in
``crds/training-operator-v1.8.1/``); the ``pods`` target needs none.

A parameter-server job: one Scheduler, Servers and Workers, wired through
ps-lite's ``DMLC_*`` variables and the ``MX_CONFIG`` JSON. ``MXTune`` jobs
use the TVM auto-tuning types (TunerTracker, TunerServer, Tuner).

Facts: kubeflow-operators.md §1, §2.3, §2.4, §3, §4.6 (Training Operator v1.8.1,
pkg/controller.v1/mxnet, pkg/apis/kubeflow.org/v1/mxnet_validation.go).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from typing import Any, Literal

from pydantic import Field

from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks.capabilities import Addresses
from trainjobs.frameworks.kubeflow_v1 import (
    V1_CONTROLLER_RULES,
    KubeflowV1Framework,
    LegacyRunPolicy,
    ReplicaSpec,
    V1Job,
    env_var,
    go_json,
    replica_name,
)
from trainjobs.k8s.model import K8sModel
from trainjobs.plan import SuccessPolicy

__all__ = ["FRAMEWORK", "JOB_MODES", "TUNER_SERVER_KEY", "MXJob", "MXJobSpec", "MXNet"]

JOB_MODES = ("MXTrain", "MXTune")
"""The job modes the API names; the operator itself never reads ``jobMode``."""
TUNER_SERVER_KEY = "tuner-server-key"
"""Pod-template annotation whose value goes into ``MX_CONFIG.labels`` for its type."""


@dataclass(frozen=True)
class _Cluster:
    cluster_json: str
    labels_json: str
    scheduler_url: str
    scheduler_port: int
    servers: int
    workers: int


@lru_cache(maxsize=64)
def _mx_cluster(name: str, layout: tuple[tuple[str, int, int, str], ...]) -> _Cluster:
    """What every pod of a job shares in MX_CONFIG: the cluster and labels, marshalled."""
    cluster: dict[str, Any] = {}
    labels: dict[str, str] = {}
    for rtype, replicas, port, label in layout:
        cluster[rtype.lower()] = [
            {"url": replica_name(name, rtype, i), "port": port} for i in range(replicas)
        ]
        labels[rtype.lower()] = label
    schedulers = cluster.get("scheduler") or [{"url": "", "port": 0}]
    return _Cluster(
        go_json(cluster),
        go_json(labels),
        schedulers[0]["url"],
        schedulers[0]["port"],
        len(cluster.get("server", [])),
        len(cluster.get("worker", [])),
    )


# The v1.8.1 controller's rules and two warnings, declared once.
DEPRECATED = Rule(
    "mxjob.deprecated",
    "MXJob is deprecated: Training Operator v1.9.0 removed it",
    hint="the operator target needs Training Operator v1.8.1 or older; the pods target needs "
    "no operator",
    severity=Severity.ADVICE,
)
SCHEDULER_REPLICAS = Rule(
    "mxjob.scheduler_replicas",
    "an MXJob has at most one Scheduler (every pod dials scheduler 0)",
    hint="set Scheduler.replicas to 1",
)
JOB_MODE = Rule(
    "mxjob.job_mode",
    "jobMode is neither MXTrain nor MXTune (the operator ignores it)",
    hint="use MXTrain for Scheduler/Server/Worker jobs, MXTune for tuning",
    severity=Severity.WARNING,
)
REPLICA_TYPE = Rule(
    "mxjob.replica_type",
    "MXJob has no replica type {rtype!r}; the operator starts its pods all the same, with "
    "DMLC_ROLE set to it",
    hint="use one of {known}",
    severity=Severity.WARNING,
)
REPLICA_TYPE_CASE = replace(
    REPLICA_TYPE,
    hint="write it {spelt!r} (v1.8.1 fixes the case of Scheduler, Server and Worker keys only)",
)
"""A replica type spelt in another case: the same rule, with the key's spelling as the fix."""


class MXJobSpec(K8sModel):
    """``spec`` of an MXJob."""

    run_policy: LegacyRunPolicy | None = Field(
        default=None, description="Run and clean-up policy (v1.8.1: no managedBy)."
    )
    # The CRD requires jobMode but accepts any string, and nothing reads it.
    job_mode: str = Field(
        description="MXTrain (Scheduler, Server, Worker) or MXTune (Tuner types). Required."
    )
    mx_replica_specs: dict[str, ReplicaSpec] = Field(
        description=(
            "Replica types (Scheduler, Server, Worker; TunerTracker, TunerServer, Tuner) "
            "and their pods."
        )
    )


class MXJob(V1Job):
    """An MXJob exactly as kubeflow.org/v1 (Training Operator v1.8.1) accepts it."""

    kind: Literal["MXJob"] = "MXJob"
    spec: MXJobSpec


class MXNet(KubeflowV1Framework[MXJob], Addresses):
    """MXNet parameter-server training (ps-lite) and TVM auto-tuning."""

    name = "mxnet"
    title = "MXNet (MXJob)"
    # Training Operator v1.8.1 pkg/webhooks/mxnet/mxnet_webhook.go returns only the
    # deprecation warning; pkg/apis/kubeflow.org/v1/mxnet_validation.go, called by the
    # MXJob controller, checks the DNS-1035 name, a container named mxnet, one Scheduler.
    webhook_rules = frozenset({"mxjob.deprecated"})
    controller_rules = V1_CONTROLLER_RULES | {
        "name.dns1035",
        "template.containers",
        "template.image",
        "template.default_container",
        "mxjob.scheduler_replicas",
    }
    legacy = True
    release = "v1.8.1"
    replica_types = ("Scheduler", "Server", "Worker", "TunerTracker", "TunerServer", "Tuner")
    # v1.8.1 validates neither the keys nor their case beyond these three.
    check_replica_types = False
    camel_case_types = ("Scheduler", "Server", "Worker")
    run_policy_model = LegacyRunPolicy
    default_port = 9091
    default_restart_policy = "Never"
    success_rule = (
        "when the Scheduler succeeds; a job of one Worker and no Scheduler or Server: "
        "when that Worker succeeds; any other job (e.g. Tuner types only) never"
    )

    def success_policy(self, job: MXJob) -> SuccessPolicy:
        if "Scheduler" in job.replica_specs:
            return SuccessPolicy(roles=("Scheduler",), summary="the Scheduler succeeds")
        if set(job.replica_specs) == {"Worker"} and job.replicas("Worker") == 1:
            return SuccessPolicy(roles=("Worker",), summary="the only Worker succeeds")
        # The operator never marks such a job succeeded; no replica decides.
        return SuccessPolicy(roles=("-",), summary="never (no Scheduler and not one Worker)")

    def is_master(self, job: MXJob, rtype: str, index: int) -> bool:
        return rtype == "Server"

    def validate_spec(self, job: MXJob) -> list[Finding]:
        base = f"spec.{self.replica_alias}"
        findings = [DEPRECATED.at("kind")]
        if job.replicas("Scheduler") > 1:
            schedulers = job.replicas("Scheduler")
            findings.append(SCHEDULER_REPLICAS.at(f"{base}.Scheduler.replicas", schedulers))
        if job.spec.job_mode not in JOB_MODES:
            findings.append(JOB_MODE.at("spec.jobMode", job.spec.job_mode))
        by_lower = {t.lower(): t for t in self.replica_types}
        known = ", ".join(self.replica_types)
        for rtype in job.replica_specs:
            if rtype not in self.replica_types:
                spelt = by_lower.get(rtype.lower())
                rule = REPLICA_TYPE_CASE if spelt else REPLICA_TYPE
                path = f"{base}.{rtype}"
                findings.append(rule.at(path, rtype, rtype=rtype, spelt=spelt, known=known))
        return findings

    def _layout(self, job: MXJob) -> tuple[tuple[str, int, int, str], ...]:
        """Per replica type, sorted by lowercase name: type, replicas, port, tuner label."""
        layout = []
        for rtype, spec in sorted(job.replica_specs.items(), key=lambda kv: kv[0].lower()):
            port = self.port_of(job, rtype, self.default_port) or 0
            annotations = (spec.template.get("metadata") or {}).get("annotations") or {}
            label = str(annotations.get(TUNER_SERVER_KEY, ""))
            layout.append((rtype, job.replicas(rtype), port, label))
        return tuple(layout)

    def cluster_envs(self, job: MXJob) -> Callable[[str, int], list[dict[str, Any]]]:
        cluster = _mx_cluster(job.name, self._layout(job))
        return partial(_mx_env, cluster)

    def addresses(self, job: Any) -> dict[str, str]:
        if job.replicas("Scheduler") < 1:
            return {}
        return self.first_pod_address(job, "scheduler", "Scheduler")


def _mx_env(cluster: _Cluster, rtype: str, index: int) -> list[dict[str, Any]]:
    """The env of one MXNet pod, the job's shared cluster already marshalled."""
    role = rtype.lower()
    # Same bytes as marshalling the whole config; the cluster and labels, which
    # every pod shares, are marshalled once per job instead of once per pod.
    task = go_json({"type": role, "index": index})
    config = f'{{"cluster":{cluster.cluster_json},"labels":{cluster.labels_json},"task":{task}}}'
    env = [
        env_var("MX_CONFIG", config),
        env_var("DMLC_PS_ROOT_PORT", str(cluster.scheduler_port)),
        env_var("DMLC_PS_ROOT_URI", cluster.scheduler_url),
        env_var("DMLC_NUM_SERVER", str(cluster.servers)),
        env_var("DMLC_NUM_WORKER", str(cluster.workers)),
        env_var("DMLC_ROLE", role),
        env_var("DMLC_USE_KUBERNETES", "1"),
    ]
    if role == "worker":
        env.append(env_var("DMLC_WORKER_ID", str(index)))
    return env


FRAMEWORK = MXNet()
