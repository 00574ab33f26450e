"""Queues with the real Kueue: each kind on each target is admitted when its queue's
quota fits and held, suspended, with Kueue's reason when it does not — and ``trainjobs
check`` said so first.

One GpuNodePool (static, two kwok nodes of 4 GPUs) and three GpuQueues on it: ``roomy``
(8 GPUs, 100Gi of ephemeral storage), ``tight`` (1 GPU, 1Gi) and ``bare`` (8 GPUs and no
ephemeral-storage quota at all). Each case renders a job of 2 GPUs with trainjobs on a
target and applies it to one queue:

* on ``roomy`` check passes; Kueue must admit every Workload of the job, unsuspend what
  owns its pods (or ungate the pods), and the scheduler must place each pod on a node
  of the pool (Kueue adds the flavor's node labels);
* on ``tight`` check refuses (``queue.quota``); the same job rendered for ``roomy`` and
  relabelled for ``tight`` must stay suspended (or gated), its Workload not admitted,
  with Kueue's "insufficient quota" message;
* on ``bare``, an MPIJob v1 on the pods target (its launcher's kubectl-delivery init
  container requests ephemeral storage): check refuses (``queue.resource``) and Kueue
  holds it, the resource "unavailable in ClusterQueue".

The agreement table (case, check, Kueue) is printed; "only Kueue refuses" must be empty.
The labels and annotations are the ones each target writes: a case passes only when
Kueue's webhooks and integrations read them as meant.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.control_plane import KWOK_ANNOTATION, ControlPlane
from tests.cluster.kube import apply, poll
from tests.cluster.kueue import MANAGED_LABEL, Kueue
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.spec import parse_documents

pytestmark = pytest.mark.cluster

Doc = dict[str, Any]
NAMESPACE = "kueue-proof"
POOL = "kq-t4"
ROOMY, TIGHT, BARE = "roomy", "tight", "bare"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_KINDS = {"ResourceFlavor", "ClusterQueue", "LocalQueue"}


def _platform() -> list[Doc]:
    pool = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "GpuNodePool",
        "metadata": {"name": POOL},
        "spec": {
            "provider": "static",
            "gpu": "t4",
            "gpusPerNode": 4,
            "cpu": 16,
            "memory": "64Gi",
            "maxNodes": 2,
            "labels": {"gpu-pool": POOL},
        },
    }

    def queue(name: str, gpus: int, disk: str | None) -> Doc:
        spec: Doc = {"nodePool": POOL, "gpus": gpus, "namespaces": [NAMESPACE]}
        if disk:
            spec["ephemeralStorage"] = disk
        return {
            "apiVersion": "trainjobs.dev/v1alpha1",
            "kind": "GpuQueue",
            "metadata": {"name": name},
            "spec": spec,
        }

    # bare: GPUs enough, but no ephemeral-storage quota (what an MPIJob v1 launcher asks).
    return [pool, queue(ROOMY, 8, "100Gi"), queue(TIGHT, 1, "1Gi"), queue(BARE, 8, None)]


def _container(name: str, gpus: int = 1) -> Doc:
    resources: Doc = {"requests": {"cpu": "1", "memory": "1Gi"}}
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": gpus}
    return {
        "name": name,
        "image": "busybox:1.36",
        "command": ["sleep", "1"],
        "resources": resources,
    }


def _v1(kind: str, key: str, container: str, roles: dict[str, int], **spec: Any) -> Doc:
    replicas = {
        role: {
            "replicas": count,
            "restartPolicy": "OnFailure",
            "template": {"spec": {"containers": [_container(container)]}},
        }
        for role, count in roles.items()
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": kind,
        "metadata": {"name": kind.lower(), "namespace": NAMESPACE},
        "spec": {key: replicas, **spec},
    }


def _mpijob() -> Doc:
    def replica(count: int, gpus: int) -> Doc:
        return {
            "replicas": count,
            "template": {"spec": {"containers": [_container("mpi", gpus)]}},
        }

    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "mpijob", "namespace": NAMESPACE},
        "spec": {
            "slotsPerWorker": 1,
            "mpiReplicaSpecs": {"Launcher": replica(1, 0), "Worker": replica(2, 1)},
        },
    }


def _trainjob() -> Doc:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "trainjob", "namespace": NAMESPACE},
        "spec": {
            "runtimeRef": {"name": "torch-distributed"},
            "trainer": {
                "numNodes": 2,
                "image": "busybox:1.36",
                "command": ["sleep", "1"],
                "resourcesPerNode": {
                    "requests": {"cpu": "1", "memory": "1Gi"},
                    "limits": {"nvidia.com/gpu": 1},
                },
            },
        },
    }


def _mpijob_v1() -> Doc:
    job = _mpijob()
    job["apiVersion"] = "kubeflow.org/v1"
    job["metadata"]["name"] = "mpijob-v1"
    return job


def _caffe2job() -> Doc:
    return {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "Caffe2Job",
        "metadata": {"name": "caffe2job", "namespace": NAMESPACE},
        "spec": {
            "backendSpecs": {
                "backendType": "redis",
                "redisHost": "redis.example",
                "redisPort": 6379,
            },
            "replicaSpecs": {
                "replicas": 2,
                "template": {"spec": {"containers": [_container("caffe2")]}},
            },
        },
    }


def _msjob() -> Doc:
    """MindSpore's MSJob of kubeflow.org/v1 (replica specs as a list)."""
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MSJob",
        "metadata": {"name": "msjob", "namespace": NAMESPACE},
        "spec": {
            "replicaSpecs": [
                {
                    "replicaType": t,
                    "replicas": 1,
                    "template": {"spec": {"containers": [_container("mindspore")]}},
                }
                for t in ("MASTER", "WORKER")
            ]
        },
    }


