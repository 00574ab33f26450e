"""The rules a CRD's ``openAPIV3Schema`` must follow to be accepted as structural.

Written from the Kubernetes documentation ("Extend the Kubernetes API with
CustomResourceDefinitions": *Specifying a structural schema*, *Validation*,
*Controlling pruning*, *IntOrString*, *RawExtension*, *Merge strategy*). The API
server refuses a ``apiextensions.k8s.io/v1`` CRD whose schema breaks any of these,
so the generated CRDs are held to them in the tests.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from trainjobs.k8s.structural import FORMATS

__all__ = ["ALLOWED_KEYS", "structural_problems"]

ALLOWED_KEYS = frozenset(
    {
        "description",
        "type",
        "format",
        "title",
        "default",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "enum",
        "maxProperties",
        "minProperties",
        "required",
        "items",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
        "properties",
        "additionalProperties",
        "externalDocs",
        "example",
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    }
)
"""Every field of a JSONSchemaProps the v1 API accepts, minus those it forbids
(``$ref``, ``definitions``, ``dependencies``, ``deprecated``, ``discriminator``,
``id``, ``patternProperties``, ``readOnly``, ``writeOnly``, ``xml``)."""

_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
_SCALARS = frozenset({"string", "integer", "number", "boolean"})
_JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
# Inside a junctor these may not be set: the value's shape must not depend on a branch.
_NOT_IN_JUNCTORS = ("description", "type", "default", "additionalProperties", "nullable")
_INT_OR_STRING_BRANCHES = [{"type": "integer"}, {"type": "string"}]


def structural_problems(schema: Mapping[str, Any]) -> list[str]:
    """Every broken rule in ``schema`` (a CRD version's ``openAPIV3Schema``), as
    ``<path>: <rule>`` lines; empty when the schema is structural."""
    problems = list(_check(schema, "openAPIV3Schema", in_junctor=False))
    if schema.get("type") != "object":
        problems.append("openAPIV3Schema: the root must have type: object")
    metadata = (schema.get("properties") or {}).get("metadata")
    if isinstance(metadata, Mapping):
        problems += _metadata_problems(metadata)
    return problems


def _metadata_problems(metadata: Mapping[str, Any]) -> list[str]:
    path = "openAPIV3Schema.properties.metadata"
    problems = [
        f"{path}: only type, description and properties name/generateName may be set, not {key}"
        for key in metadata
        if key not in ("type", "description", "properties")
    ]
    extra = sorted(set(metadata.get("properties") or {}) - {"name", "generateName"})
    if extra:
        problems.append(f"{path}: only name and generateName may be restricted, not {extra}")
    return problems


def _check(node: Any, path: str, in_junctor: bool) -> Iterator[str]:
    if not isinstance(node, Mapping):
        yield f"{path}: a schema must be a mapping, not {type(node).__name__}"
        return
    for key in node:
        if key not in ALLOWED_KEYS:
            yield f"{path}: {key} is not allowed in a CRD schema"
    if in_junctor:
        yield from _junctor_branch_problems(node, path)
    else:
        yield from _type_problems(node, path)
    yield from _value_problems(node, path, in_junctor)
    yield from _list_and_map_problems(node, path)
    for name, sub in (node.get("properties") or {}).items():
        yield from _check(sub, f"{path}.properties.{name}", in_junctor)
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        yield from _check(extra, f"{path}.additionalProperties", in_junctor)
    items = node.get("items")
    if items is not None:
        if isinstance(items, list):
            yield f"{path}.items: must be one schema, not a list"
        else:
            yield from _check(items, f"{path}.items", in_junctor)
    yield from _junctor_problems(node, path)


def _type_problems(node: Mapping[str, Any], path: str) -> Iterator[str]:
    kind = node.get("type")
    exempt = node.get("x-kubernetes-int-or-string") is True or (
        node.get("x-kubernetes-preserve-unknown-fields") is True
    )
    if kind is None and not exempt:
        yield (
            f"{path}: every field needs a type (or x-kubernetes-int-or-string / "
            "x-kubernetes-preserve-unknown-fields: true)"
        )
    elif kind is not None and kind not in _TYPES:
        yield f"{path}: type must be one of {sorted(_TYPES)}, not {kind!r}"
    if node.get("x-kubernetes-int-or-string") is True and kind is not None:
        yield f"{path}: x-kubernetes-int-or-string: true needs an empty type"
    if kind == "array" and "items" not in node:
        yield f"{path}: an array needs items"


def _value_problems(node: Mapping[str, Any], path: str, in_junctor: bool) -> Iterator[str]:
    if node.get("uniqueItems") is True:
        yield f"{path}: uniqueItems cannot be true"
    extra = node.get("additionalProperties")
    if extra is not None:
        if not isinstance(extra, Mapping):
            yield f"{path}: additionalProperties must be a schema, not {extra!r}"
        if "properties" in node:
            yield f"{path}: additionalProperties and properties are mutually exclusive"
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if preserve is not None and preserve is not True:
        yield f"{path}: x-kubernetes-preserve-unknown-fields must be true or unset"
    if "nullable" in node and not isinstance(node["nullable"], bool):
        yield f"{path}: nullable must be true or false"
    if "format" in node and node["format"] not in FORMATS:
        yield f"{path}: format {node['format']!r} is not one the API server knows"
    if "description" in node and not isinstance(node["description"], str):
        yield f"{path}: description must be text"
    required = node.get("required")
    # Inside a junctor, required names the fields declared outside it (oneOf: required a or b).
    if required is not None and not in_junctor:
        declared = set(node.get("properties") or {})
        missing = [name for name in required if name not in declared]
        if missing and node.get("x-kubernetes-preserve-unknown-fields") is not True:
            yield f"{path}: required fields {missing} are not among the properties"


def _list_and_map_problems(node: Mapping[str, Any], path: str) -> Iterator[str]:
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys")
    found = node.get("items")
    items: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    if list_type is not None:
        if node.get("type") != "array":
            yield f"{path}: x-kubernetes-list-type needs type: array"
        if list_type not in ("atomic", "set", "map"):
            yield f"{path}: x-kubernetes-list-type must be atomic, set or map"
        if list_type == "set" and items.get("type") not in _SCALARS:
            yield f"{path}: a set list needs scalar items"
    if keys is not None and list_type != "map":
        yield f"{path}: x-kubernetes-list-map-keys needs x-kubernetes-list-type: map"
    if list_type == "map":
        yield from _map_keys_problems(items, keys, path)
    map_type = node.get("x-kubernetes-map-type")
    if map_type is not None:
        if node.get("type") != "object":
            yield f"{path}: x-kubernetes-map-type needs type: object"
        if map_type not in ("atomic", "granular"):
            yield f"{path}: x-kubernetes-map-type must be atomic or granular"


def _map_keys_problems(items: Mapping[str, Any], keys: Any, path: str) -> Iterator[str]:
    if items.get("type") != "object":
        yield f"{path}: a map list needs object items"
    if not keys:
        yield f"{path}: a map list needs x-kubernetes-list-map-keys"
        return
    properties = items.get("properties") or {}
    required = set(items.get("required") or [])
    for key in keys:
        field = properties.get(key)
        if not isinstance(field, Mapping):
            yield f"{path}: list map key {key!r} is not a property of the items"
            continue
        if field.get("type") not in _SCALARS:
            yield f"{path}: list map key {key!r} must be a scalar"
        if key not in required and "default" not in field:
            yield f"{path}: list map key {key!r} must be required or have a default"


def _junctor_problems(node: Mapping[str, Any], path: str) -> Iterator[str]:
    for junctor in _JUNCTORS:
        if junctor not in node:
            continue
        value = node[junctor]
        branches = [value] if junctor == "not" else value
        if not isinstance(branches, list):
            yield f"{path}.{junctor}: must be a list of schemas"
            continue
        if (
            junctor == "anyOf"
            and node.get("x-kubernetes-int-or-string") is True
            and branches == _INT_OR_STRING_BRANCHES
        ):
            continue
        for index, branch in enumerate(branches):
            where = f"{path}.{junctor}" if junctor == "not" else f"{path}.{junctor}[{index}]"
            yield from _check(branch, where, in_junctor=True)
            yield from _specified_outside(node, branch, where)


def _junctor_branch_problems(node: Mapping[str, Any], path: str) -> Iterator[str]:
    for key in _NOT_IN_JUNCTORS:
        if key in node:
            yield f"{path}: {key} may not be set inside allOf/anyOf/oneOf/not"


def _specified_outside(outer: Mapping[str, Any], branch: Any, path: str) -> Iterator[str]:
    """Fields and items a junctor branch constrains must also be declared outside it."""
    if not isinstance(branch, Mapping):
        return
    declared = outer.get("properties") or {}
    for name in branch.get("properties") or {}:
        if name not in declared:
            yield f"{path}.properties.{name}: must also be specified outside the junctor"
    if "items" in branch and "items" not in outer:
        yield f"{path}.items: must also be specified outside the junctor"
