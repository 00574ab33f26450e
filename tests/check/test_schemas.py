"""Schema and name checks over rendered manifests."""

from __future__ import annotations

from trainjobs.check import crd_schema, k8s_schema
from trainjobs.check.names import name_findings
from trainjobs.render import RenderedObject

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"containers": [{"name": "c", "image": "i:1"}]},
}


def test_valid_pod_has_no_problems() -> None:
    assert k8s_schema.problems(POD, "1.32") == []


def test_pod_problems_have_paths() -> None:
    bad = {
        **POD,
        "spec": {"containers": [{"name": "c", "image": "i:1", "ports": [{"containerPort": "x"}]}]},
    }
    assert k8s_schema.problems(bad, "1.32") == [
        ("spec.containers[0].ports[0].containerPort", "'x' is not of type 'integer'", "x")
    ]


def test_unknown_fields_suggest_a_spelling() -> None:
    bad = {
        **POD,
        "spec": {"containers": [{"name": "c", "image": "i:1", "imagePullPolcy": "Never"}]},
    }
    assert k8s_schema.problems(bad, "1.32") == [
        (
            "spec.containers[0].imagePullPolcy",
            "unknown field (did you mean 'imagePullPolicy'?)",
            "Never",
        )
    ]


def test_versions_are_bundled() -> None:
    assert "1.32" in k8s_schema.available_versions()


def test_crd_schema_checks_custom_resources() -> None:
    tfjob = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "x"},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": "two"}}},
    }
    problems = crd_schema.problems(tfjob)
    assert problems == [
        ("spec.tfReplicaSpecs.Worker.replicas", "'two' is not of type 'integer'", "two")
    ]
    assert crd_schema.problems({**tfjob, "spec": {}}) == [
        ("spec", "'tfReplicaSpecs' is a required property", {})
    ]
    assert crd_schema.problems({"apiVersion": "example.com/v1", "kind": "Nothing"}) is None


def test_both_mpijob_versions_are_found_by_version() -> None:
    v1 = crd_schema.schema_for("kubeflow.org/v1", "MPIJob")
    v2 = crd_schema.schema_for("kubeflow.org/v2beta1", "MPIJob")
    assert v1 is not None and v2 is not None
    assert v1 != v2


def _obj(kind: str, name: str, origin: str = "jobs[0]") -> RenderedObject:
    return RenderedObject(
        {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "ns"}}, origin
    )


def test_name_rules_per_kind_and_duplicates() -> None:
    findings = name_findings(
        [
            _obj("Service", "0svc"),
            _obj("Pod", "0pod"),
            _obj("Pod", "Bad_Pod"),
            _obj("Pod", "dup"),
            _obj("Pod", "dup", "jobs[1]"),
        ]
    )
    assert [(f.code, f.path) for f in findings] == [
        ("name.invalid", "jobs[0] → Service ns/0svc: metadata.name"),
        ("name.invalid", "jobs[0] → Pod ns/Bad_Pod: metadata.name"),
        ("name.duplicate", "jobs[1] → Pod ns/dup: metadata.name"),
    ]
    assert findings[2].message == "jobs[0] already renders Pod ns/dup"


def _namespace(name: str, origin: str) -> RenderedObject:
    return RenderedObject(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, origin
    )


def test_a_name_finding_says_how_to_fix_it_where_the_object_comes_from() -> None:
    # A namespace of trainjobs:namespaces or an operator's was told to "rename the job".
    findings = name_findings(
        [
            _namespace("Kubeflow", "namespaces[0]"),
            _namespace("training", "namespaces[1]"),
            _namespace("training", "namespaces[2]"),
            _namespace("kubeflow", "namespaces[3]"),
            _namespace("kubeflow", "operators[0]"),
            _obj("Pod", "Bad_Pod"),
            _obj("Service", "Redis_1", "backends[0]"),
            _obj("Pod", "Bad_Pod", "jobs[1]"),
        ]
    )
    assert [f.hint for f in findings] == [
        "write the namespace in trainjobs:namespaces in lowercase letters, digits and '-'",
        "list the namespace once in trainjobs:namespaces",
        "create the namespace in one place: drop it from trainjobs:namespaces, or set "
        "createNamespace: false on operators[0]",
        "shorten or rename the job; object names derive from it",
        "shorten or rename the resource (its metadata.name); object names derive from it",
        "shorten or rename the job; object names derive from it",
        "give one of the jobs another name or namespace",
    ]