def _msjob_gitee() -> Doc:
    job = _v1("MSJob", "msReplicaSpecs", "mindspore", {"Scheduler": 1, "Worker": 1})
    job["apiVersion"] = "mindspore.gitee.com/v1"
    job["metadata"]["name"] = "msjob-gitee"
    return job


JOBS: dict[str, Doc] = {
    "TFJob": _v1("TFJob", "tfReplicaSpecs", "tensorflow", {"Worker": 2}),
    "PyTorchJob": _v1("PyTorchJob", "pytorchReplicaSpecs", "pytorch", {"Master": 1, "Worker": 1}),
    "XGBoostJob": _v1("XGBoostJob", "xgbReplicaSpecs", "xgboost", {"Master": 1, "Worker": 1}),
    "JAXJob": _v1("JAXJob", "jaxReplicaSpecs", "jax", {"Worker": 2}),
    "PaddleJob": _v1("PaddleJob", "paddleReplicaSpecs", "paddle", {"Worker": 2}),
    "MPIJob": _mpijob(),
    "TrainJob": _trainjob(),
    # Kinds Kueue has no integration for: their pods are admitted as one pod group on
    # the pods target; the operator target refuses the queue (tests/platform/test_queue_kinds.py).
    "MPIJob-v1": _mpijob_v1(),
    "MXJob": _v1(
        "MXJob", "mxReplicaSpecs", "mxnet", {"Scheduler": 1, "Worker": 1}, jobMode="MXTrain"
    ),
    "Caffe2Job": _caffe2job(),
    "MSJob": _msjob(),
    "MSJob-gitee": _msjob_gitee(),
}
TARGETS: dict[str, tuple[str, ...]] = {
    "TFJob": ("operator", "pods"),
    "PyTorchJob": ("operator", "pods", "trainer"),
    "XGBoostJob": ("operator", "pods"),
    "JAXJob": ("operator", "pods"),
    "PaddleJob": ("operator", "pods"),
    "MPIJob": ("operator", "pods", "trainer"),
    "TrainJob": ("operator", "jobset", "pods"),
    "MPIJob-v1": ("pods",),
    "MXJob": ("pods",),
    "Caffe2Job": ("pods",),
    "MSJob": ("pods",),
    "MSJob-gitee": ("pods",),
}


