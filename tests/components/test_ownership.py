"""The ownership guard under Pulumi mocks: what the program registers, refuses and adopts
depending on what the cluster already holds (the reader stands for the cluster; the real
cluster is read in tests/cluster/pulumi_up/test_shared_cluster.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pytest

from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import program
from trainjobs.components.ownership import reading
from trainjobs.k8s.ownership import STACK_ANNOTATION, STACK_LABEL, ObjectKey


def _job(name: str = "tf") -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "tf:2"}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": "training"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [container]}}}
            }
        },
        "trainjobs": {"target": "pods"},
    }


class Cluster:
    """What a reader reports: the labels of each object the cluster has."""

    def __init__(self, objects: Mapping[tuple[str, str, str], Mapping[str, str]]) -> None:
        self.objects = dict(objects)
        self.asked: list[ObjectKey] = []

    def __call__(self, keys: Sequence[ObjectKey]) -> dict[ObjectKey, Mapping[str, str] | None]:
        self.asked += keys
        return {k: self.objects.get((k.kind, k.namespace, k.name)) for k in keys}


def _run(cluster: Cluster, config: dict[str, Any]) -> tuple[str, list[Registered]]:
    registered: list[Registered] = []
    with reading(cluster):
        try:
            run_program(program, config, into=registered)
        except pulumi.RunError as exc:
            return str(exc), registered
    return "", registered


def test_every_object_is_labelled_with_the_stack_that_made_it() -> None:
    """Fails without the owner label: the next update could not tell its own objects."""
    message, registered = _run(
        Cluster({}), {"trainjobs:namespaces": ["training"], "trainjobs:jobs": [_job()]}
    )
    assert message == ""
    objects = [r for r in registered if r.custom and r.type.startswith("kubernetes:")]
    assert objects
    for obj in objects:
        meta = obj.inputs["metadata"]
        assert meta["labels"][STACK_LABEL] == "trainjobs.test"
        assert meta["annotations"][STACK_ANNOTATION] == "trainjobs/test"


def test_an_existing_namespace_of_someone_else_stops_the_program_before_anything() -> None:
    """Fails without the guard: the provider would take the namespace over, and destroy
    would delete it with everything in it."""
    cluster = Cluster({("Namespace", "", "training"): {"team": "search"}})
    config = {"trainjobs:namespaces": ["training"], "trainjobs:jobs": [_job()]}
    message, registered = _run(cluster, config)
    assert "trainjobs:namespaces[0]: Namespace training already exists in the cluster" in message
    assert "add 'Namespace/training' to trainjobs:adopt" in message
    assert "trainjobs:sharedNamespaces" in message
    assert [r for r in registered if r.custom] == []


def test_every_refused_object_is_listed_at_once() -> None:
    cluster = Cluster(
        {
            ("Namespace", "", "training"): {},
            ("Pod", "training", "tf-worker-0"): {STACK_LABEL: "trainjobs.prod"},
        }
    )
    config = {"trainjobs:namespaces": ["training"], "trainjobs:jobs": [_job()]}
    message, _ = _run(cluster, config)
    assert "Namespace training already exists" in message
    assert "Pod training/tf-worker-0 already exists" in message
    assert "it belongs to stack trainjobs.prod" in message


def test_what_this_stack_made_is_its_own() -> None:
    cluster = Cluster({("Namespace", "", "training"): {STACK_LABEL: "trainjobs.test"}})
    config = {"trainjobs:namespaces": ["training"], "trainjobs:jobs": [_job()]}
    message, registered = _run(cluster, config)
    assert message == ""
    assert any(r.type == "kubernetes:core/v1:Namespace" for r in registered)


def test_adopt_takes_the_named_object_over_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda msg, *a, **k: said.append(msg))
    cluster = Cluster({("Namespace", "", "training"): {}})
    config = {
        "trainjobs:namespaces": ["training"],
        "trainjobs:adopt": ["Namespace/training"],
        "trainjobs:jobs": [_job()],
    }
    message, registered = _run(cluster, config)
    assert message == ""
    (ns,) = [r for r in registered if r.type == "kubernetes:core/v1:Namespace"]
    assert ns.inputs["metadata"]["labels"][STACK_LABEL] == "trainjobs.test"
    assert any(m.startswith("adopting Namespace training") for m in said)


def test_a_shared_namespace_is_read_never_registered_and_jobs_wait_for_it() -> None:
    """Fails while a shared namespace is a Namespace resource the stack owns."""
    cluster = Cluster({("Namespace", "", "kubeflow"): {}})
    job = {**_job(), "metadata": {"name": "tf", "namespace": "kubeflow"}}
    message, registered = _run(
        cluster, {"trainjobs:sharedNamespaces": ["kubeflow"], "trainjobs:jobs": [job]}
    )
    assert message == ""
    namespaces = [r for r in registered if r.type == "kubernetes:core/v1:Namespace"]
    # Read (Namespace.get): the mocks see it with its id, and nothing registers it as owned.
    assert [r.name for r in namespaces] == ["kubeflow"]
    assert ("Namespace", "", "kubeflow") not in {
        (k.kind, k.namespace, k.name) for k in cluster.asked
    }


def test_a_namespace_both_owned_and_shared_is_an_error() -> None:
    message, _ = _run(
        Cluster({}),
        {"trainjobs:namespaces": ["kubeflow"], "trainjobs:sharedNamespaces": ["kubeflow"]},
    )
    assert "namespace 'kubeflow' is both created and owned" in message
