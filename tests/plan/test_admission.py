"""The plan's pod owners and admission: what a capability puts on the Jobs or JobSet a
framework makes, kept across every later edit of the plan."""

from __future__ import annotations

from typing import Any

from tests.support.v1jobs import job, replica
from trainjobs.frameworks.kubeflow_v1 import KubeflowV1Framework
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.plan import Admission, JobPlan

JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "tj-node-0", "labels": {"jobset.sigs.k8s.io/jobset-name": "tj"}},
    "spec": {"parallelism": 2, "suspend": False},
}
LABEL = "example.com/queue"


def test_an_admission_labels_and_suspends_only_the_owners_it_names() -> None:
    admission = Admission({LABEL: "a"}, suspend=True)
    job = admission.apply(JOB, "jobs")
    assert list(job["metadata"]["labels"].items()) == [
        ("jobset.sigs.k8s.io/jobset-name", "tj"),
        (LABEL, "a"),
    ]
    assert job["spec"] == {"parallelism": 2, "suspend": True}
    assert JOB["metadata"]["labels"] == {"jobset.sigs.k8s.io/jobset-name": "tj"}
    assert JOB["spec"]["suspend"] is False
    # A Job that does not own the pods on this target, or any other kind, is left alone.
    assert admission.apply(JOB, "jobset") is JOB
    assert admission.apply(JOB, "pods") is JOB
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "tj"}}
    assert admission.apply(service, "jobs") is service
    assert Admission().apply(JOB, "jobs") is JOB


def test_admissions_merge_later_labels_winning() -> None:
    merged = Admission({LABEL: "a"}).merged({LABEL: "b", "x": "y"}, suspend=True)
    assert merged == Admission({LABEL: "b", "x": "y"}, suspend=True)
    assert Admission({}, suspend=True).merged({}).suspend


def _plan() -> JobPlan:
    framework: KubeflowV1Framework[Any] = REGISTRY.named("pytorch")  # type: ignore[assignment]
    parsed = job(framework, {"Master": replica("pytorch", 1)}, "pt")
    return framework.plan(framework.default(parsed))


def test_a_v1_kind_owns_its_pods_by_its_resource_and_on_pods_by_none() -> None:
    plan = _plan()
    assert plan.pod_owner("operator") == "resource"
    assert plan.pod_owner("trainer") == "trainjob"
    assert plan.pod_owner("pods") == "pods"
    assert plan.admission == Admission() and plan.unadmitted_warning is None


def test_the_admission_survives_edits_that_replan_the_resource() -> None:
    plan = _plan().with_admission({LABEL: "a"}, suspend=True)
    (master,) = plan.pod_sets
    template = {**master.template, "metadata": {"labels": {"pool": "x"}}}
    edited = plan.with_templates({"Master": template}).with_labels({"team": "ml"})
    assert edited.admission == Admission({LABEL: "a"}, suspend=True)
    assert edited.labels == {"team": "ml"}
    (changed,) = edited.pod_sets
    assert changed.template["metadata"] == {"labels": {"pool": "x"}}