@dataclass(frozen=True)
class Case:
    kind: str
    target: str
    queue: str
    pool: bool = True
    """Whether the job names the pool (``trainjobs.nodePool``); without it, only the
    queue's flavor places it (its node labels and the tolerations of its taints)."""

    @property
    def id(self) -> str:
        return f"{self.kind}-{self.target}-{self.queue}" + ("" if self.pool else "-no-pool")


CASES = [Case(k, t, q) for k, targets in TARGETS.items() for t in targets for q in (ROOMY, TIGHT)]
CASES += [
    Case("TFJob", "operator", ROOMY, pool=False),
    Case("PyTorchJob", "pods", ROOMY, pool=False),
    Case("MPIJob-v1", "pods", BARE),
]
AGREEMENT: list[tuple[str, str, str]] = []


def _job(case: Case, queue: str) -> Doc:
    job = copy.deepcopy(JOBS[case.kind])
    job["trainjobs"] = {"target": case.target, "queue": queue}
    if case.pool:
        job["trainjobs"]["nodePool"] = POOL
    return job


def _check(case: Case) -> tuple[str, list[Doc]]:
    """What check says of the job on its queue ("admits" or the refusing codes) and
    the manifests to apply: its own, or, when refused, the same job rendered for the
    roomy queue with the queue's name changed (the other queues' only difference)."""
    docs = [*_platform(), _job(case, case.queue)]
    try:
        rendering = run(parse_documents(docs, source="<kueue>"))
        return "admits", _job_objects(rendering.manifests)
    except SpecError as exc:
        codes = sorted({f.code for f in exc.errors})
    roomy = run(parse_documents([*_platform(), _job(case, ROOMY)], source="<kueue>"))
    text = json.dumps(_job_objects(roomy.manifests))
    relabelled = text.replace(f'"{QUEUE_LABEL}": "{ROOMY}"', f'"{QUEUE_LABEL}": "{case.queue}"')
    assert relabelled != text
    return "refuses: " + ", ".join(codes), json.loads(relabelled)


def _key(m: Doc) -> tuple[str, str, str]:
    return (m["kind"], m["metadata"].get("namespace", ""), m["metadata"]["name"])


def _job_objects(manifests: list[Doc]) -> list[Doc]:
    """The job's own objects: what the platform alone renders (the queues' Kueue
    objects, the pool's device plugin) is applied once by the fixture, or not at all."""
    platform = {_key(m) for m in run(parse_documents(_platform())).manifests}
    return [m for m in manifests if _key(m) not in platform]


def _nodes() -> list[Doc]:
    capacity = {
        "cpu": "16",
        "memory": "64Gi",
        "ephemeral-storage": "200Gi",
        "nvidia.com/gpu": "4",
        "pods": "110",
    }
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"{POOL}-{i}",
                "annotations": {KWOK_ANNOTATION: "fake"},
                "labels": {"gpu-pool": POOL, "kubernetes.io/hostname": f"{POOL}-{i}"},
            },
            "spec": {
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
            },
            "status": {"capacity": capacity, "allocatable": capacity},
        }
        for i in range(2)
    ]


@pytest.fixture(scope="module")
def kueue(cluster: ControlPlane) -> Iterator[Kueue]:
    """Kueue running, the pool's kwok nodes, the queues' Kueue objects, a managed namespace."""
    manager = Kueue(cluster)
    nodes = _nodes()
    try:
        manager.start()
        cluster.ensure_namespace(NAMESPACE, labels=dict(MANAGED_LABEL))
        for node in nodes:
            cluster.client.create("/api/v1/nodes", node)
        queues = [
            m for m in run(parse_documents(_platform())).manifests if m["kind"] in KUEUE_KINDS
        ]
        result = apply(cluster, queues, dry_run=False)
        assert result.ok, str(result)
        poll(
            "both ClusterQueues Active",
            lambda: all(_active(cluster, q) for q in (ROOMY, TIGHT, BARE)),
            60,
        )
        yield manager
    finally:
        _clean(cluster)
        for node in nodes:
            cluster.kubectl("delete", "node", node["metadata"]["name"], check=False)
        cluster.kubectl("delete", "namespace", NAMESPACE, "--wait=false", check=False)
        manager.stop()


