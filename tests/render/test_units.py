"""Units and their dependencies: what the Pulumi components create in which order."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from trainjobs.errors import SpecError
from trainjobs.k8s.data import Manifest
from trainjobs.platform.base import (
    PlatformKind,
    PlatformMeta,
    PlatformResource,
    Reference,
)
from trainjobs.render import UnitRef, render
from trainjobs.spec import PlatformEntry, StackSpec, parse_documents

TFJOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "tf", "namespace": "ml"},
    "spec": {
        "tfReplicaSpecs": {
            "Worker": {
                "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}}
            }
        }
    },
}


class FakeOperator(PlatformResource):
    kind: Literal["FakeOperator"] = "FakeOperator"
    spec: Any = None


class FakeOperatorKind(PlatformKind[FakeOperator]):
    """Installs the TFJob CRD and, optionally, refers to another operator."""

    kind = "FakeOperator"
    category = "operator"
    model = FakeOperator
    title = "test operator"
    default_namespace = None

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"tfjobs.kubeflow.org-{resource.name}"},
            "spec": {"group": "kubeflow.org", "names": {"kind": "TFJob", "plural": "tfjobs"}},
        }
        return [crd] if resource.name == "installer" else []

    def references(self, resource: PlatformResource) -> list[Reference]:
        needs = resource.spec or []
        return [Reference("operator", name, f"spec[{i}]") for i, name in enumerate(needs)]


def _operator(name: str, needs: list[str] | None = None, index: int = 0) -> PlatformEntry:
    resource = FakeOperator(metadata=PlatformMeta(name=name), spec=needs)
    return PlatformEntry(resource, FakeOperatorKind(), f"operators[{index}]")


def test_operator_target_jobs_wait_for_the_unit_installing_their_crd() -> None:
    jobs = parse_documents([TFJOB]).jobs
    stack = StackSpec(jobs=jobs, platform=(_operator("installer"),), namespaces=("ml",))
    rendering = render(stack)
    assert [str(u.ref) for u in rendering.units] == [
        "namespace ml",
        "operator installer",
        "job ml/tf",
    ]
    job = rendering.jobs[0]
    assert job.depends_on == (UnitRef("operator", "installer"), UnitRef("namespace", "ml"))
    # On the pods target there is no custom resource, so no operator to wait for.
    pods = render(stack, target="pods").jobs[0]
    assert pods.depends_on == (UnitRef("namespace", "ml"),)


def test_units_come_after_what_they_depend_on_whatever_the_input_order() -> None:
    stack = StackSpec(
        platform=(
            _operator("a", ["b"], 0),
            _operator("b", ["c"], 1),
            _operator("c", [], 2),
        )
    )
    assert [u.ref.name for u in render(stack).units] == ["c", "b", "a"]


def test_a_circle_of_references_is_an_error() -> None:
    stack = StackSpec(platform=(_operator("a", ["b"], 0), _operator("b", ["a"], 1)))
    with pytest.raises(SpecError) as err:
        render(stack)
    assert [f.render() for f in err.value.errors] == [
        "error: operators[0]: these resources depend on each other in a circle: "
        "operator a → operator b → operator a; fix: remove one of the references"
    ]


def test_unknown_platform_reference_names_its_path() -> None:
    with pytest.raises(SpecError) as err:
        render(StackSpec(platform=(_operator("a", ["ghost"]),)))
    assert [f.render() for f in err.value.errors] == [
        "error: operators[0].spec[0]: no operator named 'ghost' in this stack (got 'ghost'); "
        "fix: use one of: a"
    ]
