"""MindSpore, 2022 generation: the MSJob (mindspore.gitee.com/v1) of ms-operator v1.0.0.

A kubeflow/common v0.4.1 job: a map of replica specs ``Scheduler``/``PS``/``Worker``
(keys matched case-insensitively) and a run policy. Pods are ``<job>-<type>-<index>``
with the eight common labels; only the Scheduler gets a Service — a ClusterIP one
with every port of its ``mindspore`` container. When the job has a Scheduler, the
container named ``mindspore`` of every pod gets, in this order: MS_SCHED_HOST,
MS_NODE_ID, MS_SCHED_PORT, MS_SERVER_NUM, MS_WORKER_NUM, MS_ROLE.

Facts: seed-systems.md §2B and §4 (ms-operator @ e361e2b / v1.0.0, kubeflow/common v0.4.1).

Defaults (made explicit on both targets): ``runPolicy.cleanPodPolicy: Running``,
``successPolicy: ""``, per replica ``replicas: 1``, ``restartPolicy: Never`` and a
container port ``msjob-port: 2222`` on the ``mindspore`` container (or the first one).

Rules: Scheduler, PS, Worker only; at most one Scheduler pod; every replica a container
named ``mindspore`` with an image. (Upstream only logged these.)

Deviation on the ``pods`` target: upstream gives non-scheduler pods the scheduler
Service's ClusterIP, read from its cache once the Service exists (on a first pass it
might not, and the pods got no MS_* env at all). A render cannot know that address,
so MS_SCHED_HOST is ``$(<SERVICE>_SERVICE_HOST)``: the kubelet expands it, when the
container starts, from the service environment variables Kubernetes gives every
pod — the same ClusterIP. This needs the pod's ``enableServiceLinks`` (default true).
No ownerReferences (there is no job object).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import Field

from trainjobs.errors import Finding, Rule
from trainjobs.frameworks.capabilities import Addresses
from trainjobs.frameworks.kubeflow_v1 import (
    LABEL_JOB_NAME,
    LABEL_OPERATOR_NAME,
    LABEL_REPLICA_INDEX,
    LABEL_REPLICA_TYPE,
    KubeflowV1Framework,
    ReplicaJob,
    ReplicaSpec,
    RunPolicy,
    env_var,
)
from trainjobs.k8s.model import K8sModel
from trainjobs.plan import SuccessPolicy
from trainjobs.plan.expansion import Expansion

__all__ = ["ENV_ORDER", "FRAMEWORK", "MSJobV2", "MSJobV2Spec", "MindSporeV2", "service_host_var"]

ENV_ORDER = (
    "MS_SCHED_HOST",
    "MS_NODE_ID",
    "MS_SCHED_PORT",
    "MS_SERVER_NUM",
    "MS_WORKER_NUM",
    "MS_ROLE",
)
_ROLES = {"Scheduler": "MS_SCHED", "PS": "MS_PSERVER", "Worker": "MS_WORKER"}

SCHEDULER_REPLICAS = Rule(
    "mindspore.scheduler_replicas",
    "a MindSpore cluster has one scheduler; the workers find it by its Service",
    hint="set Scheduler.replicas to 1",
)
SERVICE_LINKS = Rule(
    "mindspore.service_links",
    "MS_SCHED_HOST is taken from the scheduler Service's environment variable, which "
    "Kubernetes gives only pods with service links",
    hint="remove enableServiceLinks: false",
)


class MSJobV2Spec(K8sModel):
    """``spec`` of a 2022 MSJob."""

    run_policy: RunPolicy | None = Field(
        default=None, description="Run and clean-up policy; cleanPodPolicy defaults to Running."
    )
    success_policy: Literal["", "AllWorkers"] | None = Field(
        default=None,
        description="'' (default): worker 0 succeeding ends the job; AllWorkers: every worker.",
    )
    ms_replica_specs: dict[str, ReplicaSpec] = Field(
        description="Replica types (Scheduler, PS, Worker) and their pods. Required."
    )
    enable_dynamic_worker: bool | None = Field(
        default=None, description="Failed workers do not fail the job; default false."
    )


class MSJobV2(ReplicaJob):
    """A 2022 MSJob exactly as mindspore.gitee.com/v1 accepts it."""

    api_version: Literal["mindspore.gitee.com/v1"] = "mindspore.gitee.com/v1"
    kind: Literal["MSJob"] = "MSJob"
    spec: MSJobV2Spec


def service_host_var(service: str) -> str:
    """The service environment variable holding a Service's ClusterIP, e.g. ``A_B_SERVICE_HOST``."""
    return service.upper().replace("-", "_") + "_SERVICE_HOST"


