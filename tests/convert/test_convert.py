"""``trainjobs convert``: every example of a convertible kind becomes a TrainJob that
trainjobs' own checks accept, and whose pods run what the v1 job's ran; every field it
cannot carry is listed; refused kinds say why."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion

from tests.support.paths import example_job_files
from trainjobs.check import run
from trainjobs.convert import convert_job, convert_text
from trainjobs.convert.kinds import CONVERTIBLE, REFUSED
from trainjobs.errors import Severity
from trainjobs.k8s.yamlio import dump_all
from trainjobs.spec import load_path, parse_documents

Doc = dict[str, Any]


def _docs(path: Path) -> list[Doc]:
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


def _kinds(path: Path) -> set[tuple[str, str]]:
    return {(str(d.get("apiVersion")), str(d.get("kind"))) for d in _docs(path)}


CONVERTIBLE_FILES = [p for p in example_job_files() if _kinds(p) & set(CONVERTIBLE)]
REFUSED_FILES = [
    p
    for p in example_job_files()
    if {k for _, k in _kinds(p)} & set(REFUSED) and not _kinds(p) & set(CONVERTIBLE)
]


def _id(path: Path) -> str:
    return path.parent.name


def test_every_convertible_kind_has_an_example() -> None:
    covered = set().union(*(_kinds(p) for p in CONVERTIBLE_FILES))
    assert set(CONVERTIBLE) <= covered
    refused = {k for p in REFUSED_FILES for _, k in _kinds(p)}
    assert {"TFJob", "PaddleJob", "MXJob", "Caffe2Job", "MSJob", "TrainingJob"} <= refused


@pytest.mark.parametrize("path", CONVERTIBLE_FILES, ids=_id)
def test_converted_examples(path: Path, yaml_snapshot: SnapshotAssertion) -> None:
    """The converted file (and what was not carried) as a reviewer reads it."""
    result = convert_text(path.read_text(), path.name, path.parent)
    notes = [f"# {f.severity.value}: {f.path}: {f.message} ({f.value!r})" for f in result.findings]
    assert "\n".join([*notes, dump_all(result.objects)]) == yaml_snapshot


@pytest.mark.parametrize("path", CONVERTIBLE_FILES, ids=_id)
def test_converted_jobs_pass_every_check(path: Path) -> None:
    result = convert_text(path.read_text(), path.name, path.parent)
    assert result.converted
    assert not [f for f in result.findings if f.severity is Severity.ERROR]
    for target in ("operator", "pods"):
        rendering = run(parse_documents(result.objects, source=path.name), target=target)
        assert not [f for f in rendering.findings if f.severity is Severity.ERROR], target


def _container(template: Doc) -> Doc:
    return dict(template["spec"]["containers"][0])


def _what_runs(template: Doc) -> tuple[Any, ...]:
    """What the training code sees of its pod, apart from names and env."""
    c = _container(template)
    requests = {k: str(v) for k, v in ((c.get("resources") or {}).get("requests") or {}).items()}
    limits = {k: str(v) for k, v in ((c.get("resources") or {}).get("limits") or {}).items()}
    volumes = sorted(v["name"] for v in template["spec"].get("volumes") or [])
    mounts = sorted((m["name"], m["mountPath"]) for m in c.get("volumeMounts") or [])
    return (
        c.get("image"),
        tuple(c.get("command") or ()),
        tuple(c.get("args") or ()),
        tuple(sorted(requests.items())),
        tuple(sorted(limits.items())),
        tuple(volumes),
        tuple(mounts),
    )


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in CONVERTIBLE_FILES
        if ("kubeflow.org/v2beta1", "MPIJob") not in _kinds(p)
        and ("kubeflow.org/v1", "MPIJob") not in _kinds(p)
    ],
    ids=_id,
)
def test_the_pods_run_what_the_v1_pods_ran(path: Path) -> None:
    """Rendered to pods, the v1 job's pods and the TrainJob's pods (Indexed Job
    completions) are as many, with the same image, command, resources and volumes, and
    the same node count and ranks (torch: WORLD_SIZE/RANK vs PET_NNODES/PET_NODE_RANK)."""
    before = run(load_path(path), target="pods").manifests
    result = convert_text(path.read_text(), path.name, path.parent)
    after = run(parse_documents(result.objects, source=path.name), target="pods").manifests
    v1_pods = [m for m in before if m["kind"] == "Pod"]
    v2 = [m for m in after if m["kind"] == "Job"]
    assert v1_pods and v2
    v1_runs = Counter(_what_runs(p) for p in v1_pods)
    v2_runs: Counter[tuple[Any, ...]] = Counter()
    for job in v2:
        v2_runs[_what_runs(job["spec"]["template"])] += int(job["spec"].get("parallelism", 1))
    assert v2_runs == v1_runs
    env = {e["name"]: e.get("value") for e in _container(v2[0]["spec"]["template"]).get("env", [])}
    # Every variable the v1 operator gave the pods, the training code finds again.
    v1_names = {e["name"] for p in v1_pods for e in _container(p).get("env", [])}
    assert {n for n in v1_names if not n.startswith("PET_")} <= set(env)
    if "PET_NNODES" in env:
        sizes = {
            e["value"]
            for p in v1_pods
            for e in _container(p).get("env", [])
            if e["name"] == "WORLD_SIZE"
        }
        if not sizes:
            return  # no Master: the v1 operator sets no WORLD_SIZE (torchrun's rendezvous)
        assert sizes == {env["PET_NNODES"]}
        ranks = sorted(
            int(e["value"]) for p in v1_pods for e in _container(p)["env"] if e["name"] == "RANK"
        )
        assert ranks == list(range(int(env["PET_NNODES"])))
        assert v2[0]["spec"]["completionMode"] == "Indexed"


@pytest.mark.parametrize("path", REFUSED_FILES, ids=_id)
def test_refused_kinds_say_why_and_what_to_do(path: Path) -> None:
    result = convert_text(path.read_text(), path.name, path.parent)
    refusals = [f for f in result.findings if f.code == "convert.kind"]
    assert refusals and all(f.severity is Severity.ERROR for f in refusals)
    assert all("cannot become a TrainJob" in f.message and f.hint for f in refusals)
    assert not result.converted and not result.texts


def _pytorch(**spec: Any) -> Doc:
    template = {
        "spec": {"containers": [{"name": "pytorch", "image": "img:1", "command": ["torchrun"]}]}
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "t", "namespace": "ns"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": copy.deepcopy(template)},
                "Worker": {"replicas": 2, "template": copy.deepcopy(template)},
            },
            **spec,
        },
    }


def test_every_field_not_carried_is_listed_with_path_value_and_why() -> None:
    job = _pytorch(
        nprocPerNode="gpu",
        elasticPolicy={"minReplicas": 1, "maxReplicas": 3, "rdzvBackend": "c10d"},
        runPolicy={
            "cleanPodPolicy": "All",
            "ttlSecondsAfterFinished": 60,
            "schedulingPolicy": {"minAvailable": 3, "queue": "q"},
        },
    )
    job["metadata"]["finalizers"] = ["x"]
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["nodeSelector"] = {"a": "b"}
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    result = convert_job(job)
    listed = {f.path: f.value for f in result.findings}
    assert listed == {
        "metadata.finalizers": ["x"],
        "spec.runPolicy.cleanPodPolicy": "All",
        "spec.runPolicy.ttlSecondsAfterFinished": 60,
        "spec.runPolicy.schedulingPolicy.minAvailable": 3,
        "spec.runPolicy.schedulingPolicy.queue": "q",
        "spec.pytorchReplicaSpecs.Worker.restartPolicy": "ExitCode",
        "spec.pytorchReplicaSpecs.Master.template.spec.nodeSelector.a": "b",
        "spec.pytorchReplicaSpecs.Master.restartPolicy": "OnFailure",
        "spec.nprocPerNode": "gpu",
        "spec.elasticPolicy.minReplicas": 1,
        "spec.elasticPolicy.maxReplicas": 3,
        "spec.elasticPolicy.rdzvBackend": "c10d",
    }
    assert all(f.severity is Severity.WARNING and f.message and f.hint for f in result.findings)
    assert result.converted


def test_a_field_the_framework_does_not_know_is_an_error() -> None:
    result = convert_job(_pytorch(someFutureField={"a": 1}))
    assert not result.converted
    assert [f.path for f in result.findings if f.severity is Severity.ERROR] == [
        "jobs[0].spec.someFutureField"
    ]


def test_a_plain_job_fits_the_shipped_runtime_and_carries_nproc() -> None:
    result = convert_job(_pytorch(nprocPerNode="4"))
    assert result.findings == []
    (trainjob,) = result.objects
    assert trainjob["spec"]["runtimeRef"]["name"] == "torch-distributed"
    rank = {
        "fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        }
    }
    assert trainjob["spec"]["trainer"] == {
        "numNodes": 3,
        "numProcPerNode": 4,
        "image": "img:1",
        "command": ["torchrun"],
        # What the v1 operator set beside torchrun's PET_* (which Trainer sets itself):
        # the same values, its pod names now the nodes', the rank the Job's index.
        "env": [
            {"name": "PYTHONUNBUFFERED", "value": "1"},
            {"name": "MASTER_PORT", "value": "23456"},
            {"name": "MASTER_ADDR", "value": "t-node-0-0.t"},
            {"name": "WORLD_SIZE", "value": "12"},
            {"name": "RANK", "valueFrom": rank},
        ],
    }


def test_a_template_with_more_than_trainer_sets_gets_its_own_runtime() -> None:
    job = _pytorch()
    for role in ("Master", "Worker"):
        spec = job["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]
        spec["volumes"] = [{"name": "data", "emptyDir": {}}]
        spec["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    runtime, trainjob = convert_job(job).objects
    assert (runtime["kind"], runtime["metadata"]) == (
        "TrainingRuntime",
        {"name": "t", "namespace": "ns", "labels": {"trainer.kubeflow.org/framework": "torch"}},
    )
    assert trainjob["spec"]["runtimeRef"] == {
        "name": "t",
        "apiGroup": "trainer.kubeflow.org",
        "kind": "TrainingRuntime",
    }
    node = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert node["template"]["spec"]["volumes"] == [{"name": "data", "emptyDir": {}}]


def test_queue_labels_and_options_are_kept() -> None:
    job = _pytorch()
    job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
    job["trainjobs"] = {"target": "pods", "queue": "team-a"}
    (trainjob,) = convert_job(job).objects
    assert trainjob["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "team-a"}
    # The target named a v1 job's expansion; a TrainJob chooses its own.
    assert trainjob["trainjobs"] == {"queue": "team-a"}


def test_other_documents_are_kept_as_they_are() -> None:
    pool = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "GpuNodePool",
        "metadata": {"name": "p"},
    }
    assert convert_job(pool).objects == [pool]
    assert not convert_job(pool).converted


def test_an_invalid_job_is_refused_with_its_framework_findings() -> None:
    job = _pytorch()
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = -1
    result = convert_job(job)
    assert result.objects == []
    assert [f for f in result.findings if f.severity is Severity.ERROR]


def test_an_intel_mpi_job_is_refused() -> None:
    path = next(p for p in CONVERTIBLE_FILES if ("kubeflow.org/v2beta1", "MPIJob") in _kinds(p))
    doc = next(d for d in _docs(path) if d["kind"] == "MPIJob")
    doc["spec"]["mpiImplementation"] = "Intel"
    result = convert_job(doc)
    assert not result.converted
    assert [f.path for f in result.findings if f.severity is Severity.ERROR] == [
        "spec.mpiImplementation"
    ]
