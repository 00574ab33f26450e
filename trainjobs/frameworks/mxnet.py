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

from typing import Any, ClassVar, Literal

from pydantic import Field

from trainjobs.errors import Finding, Severity
from trainjobs.frameworks.base import JobResource, K8sModel, KindRef
from trainjobs.frameworks.kubeflow_v1 import (
    KubeflowV1Framework,
    LegacyRunPolicy,
    ReplicaSpec,
    V1Job,
    env_var,
    go_json,
)
from trainjobs.frameworks.lifecycle import SuccessPolicy

__all__ = ["FRAMEWORK", "JOB_MODES", "TUNER_SERVER_KEY", "MXJob", "MXJobSpec", "MXNet"]

JOB_MODES = ("MXTrain", "MXTune")
"""The job modes the API names; the operator itself never reads ``jobMode``."""
TUNER_SERVER_KEY = "tuner-server-key"
"""Pod-template annotation whose value goes into ``MX_CONFIG.labels`` for its type."""


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

    replica_field: ClassVar[str] = "mx_replica_specs"
    api_version: Literal["kubeflow.org/v1"] = "kubeflow.org/v1"
    kind: Literal["MXJob"] = "MXJob"
    spec: MXJobSpec


class MXNet(KubeflowV1Framework):
    """MXNet parameter-server training (ps-lite) and TVM auto-tuning."""

    name = "mxnet"
    title = "MXNet (MXJob)"
    kind = KindRef("kubeflow.org/v1", "MXJob", "mxjobs")
    model = MXJob
    legacy = True
    operator = "Training Operator v1.8.1"
    crd_file = "training-operator-v1.8.1/kubeflow.org_mxjobs.yaml"
    replica_types = ("Scheduler", "Server", "Worker", "TunerTracker", "TunerServer", "Tuner")
    # v1.8.1 validates neither the keys nor their case beyond these three.
    check_replica_types = False
    camel_case_types = ("Scheduler", "Server", "Worker")
    run_policy_model = LegacyRunPolicy
    default_container = "mxnet"
    default_port_name = "mxjob-port"
    default_port = 9091
    default_restart_policy = "Never"
    operator_name = "mxjob-controller"
    success_rule = (
        "when the Scheduler succeeds; a job of one Worker and no Scheduler or Server: "
        "when that Worker succeeds; any other job (e.g. Tuner types only) never"
    )

    def success_policy(self, job: JobResource) -> SuccessPolicy:
        assert isinstance(job, V1Job)
        if "Scheduler" in job.replica_specs:
            return SuccessPolicy(roles=("Scheduler",), summary="the Scheduler succeeds")
        if set(job.replica_specs) == {"Worker"} and job.replicas("Worker") == 1:
            return SuccessPolicy(roles=("Worker",), summary="the only Worker succeeds")
        # The operator never marks such a job succeeded; no replica decides.
        return SuccessPolicy(roles=("-",), summary="never (no Scheduler and not one Worker)")

    def is_master(self, job: V1Job, rtype: str, index: int) -> bool:
        return rtype == "Server"

    def validate_spec(self, job: V1Job) -> list[Finding]:
        assert isinstance(job, MXJob)
        base = f"spec.{self.replica_alias}"
        findings = [
            Finding(
                code="mxjob.deprecated",
                path="kind",
                message="MXJob is deprecated: Training Operator v1.9.0 removed it",
                hint=(
                    "the operator target needs Training Operator v1.8.1 or older; "
                    "the pods target needs no operator"
                ),
                severity=Severity.ADVICE,
            )
        ]
        if job.replicas("Scheduler") > 1:
            findings.append(
                Finding(
                    code="mxjob.scheduler_replicas",
                    path=f"{base}.Scheduler.replicas",
                    message="an MXJob has at most one Scheduler (every pod dials scheduler 0)",
                    value=job.replicas("Scheduler"),
                    hint="set Scheduler.replicas to 1",
                )
            )
        if job.spec.job_mode not in JOB_MODES:
            findings.append(
                Finding(
                    code="mxjob.job_mode",
                    path="spec.jobMode",
                    message="jobMode is neither MXTrain nor MXTune (the operator ignores it)",
                    value=job.spec.job_mode,
                    hint="use MXTrain for Scheduler/Server/Worker jobs, MXTune for tuning",
                    severity=Severity.WARNING,
                )
            )
        known = {t.lower(): t for t in self.replica_types}
        for rtype in job.replica_specs:
            if rtype not in self.replica_types:
                spelt = known.get(rtype.lower())
                findings.append(
                    Finding(
                        code="mxjob.replica_type",
                        path=f"{base}.{rtype}",
                        message=(
                            f"MXJob has no replica type {rtype!r}; the operator starts its "
                            "pods all the same, with DMLC_ROLE set to it"
                        ),
                        value=rtype,
                        hint=(
                            f"write it {spelt!r} (v1.8.1 fixes the case of Scheduler, Server "
                            "and Worker keys only)"
                            if spelt
                            else f"use one of {', '.join(self.replica_types)}"
                        ),
                        severity=Severity.WARNING,
                    )
                )
        return findings

    def _mx_cluster(self, job: V1Job) -> tuple[dict[str, Any], dict[str, str]]:
        cluster: dict[str, Any] = {}
        labels: dict[str, str] = {}
        for rtype, spec in sorted(job.replica_specs.items(), key=lambda kv: kv[0].lower()):
            port = self.port_of(job, rtype, self.default_port)
            cluster[rtype.lower()] = [
                {"url": self.pod_name(job, rtype, i), "port": port}
                for i in range(job.replicas(rtype))
            ]
            annotations = (spec.template.get("metadata") or {}).get("annotations") or {}
            labels[rtype.lower()] = str(annotations.get(TUNER_SERVER_KEY, ""))
        return cluster, labels

    def cluster_env(self, job: V1Job, rtype: str, index: int) -> list[dict[str, Any]]:
        cluster, labels = self._mx_cluster(job)
        role = rtype.lower()
        config = {"cluster": cluster, "labels": labels, "task": {"type": role, "index": index}}
        schedulers = cluster.get("scheduler") or [{"url": "", "port": 0}]
        env = [
            env_var("MX_CONFIG", go_json(config)),
            env_var("DMLC_PS_ROOT_PORT", str(schedulers[0]["port"])),
            env_var("DMLC_PS_ROOT_URI", schedulers[0]["url"]),
            env_var("DMLC_NUM_SERVER", str(len(cluster.get("server", [])))),
            env_var("DMLC_NUM_WORKER", str(len(cluster.get("worker", [])))),
            env_var("DMLC_ROLE", role),
            env_var("DMLC_USE_KUBERNETES", "1"),
        ]
        if role == "worker":
            env.append(env_var("DMLC_WORKER_ID", str(index)))
        return env

    def addresses(self, job: Any) -> dict[str, str]:
        if job.replicas("Scheduler") < 1:
            return {}
        port = self.port_of(job, "Scheduler", self.default_port)
        return {"scheduler": f"{self.pod_name(job, 'Scheduler', 0)}:{port}"}


FRAMEWORK = MXNet()
