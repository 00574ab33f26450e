"""pydantic → structural OpenAPI v3: each rewrite, on small models."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from trainjobs.k8s.data import PodTemplate
from trainjobs.k8s.model import JobResource, K8sModel
from trainjobs.k8s.structural import (
    SchemaError,
    kubernetes_definition,
    kubernetes_type,
    structural_schema,
)


class Inner(K8sModel):
    """An inner ``object``."""

    count: int = Field(ge=1, description="How many.")


class Spec(K8sModel):
    """The spec."""

    name: str | None = Field(default=None, description="A name; default none.")
    port: int | str = Field(default=80, description="A port or its name.")
    quantity: int | float | str | None = None
    anything: Any = None
    free: dict[str, Any] = Field(default_factory=dict)
    labels: dict[str, str] | None = None
    inner: Inner | None = Field(default=None, description="The inner one.")
    inners: list[Inner] = Field(default_factory=list)
    mode: Literal["a", "b"] = "a"
    fixed: Literal["x"] = "x"
    ratio: float = Field(default=0.5, gt=0, le=1)
    either: str | list[str] = "x"
    min_instance: int = Field(default=1, alias="min-instance")
    volume: Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.VolumeMount")] | None = (
        None
    )


class Thing(JobResource):
    """A thing."""

    api_version: Literal["example.org/v1"] = "example.org/v1"
    kind: Literal["Thing"] = "Thing"
    spec: Spec


def _spec_properties() -> dict[str, Any]:
    properties: dict[str, Any] = structural_schema(Thing, "1.32")["properties"]["spec"][
        "properties"
    ]
    return properties


def test_root_is_an_object_with_plain_metadata() -> None:
    schema = structural_schema(Thing, "1.32")
    assert schema["type"] == "object"
    assert schema["description"] == "A thing."
    assert list(schema["properties"]) == ["apiVersion", "kind", "metadata", "spec", "status"]
    assert schema["properties"]["metadata"] == {"type": "object"}
    assert schema["properties"]["apiVersion"] == {"type": "string"}
    assert schema["properties"]["status"] == {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert schema["required"] == ["spec"]


def test_optional_becomes_nullable() -> None:
    assert _spec_properties()["name"] == {
        "description": "A name; default none.",
        "type": "string",
        "nullable": True,
    }


def test_int_or_string_and_quantities() -> None:
    properties = _spec_properties()
    int_or_string = {
        "x-kubernetes-int-or-string": True,
        "anyOf": [{"type": "integer"}, {"type": "string"}],
    }
    assert properties["port"] == {"description": "A port or its name.", **int_or_string}
    assert properties["quantity"] == {**int_or_string, "nullable": True}


def test_free_form_values_preserve_unknown_fields() -> None:
    properties = _spec_properties()
    assert properties["anything"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert properties["free"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert properties["labels"] == {
        "type": "object",
        "nullable": True,
        "additionalProperties": {"type": "string"},
    }
    # A union the rules cannot express is kept whole rather than guessed at.
    assert properties["either"] == {"x-kubernetes-preserve-unknown-fields": True}


def test_models_are_inlined_without_additional_properties_false() -> None:
    properties = _spec_properties()
    inner = {
        "type": "object",
        "properties": {"count": {"description": "How many.", "type": "integer", "minimum": 1}},
        "required": ["count"],
    }
    assert properties["inner"] == {"description": "The inner one.", "nullable": True, **inner}
    assert properties["inners"] == {
        "type": "array",
        "items": {"description": "An inner object.", **inner},
    }


def test_literals_bounds_and_aliases() -> None:
    properties = _spec_properties()
    assert properties["mode"] == {"type": "string", "enum": ["a", "b"]}
    assert properties["fixed"] == {"type": "string", "enum": ["x"]}
    assert properties["ratio"] == {
        "type": "number",
        "minimum": 0,
        "maximum": 1,
        "exclusiveMinimum": True,
    }
    assert "min-instance" in properties


def test_kubernetes_types_are_inlined_from_the_bundled_schema() -> None:
    volume = _spec_properties()["volume"]
    assert volume["type"] == "object"
    assert volume["nullable"] is True
    assert volume["required"] == ["name", "mountPath"]
    assert volume["properties"]["readOnly"]["type"] == "boolean"
    assert "additionalProperties" not in volume


def test_pod_templates_embed_metadata_as_controller_gen_does() -> None:
    template = kubernetes_definition("io.k8s.api.core.v1.PodTemplateSpec", "1.32")
    assert set(template["properties"]["metadata"]["properties"]) == {
        "annotations",
        "finalizers",
        "labels",
        "name",
        "namespace",
    }
    container = template["properties"]["spec"]["properties"]["containers"]
    assert container["x-kubernetes-list-type"] == "map"
    assert container["x-kubernetes-list-map-keys"] == ["name"]
    ports = container["items"]["properties"]["ports"]
    # Its keys include protocol, which is defaulted by the API server, not required: atomic.
    assert ports["x-kubernetes-list-type"] == "atomic"
    assert "x-kubernetes-list-map-keys" not in ports
    cpu = container["items"]["properties"]["resources"]["properties"]["limits"][
        "additionalProperties"
    ]
    assert cpu["x-kubernetes-int-or-string"] is True


def test_pod_template_fields_of_frameworks_get_the_kubernetes_schema() -> None:
    class WithTemplate(K8sModel):
        template: PodTemplate

    class Job(JobResource):
        api_version: Literal["example.org/v1"] = "example.org/v1"
        kind: Literal["Job"] = "Job"
        spec: WithTemplate

    template = structural_schema(Job, "1.32")["properties"]["spec"]["properties"]["template"]
    assert template == kubernetes_definition("io.k8s.api.core.v1.PodTemplateSpec", "1.32")


def test_copies_are_independent() -> None:
    first = kubernetes_definition("io.k8s.api.core.v1.VolumeMount", "1.32")
    first["type"] = "changed"
    assert kubernetes_definition("io.k8s.api.core.v1.VolumeMount", "1.32")["type"] == "object"


def test_recursive_models_cannot_be_structural() -> None:
    class Node(K8sModel):
        children: list[Node] = Field(default_factory=list)

    class Tree(JobResource):
        api_version: Literal["example.org/v1"] = "example.org/v1"
        kind: Literal["Tree"] = "Tree"
        spec: Node

    with pytest.raises(SchemaError, match="Node refers to itself"):
        structural_schema(Tree, "1.32")


def test_unknown_kubernetes_type_or_version() -> None:
    with pytest.raises(SchemaError, match=re.escape("has no definition 'io.k8s.api.core.v1.Nope'")):
        kubernetes_definition("io.k8s.api.core.v1.Nope", "1.32")
    with pytest.raises(SchemaError, match=re.escape("no Kubernetes 0.1 schema is bundled")):
        kubernetes_definition("io.k8s.api.core.v1.Volume", "0.1")
