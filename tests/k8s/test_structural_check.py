"""The structural-schema rules: each one catches what it should, and lets valid schemas pass."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.k8s.structural_check import structural_problems

SPEC = "openAPIV3Schema.properties.spec"
META = "openAPIV3Schema.properties.metadata"


def root(**spec: Any) -> dict[str, Any]:
    """A root schema whose ``spec`` is the given schema."""
    return {"type": "object", "properties": {"spec": spec}}


def test_a_valid_schema_passes() -> None:
    schema = root(
        type="object",
        description="d",
        nullable=True,
        properties={
            "port": {
                "x-kubernetes-int-or-string": True,
                "anyOf": [{"type": "integer"}, {"type": "string"}],
            },
            "free": {"x-kubernetes-preserve-unknown-fields": True},
            "names": {
                "type": "array",
                "items": {"type": "string"},
                "x-kubernetes-list-type": "set",
            },
            "env": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            },
            "labels": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "x-kubernetes-map-type": "atomic",
            },
            "created": {"type": "string", "format": "date-time"},
            "mode": {"type": "string", "enum": ["a"]},
            "one": {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "oneOf": [{"required": ["a"]}],
            },
        },
    )
    schema["properties"]["metadata"] = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 10}},
    }
    assert structural_problems(schema) == []


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (
            {"type": "object", "properties": {"a": {"description": "untyped"}}},
            f"{SPEC}.properties.a: every field needs a type (or "
            "x-kubernetes-int-or-string / x-kubernetes-preserve-unknown-fields: true)",
        ),
        (
            {"type": "array", "items": {"description": "untyped"}},
            f"{SPEC}.items: every field needs a type (or "
            "x-kubernetes-int-or-string / x-kubernetes-preserve-unknown-fields: true)",
        ),
        (
            {"type": "object", "additionalProperties": {"description": "untyped"}},
            f"{SPEC}.additionalProperties: every field needs a type (or "
            "x-kubernetes-int-or-string / x-kubernetes-preserve-unknown-fields: true)",
        ),
        (
            {"type": "dict"},
            f"{SPEC}: type must be one of "
            "['array', 'boolean', 'integer', 'number', 'object', 'string'], not 'dict'",
        ),
        (
            {"$ref": "#/definitions/x"},
            f"{SPEC}: $ref is not allowed in a CRD schema",
        ),
        (
            {"type": "object", "patternProperties": {}},
            f"{SPEC}: patternProperties is not allowed in a CRD schema",
        ),
        (
            {"type": "string", "const": "x"},
            f"{SPEC}: const is not allowed in a CRD schema",
        ),
        (
            {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            f"{SPEC}: uniqueItems cannot be true",
        ),
        (
            {"type": "object", "additionalProperties": False},
            f"{SPEC}: additionalProperties must be a schema, not False",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": {"type": "string"},
            },
            f"{SPEC}: additionalProperties and properties are mutually exclusive",
        ),
        ({"type": "array"}, f"{SPEC}: an array needs items"),
        (
            {"type": "array", "items": [{"type": "string"}]},
            f"{SPEC}.items: must be one schema, not a list",
        ),
        (
            {"type": "string", "x-kubernetes-int-or-string": True},
            f"{SPEC}: x-kubernetes-int-or-string: true needs an empty type",
        ),
        (
            {"type": "object", "x-kubernetes-preserve-unknown-fields": False},
            f"{SPEC}: x-kubernetes-preserve-unknown-fields must be true or unset",
        ),
        (
            {"type": "string", "format": "ipv7"},
            f"{SPEC}: format 'ipv7' is not one the API server knows",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
            f"{SPEC}: required fields ['b'] are not among the properties",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "anyOf": [{"type": "object"}],
            },
            f"{SPEC}.anyOf[0]: type may not be set inside allOf/anyOf/oneOf/not",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "not": {"description": "d"},
            },
            f"{SPEC}.not: description may not be set inside allOf/anyOf/oneOf/not",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "allOf": [{"properties": {"b": {}}}],
            },
            f"{SPEC}.allOf[0].properties.b: must also be specified outside the junctor",
        ),
        (
            {"type": "string", "x-kubernetes-list-type": "atomic"},
            f"{SPEC}: x-kubernetes-list-type needs type: array",
        ),
        (
            {"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "set"},
            f"{SPEC}: a set list needs scalar items",
        ),
        (
            {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"port": {"type": "integer"}, "protocol": {"type": "string"}},
                    "required": ["port"],
                },
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["port", "protocol"],
            },
            f"{SPEC}: list map key 'protocol' must be required or have a default",
        ),
        (
            {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-map-keys": ["name"]},
            f"{SPEC}: x-kubernetes-list-map-keys needs x-kubernetes-list-type: map",
        ),
        (
            {"type": "array", "x-kubernetes-map-type": "atomic", "items": {"type": "string"}},
            f"{SPEC}: x-kubernetes-map-type needs type: object",
        ),
    ],
)
def test_each_rule(spec: dict[str, Any], problem: str) -> None:
    assert problem in structural_problems(root(**spec))


def test_the_root_must_be_an_object_and_metadata_is_the_servers() -> None:
    assert structural_problems({"type": "array", "items": {"type": "string"}}) == [
        "openAPIV3Schema: the root must have type: object"
    ]
    schema = {
        "type": "object",
        "properties": {
            "metadata": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                },
            }
        },
    }
    assert structural_problems(schema) == [
        f"{META}: required fields ['name'] are not among the properties",
        f"{META}: only type, description and properties name/generateName may be set, not required",
        f"{META}: only name and generateName may be restricted, not ['labels']",
    ]


def test_int_or_string_may_only_use_its_own_any_of() -> None:
    other = {
        "x-kubernetes-int-or-string": True,
        "anyOf": [{"type": "integer"}, {"type": "boolean"}],
    }
    assert structural_problems(root(type="object", properties={"p": other})) == [
        f"{SPEC}.properties.p.anyOf[0]: type may not be set inside allOf/anyOf/oneOf/not",
        f"{SPEC}.properties.p.anyOf[1]: type may not be set inside allOf/anyOf/oneOf/not",
    ]
