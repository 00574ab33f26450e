"""Findings located where the user wrote the field, on every target; else in the object."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support.corpus import is_job
from tests.support.paths import example_job_files
from trainjobs.check.rules import RuleContext, rule_findings
from trainjobs.check.rules.locate import JobOrigins
from trainjobs.check.rules.sites import get_path
from trainjobs.k8s.yamlio import load_all
from trainjobs.render import render
from trainjobs.spec import parse_documents

RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}}


def _tfjob(worker_key: str = "Worker") -> dict[str, Any]:
    def replica(image: str, **extra: Any) -> dict[str, Any]:
        c = {"name": "tensorflow", "image": image, "resources": RESOURCES, **extra}
        return {"replicas": 2, "template": {"spec": {"containers": [c]}}}

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": "training"},
        "spec": {
            "runPolicy": {"ttlSecondsAfterFinished": 60},
            "tfReplicaSpecs": {
                "PS": replica("tf:2"),
                worker_key: replica("tensorflow/tensorflow"),
            },
        },
    }


def _paths(doc: dict[str, Any], target: str) -> list[tuple[str, str]]:
    rendering = render(parse_documents([doc]), target)  # type: ignore[arg-type]
    return [(f.code, f.path) for f in rule_findings(rendering, RuleContext())]


@pytest.mark.parametrize("target", ["operator", "pods"])
def test_a_template_field_is_located_in_the_template_once(target: str) -> None:
    assert _paths(_tfjob(), target) == [
        ("image.unpinned", "jobs[0].spec.tfReplicaSpecs.Worker.template.spec.containers[0].image")
    ]


@pytest.mark.parametrize("target", ["operator", "pods"])
def test_a_respelt_replica_key_is_named_as_written(target: str) -> None:
    assert _paths(_tfjob("worker"), target) == [
        ("image.unpinned", "jobs[0].spec.tfReplicaSpecs.worker.template.spec.containers[0].image")
    ]


def test_what_the_render_added_stays_located_in_the_object() -> None:
    doc = _tfjob()
    doc["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["image"] = "tf:2"
    doc["spec"]["tfReplicaSpecs"]["PS"]["restartPolicy"] = "Always"
    # The pod's restartPolicy comes from the replica, not from the template.
    assert _paths(doc, "pods") == [
        ("restart.always", "jobs[0] → Pod training/mnist-ps-0: spec.restartPolicy"),
        ("restart.always", "jobs[0] → Pod training/mnist-ps-1: spec.restartPolicy"),
    ]
    assert _paths(doc, "operator") == [
        ("restart.always", "jobs[0].spec.tfReplicaSpecs.PS.restartPolicy")
    ]


def _mpijob() -> dict[str, Any]:
    def replica(name: str, image: str) -> dict[str, Any]:
        c = {"name": name, "image": image, "resources": RESOURCES}
        return {"replicas": 1, "template": {"spec": {"containers": [c]}}}

    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "pi", "namespace": "training"},
        "spec": {
            "launcherCreationPolicy": "WaitForWorkersReady",
            "runPolicy": {"ttlSecondsAfterFinished": 60},
            "mpiReplicaSpecs": {"Launcher": replica("l", "mpi:1"), "Worker": replica("w", "mpi")},
        },
    }


def test_a_batch_jobs_template_is_located_in_its_replica() -> None:
    doc = _mpijob()
    doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["hostIPC"] = True
    assert _paths(doc, "pods") == [
        ("image.unpinned", "jobs[0].spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image"),
        (
            "pss.baseline.host_namespaces",
            "jobs[0].spec.mpiReplicaSpecs.Launcher.template.spec.hostIPC",
        ),
    ]


def test_containers_the_operator_adds_are_not_blamed_on_the_user() -> None:
    (job,) = render(parse_documents([_mpijob()]), "pods").jobs
    launcher = next(o.manifest for o in job.objects if o.manifest["kind"] == "Job")
    init = launcher["spec"]["template"]["spec"]["initContainers"][0]
    assert init["name"] == "wait-for-workers"  # added by the launcherCreationPolicy
    origins = JobOrigins(job)
    assert origins.locate(launcher, "spec.template.spec.initContainers[0].image") is None
    assert origins.locate(launcher, "spec.template.spec.containers[0].resources") == (
        "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].resources"
    )
    # The launcher's env is the user's plus the operator's: not what the user wrote.
    assert origins.locate(launcher, "spec.template.spec.containers[0].env") is None
    assert origins.locate(launcher, "metadata.name") is None


def _example_jobs() -> list[tuple[list[Any], int]]:
    """Each job document of each example, with the documents of its file (its backends …)."""
    cases = []
    for path in example_job_files():
        docs = load_all(path.read_text())
        for index, doc in enumerate(docs):
            if is_job(doc):
                cases.append((docs, index))
    return cases


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=st.sampled_from(_example_jobs()),
    pick=st.integers(min_value=0, max_value=1000),
    port=st.integers(min_value=1, max_value=65535),
    target=st.sampled_from(["operator", "pods"]),
)
def test_a_field_written_in_any_template_is_found_where_it_was_written(
    case: tuple[list[Any], int], pick: int, port: int, target: str
) -> None:
    """Any example, any of its templates and containers, either target: a host port the
    user writes is reported at the very path it was written."""
    docs = copy.deepcopy(case[0])
    doc = docs[case[1]]
    (entry,) = parse_documents([doc]).jobs
    assume(target in entry.framework.targets)
    refs = [r for r in entry.framework.pod_templates(entry.job) if r.replicas > 0]
    assume(refs)  # a kind without pod templates (EDL TrainingJob) is located in its objects
    ref = refs[pick % len(refs)]
    # A TrainJob's templates are its runtime's, not in the job document it is checked by.
    assume(isinstance(get_path(doc, ref.path), dict) and "spec" in get_path(doc, ref.path))
    containers = get_path(doc, ref.path)["spec"]["containers"]
    index = pick % len(containers)
    ports = containers[index].setdefault("ports", [])
    # Named: several ports of a Service must be (the API server refuses it otherwise).
    ports.append({"name": "host", "containerPort": port, "hostPort": port})
    stack = parse_documents(docs)
    written = f"{stack.jobs[0].path}.{ref.path}.spec.containers[{index}].ports[{len(ports) - 1}]"
    rendering = render(stack, target)  # type: ignore[arg-type]
    findings = rule_findings(rendering, RuleContext())
    assert [f.path for f in findings if f.code == "pss.baseline.host_ports"] == [
        f"{written}.hostPort"
    ]