def _active(cluster: ControlPlane, name: str) -> bool:
    queue = cluster.client.get(f"/apis/kueue.x-k8s.io/v1beta2/clusterqueues/{name}") or {}
    conditions = (queue.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Active" and c["status"] == "True" for c in conditions)


WORKLOADS = f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NAMESPACE}/workloads"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
OWNERS = (
    "tfjobs.kubeflow.org",
    "pytorchjobs.kubeflow.org",
    "xgboostjobs.kubeflow.org",
    "jaxjobs.kubeflow.org",
    "paddlejobs.kubeflow.org",
    "mpijobs.kubeflow.org",
    "trainjobs.trainer.kubeflow.org",
    "jobsets.jobset.x-k8s.io",
    "jobs.batch",
)


def _clean(cluster: ControlPlane) -> None:
    """Delete every job object, pod and Workload of the namespace, and wait until gone."""
    cluster.kubectl(
        "delete", ",".join(OWNERS), "--all", "-n", NAMESPACE, "--wait=false", check=False
    )
    cluster.kubectl(
        "delete",
        "pods,services,configmaps,secrets",
        "--all",
        "-n",
        NAMESPACE,
        "--grace-period=0",
        "--force",
        # Not waited for: pods of a pod group go only once their finalizer is lifted.
        "--wait=false",
        check=False,
    )

    def gone() -> bool:
        # Pods of a pod group keep Kueue's finalizer (kueue.x-k8s.io/managed), which no
        # kubelet's report lifts here: lift it from each pod left, again until none is.
        pods = cluster.client.items(PODS)
        for pod in pods:
            cluster.kubectl(
                "patch",
                "pod",
                pod["metadata"]["name"],
                "-n",
                NAMESPACE,
                "--type=merge",
                "-p",
                '{"metadata":{"finalizers":null}}',
                check=False,
            )
        workloads = cluster.client.items(WORKLOADS)
        if workloads:
            cluster.kubectl(
                "delete",
                "workloads.kueue.x-k8s.io",
                "--all",
                "-n",
                NAMESPACE,
                "--wait=false",
                check=False,
            )
        return not pods and not workloads

    poll("the namespace's pods and Workloads to go", gone, 90, every=1)


def _condition(workload: Doc, kind: str) -> Doc:
    for c in (workload.get("status") or {}).get("conditions") or []:
        if c["type"] == kind:
            return dict(c)
    return {}


def _admitted(cluster: ControlPlane, expected: int) -> list[Doc] | None:
    workloads = cluster.client.items(WORKLOADS)
    if len(workloads) < expected:
        return None
    if all(_condition(w, "Admitted").get("status") == "True" for w in workloads):
        return workloads
    return None


def _running_pods(cluster: ControlPlane, count: int) -> list[Doc] | None:
    pods = [p for p in cluster.client.items(PODS) if not p["metadata"].get("deletionTimestamp")]
    if len(pods) < count or not all(p["spec"].get("nodeName") for p in pods):
        return None
    return pods


def _held(cluster: ControlPlane, expected: int) -> list[Doc] | None:
    workloads = cluster.client.items(WORKLOADS)
    if len(workloads) < expected:
        return None
    reasons = [_condition(w, "QuotaReserved") for w in workloads]
    if all(r.get("status") == "False" and r.get("message") for r in reasons):
        return workloads
    return None


