"""``--json``: the documented schema, and output that follows it."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import jsonschema
import pytest

from tests.preview.jobs import example, render, set_image, set_replicas
from trainjobs.preview.jsonout import plans_document, schema
from trainjobs.preview.objects import side_from_manifests
from trainjobs.preview.plan import make_plan


def _validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema())
    return jsonschema.Draft202012Validator(schema())


@functools.cache
def _rendered() -> str:
    mnist, ddp = [example("tf-mnist")], [example("pytorch-ddp")]
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "kubeflow"},
        "stringData": {"password": "hunter2"},
    }
    changed_secret = {**secret, "stringData": {"password": "hunter3"}}
    plans = [
        (make_plan(render(mnist), render(mnist, edit=set_image("tf:2"))), "demo"),
        (make_plan(render(ddp), render(ddp, edit=set_replicas("Worker", 1))), None),
        (make_plan(render(mnist), render(mnist)), None),
        (
            make_plan(
                side_from_manifests([(secret, "a")], "a"),
                side_from_manifests([(changed_secret, "b")], "b"),
            ),
            None,
        ),
    ]
    return plans_document(plans)


def _document() -> dict[str, Any]:
    text = _rendered()
    assert "hunter" not in text
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def test_output_validates_against_the_schema() -> None:
    document = _document()
    errors = sorted(_validator().iter_errors(document), key=str)
    assert errors == []
    assert document["changed"] is True
    first = document["plans"][0]
    assert first["stack"] == "demo"
    assert first["summary"] == {"create": 0, "update": 0, "replace": 4, "delete": 0, "same": 4}
    assert first["objects"][0]["fields"] == [
        {
            "path": "spec.containers[0].image",
            "change": "update",
            "replaces": True,
            "rule": "core/v1 Pod + containerForceNewProperties",
            "ruleField": ".spec.containers[*].image",
            "refusedBy": None,
            "refusedField": None,
        }
    ]
    assert first["jobs"][0]["restarts"] is True
    assert document["plans"][2]["changed"] is False
    assert document["plans"][2]["objects"] == []


@pytest.mark.parametrize(
    "breakage",
    [
        lambda d: d.pop("version"),
        lambda d: d["plans"][0]["objects"][0].update(action="recreate"),
        lambda d: d["plans"][0]["summary"].pop("same"),
        lambda d: d["plans"][0]["objects"][0]["fields"][0].update(replaces="yes"),
        lambda d: d["plans"][0]["jobs"][0].update(extra=1),
    ],
)
def test_the_schema_rejects_what_it_does_not_document(breakage: Any) -> None:
    document = copy.deepcopy(_document())
    breakage(document)
    assert list(_validator().iter_errors(document))
