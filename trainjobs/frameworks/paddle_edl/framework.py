"""PaddlePaddle EDL: the TrainingJob's defaults, rules and the controller's expansion.

On the ``pods`` target trainjobs creates what the EDL controller created on a
TrainingJob's arrival (seed-systems.md §3.2 and §3.3, Variant A): a master ReplicaSet
(task master + etcd sidecar), a pserver ReplicaSet and a trainer Job, with the
same labels (``paddle-job-master``, ``paddle-job-pserver``, ``paddle-job``),
commands, ``jobport-<n>`` ports and the sixteen env vars in the controller's order.
Deviations, each because the original no longer works or was unsafe:

* ``apps/v1`` ReplicaSets with a selector equal to their pod labels (the
  ``extensions/v1beta1`` ReplicaSets without selectors are gone since 1.16);
* ``alpha.kubernetes.io/nvidia-gpu`` is renamed ``nvidia.com/gpu`` in the pods'
  resources, and GPU detection reads either name;
* the controller's defaults (port 7164, one dense and one sparse port, image
  ``paddlepaddle/paddlecloud-job``, one pass) are applied — the TPR controller had
  them but never called them, so its ``PADDLE_INIT_NUM_PASSES`` was ``0``;
* ``PADDLE_INIT_TRAINER_COUNT`` reads the trainer's request, else its limit (what
  Kubernetes reserves); upstream read only the request and wrote ``0`` without one;
* the job's containers list pods through the Kubernetes API to find each other,
  so each job gets a ServiceAccount with a Role that can only get/list/watch pods
  in its namespace, used by the pservers and trainers — upstream bound
  ``cluster-admin`` to the namespace's ``default`` ServiceAccount. The master never
  calls the API, so its pod mounts no token;
* object names longer than 63 characters are shortened deterministically.

As upstream, nothing is created for Services, status or clean-up: when the trainer
Job completes, the master and pserver ReplicaSets keep running until deleted
(``pulumi destroy`` or removing the job from the stack deletes them).

A TrainingJob carries no pod templates, so template rewrites of other features
(``pod_templates`` / ``with_templates``) have nothing to act on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from trainjobs.errors import Finding
from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.paddle_edl import model
from trainjobs.frameworks.paddle_edl.model import ResourceRequirements, TrainingJob
from trainjobs.frameworks.paddle_edl.quantities import (
    ceil_int,
    gpu_amount,
    quantity,
    with_current_gpu_name,
)
from trainjobs.frameworks.paddle_edl.rules import job_findings
from trainjobs.k8s.data import PodTemplate
from trainjobs.k8s.kinds import KindRef
from trainjobs.k8s.names import shorten
from trainjobs.plan import PodSet
from trainjobs.plan.expansion import Expansion
from trainjobs.plan.listeners import Listener
from trainjobs.plan.objects import (
    BatchJobPlan,
    ObjectPlan,
    ReplicaSetPlan,
    RoleBindingPlan,
    RolePlan,
    ServiceAccountPlan,
)

__all__ = [
    "ETCD_IMAGE",
    "FRAMEWORK",
    "LABEL_MASTER",
    "LABEL_PSERVER",
    "LABEL_TRAINER",
    "PaddleEdl",
    "job_env",
    "master_name",
    "pserver_name",
    "service_account_name",
    "trainer_count",
    "trainer_name",
]

LABEL_TRAINER = "paddle-job"
LABEL_PSERVER = "paddle-job-pserver"
LABEL_MASTER = "paddle-job-master"
ETCD_IMAGE = "quay.io/coreos/etcd:v3.2.1"
_PULL_ALWAYS = "Always"
_ETCD_COMMAND = (
    "etcd",
    "-name",
    "etcd0",
    "-advertise-client-urls",
    "http://$(POD_IP):2379,http://$(POD_IP):4001",
    "-listen-client-urls",
    "http://0.0.0.0:2379,http://0.0.0.0:4001",
    "-initial-advertise-peer-urls",
    "http://$(POD_IP):2380",
    "-listen-peer-urls",
    "http://0.0.0.0:2380",
    "-initial-cluster",
    "etcd0=http://$(POD_IP):2380",
    "-initial-cluster-state",
    "new",
)


def master_name(job: TrainingJob) -> str:
    """``<job>-master``: the master ReplicaSet."""
    return shorten(f"{job.name}-master")


def pserver_name(job: TrainingJob) -> str:
    """``<job>-pserver``: the parameter-server ReplicaSet."""
    return shorten(f"{job.name}-pserver")


def trainer_name(job: TrainingJob) -> str:
    """``<job>-trainer``: the trainer Job (the object the autoscaler resizes)."""
    return shorten(f"{job.name}-trainer")


def service_account_name(job: TrainingJob) -> str:
    """``<job>-edl``: the identity the pservers and trainers list pods with."""
    return shorten(f"{job.name}-edl")


def _role_name(job: TrainingJob) -> str:
    return shorten(f"{job.name}-edl-pod-reader")


def _env(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def _field_env(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def trainer_count(resources: ResourceRequirements | None) -> int:
    """``PADDLE_INIT_TRAINER_COUNT``: the trainer's GPUs (GPU jobs) or CPUs, rounded up.

    A GPU job is one whose trainer limits name GPUs. The request counts, else
    the limit; nothing at all gives 0 (as upstream).
    """
    limits = resources.limits if resources else None
    requests = resources.requests if resources else None
    if gpu_amount(limits) > 0:
        return ceil_int(gpu_amount(requests) or gpu_amount(limits))
    for source in (requests, limits):
        if source and "cpu" in source:
            return ceil_int(quantity(source["cpu"]))
    return 0


def job_env(job: TrainingJob) -> list[dict[str, Any]]:
    """The env the controller gives the trainer, pserver and etcd containers, in its order."""
    spec = job.spec
    trainer = spec.trainer
    limits = trainer.resources.limits if trainer.resources else None
    entry = trainer.entrypoint or ""
    return [
        _env("PADDLE_JOB_NAME", job.name),
        _env("TRAINERS", str(trainer.min_instance)),
        _env("PSERVERS", str(spec.pserver.min_instance)),
        _env("ENTRY", entry),
        _env("TOPOLOGY", entry),
        _env("TRAINER_PACKAGE", trainer.workspace or ""),
        _env("PADDLE_INIT_PORT", str(spec.port)),
        _env("PADDLE_INIT_TRAINER_COUNT", str(trainer_count(trainer.resources))),
        _env("PADDLE_INIT_PORTS_NUM", str(spec.ports_num)),
        _env("PADDLE_INIT_PORTS_NUM_FOR_SPARSE", str(spec.ports_num_for_sparse)),
        _env("PADDLE_INIT_NUM_GRADIENT_SERVERS", str(trainer.min_instance)),
        _env("PADDLE_INIT_NUM_PASSES", str(spec.passes)),
        _env("PADDLE_INIT_USE_GPU", "1" if gpu_amount(limits) > 0 else "0"),
        _env("LD_LIBRARY_PATH", "/usr/local/cuda/lib64"),
        _field_env("NAMESPACE", "metadata.namespace"),
        _field_env("POD_IP", "status.podIP"),
    ]


def _job_ports(job: TrainingJob) -> list[dict[str, Any]]:
    """``ports_num + ports_num_for_sparse`` consecutive ports from ``port``, ``jobport-<n>``."""
    first = job.spec.port or 0
    count = (job.spec.ports_num or 0) + (job.spec.ports_num_for_sparse or 0)
    return [
        {"name": f"jobport-{port}", "containerPort": port} for port in range(first, first + count)
    ]


def _resources(resources: ResourceRequirements | None) -> dict[str, Any]:
    if resources is None:
        return {}
    return {"resources": with_current_gpu_name(resources.to_manifest())}


def _pod_spec(job: TrainingJob, containers: list[dict[str, Any]]) -> dict[str, Any]:
    spec = job.spec
    out: dict[str, Any] = {}
    if spec.host_network:
        out["hostNetwork"] = True
    if spec.node_selector:
        out["nodeSelector"] = dict(spec.node_selector)
    if spec.image_pull_secrets:
        out["imagePullSecrets"] = [dict(s) for s in spec.image_pull_secrets]
    out["containers"] = containers
    if spec.volumes:
        out["volumes"] = [dict(v) for v in spec.volumes]
    return out


def _mounts(job: TrainingJob) -> dict[str, Any]:
    mounts = job.spec.volume_mounts
    return {"volumeMounts": [dict(m) for m in mounts]} if mounts else {}


def _replica_set(
    name: str, label: str, job: TrainingJob, replicas: int, pod: dict[str, Any]
) -> ReplicaSetPlan:
    labels = {label: job.name}
    spec = {
        "replicas": replicas,
        "selector": {"matchLabels": dict(labels)},
        "template": {"metadata": {"labels": labels}, "spec": pod},
    }
    return ReplicaSetPlan(name, spec)


class PaddleEdl(Framework[TrainingJob]):
    """PaddlePaddle elastic deep learning: a master, parameter servers and scalable trainers."""

    name = "paddle-edl"
    title = "PaddlePaddle EDL (TrainingJob)"
    kind = KindRef("paddlepaddle.org/v1", "TrainingJob", "trainingjobs", short_names=("tj",))
    legacy = True
    operator = "EDL controller (PaddlePaddle/edl, Go, 2018)"
    crd_generated = True
    success_rule = (
        "when the trainer Job completes (one trainer succeeded and the others stopped); "
        "the master and pserver ReplicaSets keep running until the job is removed"
    )
    # The master pod's task master (8080) and etcd (client ports 2379 and 4001) answer
    # anyone: the upstream clients send no credentials. Only the job's pservers and
    # trainers use them; etcd's peer port (2380) serves no one in a one-member cluster.
    listeners = (
        Listener(LABEL_MASTER, (8080, 2379, 4001), (LABEL_PSERVER, LABEL_TRAINER), "master"),
    )

    def default(self, job: TrainingJob) -> TrainingJob:
        spec = job.spec
        update = {
            "image": spec.image or model.DEFAULT_IMAGE,
            "port": spec.port or model.DEFAULT_PORT,
            "ports_num": spec.ports_num or model.DEFAULT_PORTS_NUM,
            "ports_num_for_sparse": spec.ports_num_for_sparse or model.DEFAULT_PORTS_NUM_FOR_SPARSE,
            "fault_tolerant": bool(spec.fault_tolerant),
            "passes": spec.passes or model.DEFAULT_PASSES,
        }
        metadata = job.metadata.model_copy(update={"namespace": job.metadata.ns})
        return job.model_copy(update={"metadata": metadata, "spec": spec.model_copy(update=update)})

    def validate(self, job: TrainingJob) -> list[Finding]:
        return job_findings(job)

    def pod_templates(self, job: TrainingJob) -> Iterable[PodSet]:
        return ()

    def with_templates(self, job: TrainingJob, templates: Mapping[str, PodTemplate]) -> TrainingJob:
        return job

    def expansion(self, job: TrainingJob) -> Expansion:
        # The controller makes ReplicaSets and a batch Job, not one Pod per replica.
        return Expansion(objects=self.objects(job))

    def objects(self, job: TrainingJob) -> list[ObjectPlan]:
        """The ServiceAccount, Role and RoleBinding, the master and pserver ReplicaSets
        and the trainer Job the controller creates."""
        return [
            *self._identity(job),
            _replica_set(master_name(job), LABEL_MASTER, job, 1, self._master(job)),
            _replica_set(
                pserver_name(job),
                LABEL_PSERVER,
                job,
                job.spec.pserver.min_instance,
                self._pserver(job),
            ),
            self._trainer_job(job),
        ]

    def _identity(self, job: TrainingJob) -> list[ObjectPlan]:
        """The job's ServiceAccount and a Role that can only read pods of its namespace."""
        account, role = service_account_name(job), _role_name(job)
        rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
        return [
            ServiceAccountPlan(account),
            RolePlan(role, rules),
            RoleBindingPlan(role, account, subjects_first=False),
        ]

    def _command(self, job: TrainingJob, fault_tolerant: list[str], plain: list[str]) -> list[str]:
        return ["paddle_k8s", *(fault_tolerant if job.spec.fault_tolerant else plain)]

    def _master(self, job: TrainingJob) -> dict[str, Any]:
        master = job.spec.master
        container = {
            "name": "master",
            "image": job.spec.image,
            "imagePullPolicy": _PULL_ALWAYS,
            "command": ["paddle_k8s", "start_master"],
            "ports": [
                {"name": "master-port", "containerPort": 8080},
                {"name": "etcd-port", "containerPort": 2379},
            ],
            **_resources(master.resources if master else None),
            **_mounts(job),
        }
        etcd = {
            "name": "etcd",
            "image": ETCD_IMAGE,
            "imagePullPolicy": _PULL_ALWAYS,
            "command": list(_ETCD_COMMAND),
            "env": job_env(job),
        }
        # The master talks only to its etcd sidecar, never to the Kubernetes API.
        return {"automountServiceAccountToken": False, **_pod_spec(job, [container, etcd])}

    def _pserver(self, job: TrainingJob) -> dict[str, Any]:
        container = {
            "name": "pserver",
            "image": job.spec.image,
            "command": self._command(job, ["start_new_pserver"], ["start_pserver"]),
            "ports": _job_ports(job),
            "env": job_env(job),
            **_resources(job.spec.pserver.resources),
        }
        return {"serviceAccountName": service_account_name(job), **_pod_spec(job, [container])}

    def _trainer_job(self, job: TrainingJob) -> BatchJobPlan:
        container = {
            "name": "trainer",
            "image": job.spec.image,
            "imagePullPolicy": _PULL_ALWAYS,
            "command": self._command(job, ["start_new_trainer"], ["start_trainer", "v2"]),
            "ports": _job_ports(job),
            "env": job_env(job),
            **_resources(job.spec.trainer.resources),
            **_mounts(job),
        }
        pod = {
            "serviceAccountName": service_account_name(job),
            "restartPolicy": "Never",
            **_pod_spec(job, [container]),
        }
        spec = {
            "parallelism": job.spec.trainer.min_instance,
            "template": {"metadata": {"labels": {LABEL_TRAINER: job.name}}, "spec": pod},
        }
        return BatchJobPlan(trainer_name(job), spec)


FRAMEWORK = PaddleEdl()