def _workloads_expected(manifests: list[Doc]) -> int:
    """How many Workloads Kueue makes of the job: one per queued object (the custom
    resource, a JobSet, each labelled batch Job) plus one per pod group."""
    count = 0
    groups = set()
    for m in manifests:
        labels = (m.get("metadata") or {}).get("labels") or {}
        if m["kind"] == "Pod":
            group = labels.get("kueue.x-k8s.io/pod-group-name")
            if group:
                groups.add(group)
        elif QUEUE_LABEL in labels:
            count += 1
    return count + len(groups)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_kueue_admits_what_check_admits(cluster: ControlPlane, kueue: Kueue, case: Case) -> None:
    verdict, manifests = _check(case)
    expected = _workloads_expected(manifests)
    assert expected, "the render labels nothing for Kueue"
    result = apply(cluster, manifests, dry_run=False)
    assert result.ok, str(result)
    try:
        if case.queue == ROOMY:
            workloads = poll(
                "Kueue to admit every Workload", lambda: _admitted(cluster, expected), 60
            )
            pods = poll(
                "the job's pods scheduled", lambda: _running_pods(cluster, _pods_of(case)), 60
            )
            nodes = {n["metadata"]["name"] for n in _nodes()}
            assert {p["spec"]["nodeName"] for p in pods} <= nodes
            kueue_says = "admits"
            assert all(w["status"]["admission"]["clusterQueue"] == ROOMY for w in workloads), (
                workloads
            )
        else:
            workloads = poll(
                "Kueue to hold every Workload for want of quota or of a covered resource",
                lambda: _held(cluster, expected),
                60,
            )
            messages = sorted({_condition(w, "QuotaReserved")["message"] for w in workloads})
            assert all(
                "insufficient" in m or "quota" in m or "unavailable in ClusterQueue" in m
                for m in messages
            ), messages
            kueue_says = "refuses: " + "; ".join(messages)
            scheduled = [p for p in cluster.client.items(PODS) if p["spec"].get("nodeName")]
            assert not scheduled, [p["metadata"]["name"] for p in scheduled]
        AGREEMENT.append((case.id, verdict, kueue_says))
        assert verdict.startswith("admits") == kueue_says.startswith("admits"), (
            verdict,
            kueue_says,
        )
    finally:
        _clean(cluster)
        for m in manifests:
            if not m["metadata"].get("namespace"):  # the trainer target's ClusterTrainingRuntime
                cluster.kubectl("delete", m["kind"], m["metadata"]["name"], check=False)


def _pods_of(case: Case) -> int:
    """Pods the job runs: 2 GPU pods, plus the MPI launcher (either version)."""
    return 3 if case.kind.startswith("MPIJob") else 2


def agreement() -> list[str]:
    """The agreement table: each case, what check said, what Kueue did; then the cases
    where only one of them refused (printed at the end of the run: tests/cluster/conftest.py)."""
    if not AGREEMENT:
        return []
    refused = [r for r in AGREEMENT if r[1].startswith("admits") != r[2].startswith("admits")]
    only_kueue = [r[0] for r in refused if r[1].startswith("admits")]
    only_check = [r[0] for r in refused if r[2].startswith("admits")]
    width = max(len(r[0]) for r in AGREEMENT)
    lines = ["", f"{'Kueue admission (case)':<{width}}  check | Kueue"]
    lines += [f"{c:<{width}}  {k} | {q[:140]}" for c, k, q in AGREEMENT]
    lines += [
        f"only Kueue refuses: {only_kueue or 'none'}",
        f"only check refuses: {only_check or 'none'}",
    ]
    return lines


def test_the_vendored_crds_are_the_running_kueues() -> None:
    """crds/kueue-<version> holds, byte for byte, the CRDs of the Kueue release the tests
    build and run (copied beside its binary by build.sh)."""
    from tests.cluster.kueue import kueue_bin_dir
    from trainjobs.k8s.crds import crd_files

    env = (Path(__file__).parent / "versions.env").read_text()
    (version,) = re.findall(r"^KUEUE_VERSION=(\S+)$", env, re.MULTILINE)
    vendored = {p.name: p for p in crd_files() if p.parent.name == f"kueue-{version}"}
    assert vendored
    built = kueue_bin_dir()
    for name, path in vendored.items():
        plural = name.removeprefix("kueue.x-k8s.io_")
        assert (built / f"kueue-crd-{plural}").read_bytes() == path.read_bytes(), name
