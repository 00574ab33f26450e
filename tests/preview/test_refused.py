"""A change the API server refuses: an immutable field of an existing job's custom resource.

Kubeflow Trainer v2.3.0's TrainJob CRD marks fields ``x-kubernetes-validations: [{rule:
self == oldSelf}]`` (crds/trainer-v2.3.0/trainer.kubeflow.org_trainjobs.yaml): the
provider would send the update, the API server refuse it and ``pulumi up`` fail, so
``trainjobs diff`` says so instead of promising an update in place.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from trainjobs.cli import main
from trainjobs.k8s.crds import immutable_fields, load_crd
from trainjobs.k8s.yamlio import dump_all
from trainjobs.preview.objects import side_from_manifests
from trainjobs.preview.plan import make_plan
from trainjobs.preview.words import explain_object

CRD = "trainer-v2.3.0/trainer.kubeflow.org_trainjobs.yaml"


def _trainjob(nodes: int = 2, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "tj", "namespace": "ml", "labels": {"team": "a"}},
        "spec": {
            "runtimeRef": {"name": "torch-distributed"},
            "trainer": {"numNodes": nodes, "image": "docker.io/pytorch/pytorch:2.1.0"},
            **spec,
        },
    }


def _plan(old: dict[str, Any], new: dict[str, Any]) -> Any:
    (one,) = make_plan(
        side_from_manifests([(old, "old.yaml")], "old"),
        side_from_manifests([(new, "new.yaml")], "new"),
    ).changes
    return one


def test_the_immutable_fields_are_read_from_the_crd() -> None:
    fields = immutable_fields(load_crd(CRD), "v1alpha1")
    assert {".spec.runtimeRef", ".spec.trainer", ".spec.managedBy"} <= set(fields)
    assert ".spec.suspend" not in fields  # a TrainJob is suspended and resumed in place
    assert immutable_fields(load_crd(CRD), "v9") == ()


def test_a_changed_trainer_is_refused_and_says_what_to_do() -> None:
    plan = _plan(_trainjob(2), _trainjob(4))
    assert plan.action == "update"
    (refused,) = plan.refused
    assert refused.refused_field == ".spec.trainer"
    assert refused.refused_by is not None and CRD in refused.refused_by.cites
    words = explain_object(plan)
    assert words.startswith("cannot update TrainJob ml/tj: the API server refuses a change")
    assert "spec.trainer.numNodes" in words and "delete the TrainJob first" in words


def test_fields_outside_the_rules_update_in_place() -> None:
    old = _trainjob()
    new = copy.deepcopy(old)
    new["metadata"]["labels"]["team"] = "b"
    new["spec"]["suspend"] = True
    plan = _plan(old, new)
    assert plan.action == "update" and plan.refused == ()
    assert explain_object(plan).startswith("updates TrainJob ml/tj in place")


def test_diff_names_the_refused_field_in_text_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "old.yaml").write_text(dump_all([_trainjob(2)]))
    (tmp_path / "new.yaml").write_text(dump_all([_trainjob(4)]))
    args = ["diff", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml")]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "update (refused)" in out
    assert "changing numNodes of job tj cannot be applied" in out
    assert main([*args, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    (changed,) = document["plans"][0]["objects"]
    (field,) = changed["fields"]
    assert (field["path"], field["refusedField"]) == ("spec.trainer.numNodes", ".spec.trainer")
    assert field["replaces"] is False