class MindSporeV2(KubeflowV1Framework[MSJobV2], Addresses):
    """MindSpore parameter-server and data-parallel training (ms-operator v1.0.0, 2022)."""

    name = "mindspore-v2"
    title = "MindSpore (MSJob mindspore.gitee.com/v1, 2022)"
    # Not the Training Operator: nothing of its ms-operator's validation is attributed yet.
    webhook_rules = frozenset()
    controller_rules = frozenset()
    legacy = True
    operator = "ms-operator v1.0.0, 2022"
    crd_generated = True
    # The controller writes conditions through msjobs/status (its RBAC grants that).
    status_subresource = True
    replica_types = ("Scheduler", "PS", "Worker")
    default_container = "mindspore"
    default_port = 2222
    default_restart_policy = "Never"
    env_into = "default"
    success_rule = (
        "when every Worker succeeds, or (successPolicy '') when worker 0's mindspore "
        "container exits 0"
    )

    def default(self, job: MSJobV2) -> MSJobV2:
        policy = job.spec.run_policy or RunPolicy()
        update: dict[str, Any] = {}
        if policy.clean_pod_policy is None:
            # The engine's default is None; this operator's is Running.
            update["run_policy"] = policy.model_copy(update={"clean_pod_policy": "Running"})
        if job.spec.success_policy is None:
            update["success_policy"] = ""
        if update:
            job = job.model_copy(update={"spec": job.spec.model_copy(update=update)})
        return super().default(job)

    def success_policy(self, job: MSJobV2) -> SuccessPolicy:
        if job.spec.success_policy == "AllWorkers":
            return SuccessPolicy(roles=("Worker",), summary="every Worker succeeds")
        return SuccessPolicy(roles=("Worker",), index=0, summary="Worker 0 succeeds")

    def labels(self, job: MSJobV2, rtype: str, index: int) -> dict[str, str]:
        """kubeflow/common v0.4.1's labels, each with its deprecated twin."""
        name = job.name.replace("/", "-")
        return {
            LABEL_OPERATOR_NAME: self.operator_name,
            "group-name": self.kind.group,
            LABEL_JOB_NAME: name,
            "job-name": name,
            LABEL_REPLICA_TYPE: rtype.lower(),
            "replica-type": rtype.lower(),
            LABEL_REPLICA_INDEX: str(index),
            "replica-index": str(index),
        }

    def scheduler_service(self, job: MSJobV2) -> str:
        return self.pod_name(job, "Scheduler", 0)

    def cluster_env(self, job: MSJobV2, rtype: str, index: int) -> list[dict[str, Any]]:
        if "Scheduler" not in job.replica_specs:
            return []
        if rtype == "Scheduler":
            host: dict[str, Any] = {
                "name": "MS_SCHED_HOST",
                "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
            }
        else:
            host = env_var("MS_SCHED_HOST", f"$({service_host_var(self.scheduler_service(job))})")
        port = self.port_of(job, "Scheduler", self.default_port)
        return [
            host,
            {"name": "MS_NODE_ID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            env_var("MS_SCHED_PORT", str(port)),
            env_var("MS_SERVER_NUM", str(job.replicas("PS"))),
            env_var("MS_WORKER_NUM", str(job.replicas("Worker"))),
            env_var("MS_ROLE", _ROLES.get(rtype, "")),
        ]

    def validate_spec(self, job: MSJobV2) -> list[Finding]:
        findings: list[Finding] = []
        base = f"spec.{self.replica_alias}"
        if "Scheduler" in job.replica_specs and job.replicas("Scheduler") > 1:
            schedulers = job.replicas("Scheduler")
            findings.append(SCHEDULER_REPLICAS.at(f"{base}.Scheduler.replicas", schedulers))
        if "Scheduler" not in job.replica_specs:
            return findings
        for rtype, spec in job.replica_specs.items():
            pod = spec.template.get("spec") or {}
            if rtype != "Scheduler" and pod.get("enableServiceLinks") is False:
                path = f"{base}.{rtype}.template.spec.enableServiceLinks"
                findings.append(SERVICE_LINKS.at(path, False))
        return findings

    def expansion(self, job: MSJobV2) -> Expansion:
        # One ClusterIP Service, for the scheduler only (not one per replica).
        engine = super().expansion(job)
        services = [
            replace(service, ports=self._scheduler_ports(job), headless=False)
            for service in engine.services
            if service.labels.get(LABEL_REPLICA_TYPE) == "scheduler"
        ]
        return Expansion(services, engine.pods, engine.objects)

    def _scheduler_ports(self, job: MSJobV2) -> tuple[tuple[str, int], ...]:
        """Every port of the scheduler's mindspore container."""
        spec = job.replica_specs["Scheduler"]
        return tuple(
            (str(port.get("name") or ""), port.get("containerPort"))
            for container in (spec.template.get("spec") or {}).get("containers") or []
            if isinstance(container, dict) and container.get("name") == self.default_container
            for port in container.get("ports") or []
        )

    def addresses(self, job: Any) -> dict[str, str]:
        if "Scheduler" not in job.replica_specs:
            return {}
        port = self.port_of(job, "Scheduler", self.default_port)
        return {"scheduler": f"{self.scheduler_service(job)}.{job.namespace}.svc:{port}"}


FRAMEWORK = MindSporeV2()
