"""The render's own rules for any job: names, namespaces and how many pods it may run."""

from __future__ import annotations

from typing import Any

from trainjobs.frameworks.registry import REGISTRY
from trainjobs.plan import JobPlan
from trainjobs.render.jobs import MAX_PODS_PER_JOB, name_findings, pod_count_findings

TF = REGISTRY.by_name("tensorflow")


def _defaulted(name: str = "mnist", namespace: str = "training", workers: int = 2) -> Any:
    assert TF is not None
    container = {"name": "tensorflow", "image": "tf:1"}
    document = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": workers, "template": {"spec": {"containers": [container]}}}
            }
        },
    }
    return TF.default(TF.model.model_validate(document))


def _job(name: str = "mnist", namespace: str = "training", workers: int = 2) -> JobPlan:
    assert TF is not None
    return TF.plan(_defaulted(name, namespace, workers))


def test_job_names_and_namespaces_follow_kubernetes() -> None:
    assert name_findings(_job(name="ok", namespace="training")) == []
    long = "x" * 64
    found = name_findings(_job(name=long, namespace="Bad_NS"))
    assert [(f.code, f.path, f.message) for f in found] == [
        ("name.invalid", "metadata.name", "the job name must be at most 63 characters, has 64"),
        (
            "namespace.invalid",
            "metadata.namespace",
            "the namespace must be a DNS-1123 label: lowercase letters, digits and '-', "
            "starting and ending with a letter or digit (e.g. 'bad-ns')",
        ),
    ]


def test_a_field_the_framework_reported_is_not_reported_twice() -> None:
    job = _defaulted(name="Bad_Name")
    assert TF is not None
    own = TF.validate(job)
    assert any(f.path == "metadata.name" for f in own)
    assert name_findings(TF.plan(job), own) == []


def test_too_many_pods_name_the_largest_count() -> None:
    assert TF is not None
    assert pod_count_findings(_job(workers=MAX_PODS_PER_JOB)) == []
    (finding,) = pod_count_findings(_job(workers=MAX_PODS_PER_JOB + 1))
    assert (finding.code, finding.path, finding.value) == (
        "replicas.too_many",
        "spec.tfReplicaSpecs.Worker.replicas",
        10_001,
    )
    assert finding.message == (
        "the job would run 10,001 pods; trainjobs allows at most 10,000 pods in one job "
        "(TRAINJOBS_MAX_PODS_PER_JOB)"
    )
