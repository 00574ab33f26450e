"""Spelling edits: what the API server stores in one text is no change in a built-in object.

The expected actions are what ``pulumi preview --diff`` says after an ``up`` (measured with
kube-apiserver 1.36 and pulumi-kubernetes 4.25; pinned by
tests/cluster/pulumi_up/test_quantity_spelling.py): a Pod is the same after ``cpu: "1"``
becomes ``1`` or ``"1000m"``, and replaced after ``"2Gi"`` becomes ``2147483648``; a TFJob
(a custom resource, stored as written) is updated by each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.preview.jobs import Edit, example, render
from trainjobs.preview.plan import make_plan
from trainjobs.preview.spelling import is_built_in, quantity_field, server_same
from trainjobs.spec import Target


def _each_container(change: Callable[[dict[str, Any]], None]) -> Edit:
    def edit(job: dict[str, Any]) -> None:
        for spec in job["spec"]["tfReplicaSpecs"].values():
            for container in spec["template"]["spec"]["containers"]:
                change(container)

    return edit


def _requests(**values: Any) -> Edit:
    return _each_container(lambda c: c["resources"]["requests"].update(values))


def _memory(spell: Callable[[int], Any]) -> Edit:
    """Each memory request respelled: ``spell`` gets its Gi."""

    def change(container: dict[str, Any]) -> None:
        requests = container["resources"]["requests"]
        requests["memory"] = spell(int(requests["memory"].removesuffix("Gi")))

    return _each_container(change)


def _reorder_resources(container: dict[str, Any]) -> None:
    resources = container["resources"]
    container["resources"] = {k: dict(reversed(resources[k].items())) for k in reversed(resources)}


def _actions(target: Target, edit: Edit) -> set[tuple[str, str]]:
    mnist = [example("tf-mnist")]
    plan = make_plan(render(mnist, target=target), render(mnist, target=target, edit=edit))
    return {(o.kind, o.action) for o in plan.objects if o.key[1] in ("Pod", "TFJob")}


@pytest.mark.parametrize(
    ("edit", "pods", "operator"),
    [
        (_requests(cpu=1), "same", "update"),
        (_requests(cpu="1000m"), "same", "update"),
        (_memory(lambda gi: f"{gi * 1024}Mi"), "same", "update"),
        (_memory(lambda gi: gi * 1024**3), "replace", "update"),
        (_requests(cpu="500m"), "replace", "update"),
        (_each_container(_reorder_resources), "same", "same"),
    ],
    ids=["cpu-int", "cpu-1000m", "mem-2048Mi", "mem-bytes", "cpu-500m", "key-order"],
)
def test_a_spelling_edit_plans_what_pulumi_preview_does(
    edit: Edit, pods: str, operator: str
) -> None:
    assert _actions("pods", edit) == {("Pod", pods)}
    assert _actions("operator", edit) == {("TFJob", operator)}


@pytest.mark.parametrize(
    ("kind", "path", "expected"),
    [
        ("Pod", ("spec", "containers", 0, "resources", "limits", "cpu"), True),
        ("Pod", ("spec", "initContainers", 1, "resources", "requests", "memory"), True),
        ("Pod", ("spec", "resources", "limits", "cpu"), True),
        ("Pod", ("spec", "overhead", "cpu"), True),
        ("Pod", ("spec", "volumes", 0, "emptyDir", "sizeLimit"), True),
        ("Job", ("spec", "template", "spec", "containers", 0, "resources", "limits", "x"), True),
        ("RuntimeClass", ("overhead", "podFixed", "memory"), True),
        ("PersistentVolume", ("spec", "capacity", "storage"), True),
        ("ResourceQuota", ("spec", "hard", "requests.cpu"), True),
        ("LimitRange", ("spec", "limits", 0, "max", "cpu"), True),
        ("Pod", ("spec", "containers", 0, "resources", "claims", 0, "name"), False),
        ("Pod", ("spec", "containers", 0, "ports", 0, "containerPort"), False),
        ("Service", ("spec", "ports", 0, "targetPort"), False),
        ("ConfigMap", ("data", "limits"), False),
    ],
)
def test_quantity_fields(kind: str, path: tuple[str | int, ...], expected: bool) -> None:
    assert quantity_field(kind, path) is expected


def test_only_built_in_objects_are_respelled() -> None:
    assert is_built_in("v1") and is_built_in("batch/v1") and is_built_in("node.k8s.io/v1")
    assert not is_built_in("kubeflow.org/v1")
    assert not is_built_in("jobset.x-k8s.io/v1alpha2")
    path = ("spec", "containers", 0, "resources", "limits", "cpu")
    pod = server_same({"apiVersion": "v1", "kind": "Pod"})
    tfjob = server_same({"apiVersion": "kubeflow.org/v1", "kind": "TFJob"})
    assert pod(path, "1", 1) and pod(path, "1000m", "1") and pod(path, "0.5", "500m")
    assert not pod(path, "1Gi", 1073741824)
    assert not pod(path, "1", "2")
    assert not pod(path, "1", "4 cores")  # no quantity: compared as written
    assert not tfjob(path, "1", 1)
    assert not pod(("spec", "containers", 0, "ports", 0, "containerPort"), 2222, "2222")
