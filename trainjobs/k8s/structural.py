"""pydantic models → structural OpenAPI v3 schemas for CustomResourceDefinitions.

A CRD's ``openAPIV3Schema`` must be *structural*: every field typed, no ``$ref``,
no ``additionalProperties: false``, no ``uniqueItems`` (the API server refuses a CRD
that breaks one; tests/cluster installs every shipped CRD). pydantic writes JSON
Schema 2020-12, which breaks most of them, so :func:`structural_schema` rewrites it:

* ``$ref`` → the definition, inlined (recursive models cannot be expressed and fail);
* ``Optional[X]`` → the schema of X with ``nullable: true``;
* ``int | str`` (and quantities, ``int | float | str``) → ``x-kubernetes-int-or-string``;
* ``Any`` and ``dict[str, Any]`` → ``x-kubernetes-preserve-unknown-fields``;
* ``additionalProperties: false`` (``extra="forbid"``), ``title``, ``default`` → dropped;
* a field annotated with :func:`kubernetes_type` (pod templates, volumes, resources)
  → the Kubernetes definition of that type from the OpenAPI schemas kubernetes-validate
  bundles, converted the same way and inlined.

Unions the structural rules cannot express (``str | list[str]`` …) become
``x-kubernetes-preserve-unknown-fields`` so the CRD stays valid; trainjobs'
own parsing still checks them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, WithJsonSchema

__all__ = [
    "KUBERNETES_TYPE",
    "SchemaError",
    "kubernetes_definition",
    "kubernetes_type",
    "structural_schema",
]

KUBERNETES_TYPE = "x-trainjobs-kubernetes-type"
"""Marker key a :func:`kubernetes_type` field leaves in pydantic's JSON schema."""

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
# Embedded object metadata (a pod template's) keeps only what users set there,
# as controller-gen does; the API server fills in the rest.
_EMBEDDED_META_FIELDS = ("annotations", "finalizers", "labels", "name", "namespace")
# Formats the API server knows; others are dropped rather than rejected.
FORMATS = frozenset(
    {
        *("bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac"),
        *("uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard"),
        *("ssn", "hexcolor", "rgbcolor", "byte", "password", "date", "duration"),
        *("datetime", "date-time", "int32", "int64", "float", "double"),
    }
)
_SCALAR_KEYS = (
    "format",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_INT_OR_STRING: dict[str, Any] = {
    "x-kubernetes-int-or-string": True,
    "anyOf": [{"type": "integer"}, {"type": "string"}],
}
_PRESERVE: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}


class SchemaError(ValueError):
    """A model cannot be written as a structural schema (e.g. it is recursive)."""


def kubernetes_type(definition: str) -> WithJsonSchema:
    """Annotate a field as the Kubernetes type ``definition``.

    ``Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.Volume")]``
    validates as a plain dict and appears in a generated CRD with the full
    Kubernetes schema of a Volume.
    """
    return WithJsonSchema({KUBERNETES_TYPE: definition})


# ----- pydantic's JSON schema → structural -------------------------------------------


def structural_schema(model: type[BaseModel], k8s_version: str) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of a custom resource modelled by ``model``.

    ``metadata`` is left to the API server (only ``type: object``, as the rules
    require); ``apiVersion`` and ``kind`` are plain strings. Kubernetes types come
    from the bundled schema of ``k8s_version``.
    """
    raw = model.model_json_schema(by_alias=True, mode="validation")
    converter = _PydanticConverter(raw.pop("$defs", {}), k8s_version)
    root = converter.convert(raw, "")
    properties = dict(root.get("properties") or {})
    for key in ("apiVersion", "kind"):
        if key in properties:
            properties[key] = _with_description(
                {"type": "string"}, properties[key].get("description")
            )
    if "metadata" in properties:
        properties["metadata"] = {"type": "object"}
    if "status" in properties:
        # Written by controllers, never read by trainjobs: keep whatever they write.
        properties["status"] = {"type": "object", **_PRESERVE}
    first = [k for k in ("apiVersion", "kind", "metadata", "spec", "status") if k in properties]
    root["properties"] = {
        **{k: properties[k] for k in first},
        **{k: v for k, v in properties.items() if k not in first},
    }
    required = [
        r for r in root.get("required") or [] if r not in ("apiVersion", "kind", "metadata")
    ]
    if required:
        root["required"] = required
    else:
        root.pop("required", None)
    return root


class _PydanticConverter:
    def __init__(self, definitions: Mapping[str, Any], k8s_version: str) -> None:
        self.definitions = definitions
        self.k8s_version = k8s_version
        self.stack: list[str] = []

    def convert(self, node: Mapping[str, Any], path: str) -> dict[str, Any]:
        if "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            if name in self.stack:
                raise SchemaError(f"{path or '(root)'}: {name} refers to itself")
            self.stack.append(name)
            try:
                target = self.convert(self.definitions[name], path)
            finally:
                self.stack.pop()
            return _with_description(target, node.get("description"))
        if KUBERNETES_TYPE in node:
            target = kubernetes_definition(str(node[KUBERNETES_TYPE]), self.k8s_version)
            return _with_description(target, node.get("description"))
        for junctor in ("anyOf", "oneOf"):
            if junctor in node:
                return self._union(node, list(node[junctor]), path)
        if "const" in node:
            node = {**{k: v for k, v in node.items() if k != "const"}, "enum": [node["const"]]}
        kind = node.get("type")
        out: dict[str, Any] = {}
        if node.get("description"):
            out["description"] = _plain(node["description"])
        if kind is None:
            return {**out, **_PRESERVE}
        out["type"] = kind
        for key in _SCALAR_KEYS:
            if key in node:
                out[key] = node[key]
        _openapi_bounds(out)
        if kind == "object":
            out.update(self._object(node, path))
        elif kind == "array":
            items = node.get("items")
            out["items"] = self.convert(items, f"{path}[]") if items else dict(_PRESERVE)
        return _ordered(out)

    def _object(self, node: Mapping[str, Any], path: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        properties = node.get("properties")
        extra = node.get("additionalProperties")
        if properties:
            out["properties"] = {
                name: self.convert(sub, f"{path}.{name}") for name, sub in properties.items()
            }
            if node.get("required"):
                out["required"] = list(node["required"])
        elif isinstance(extra, Mapping) and extra:
            out["additionalProperties"] = self.convert(extra, f"{path}.*")
        else:
            out.update(_PRESERVE)
        return out

    def _union(self, node: Mapping[str, Any], options: list[Any], path: str) -> dict[str, Any]:
        present = [o for o in options if o.get("type") != "null"]
        nullable = len(present) < len(options)
        extra = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "default", "title")}
        if len(present) == 1:
            out = self.convert({**present[0], **extra}, path)
        else:
            kinds = {o.get("type") for o in present}
            if all(set(o) == {"type"} for o in present) and kinds in (
                {"integer", "string"},
                {"integer", "number", "string"},
            ):
                out = dict(_INT_OR_STRING)
            else:
                out = dict(_PRESERVE)
            if extra.get("description"):
                out["description"] = _plain(extra["description"])
        if nullable:
            out["nullable"] = True
        return _ordered(out)


def _openapi_bounds(out: dict[str, Any]) -> None:
    """JSON Schema 2020-12 numeric exclusive bounds → OpenAPI v3.0 booleans."""
    for bound, flag in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        value = out.get(bound)
        if isinstance(value, bool) or value is None:
            continue
        out[flag] = value
        out[bound] = True


def _with_description(schema: Mapping[str, Any], description: Any) -> dict[str, Any]:
    out = dict(schema)
    if description:
        out["description"] = _plain(str(description))
    return _ordered(out)


def _plain(text: str) -> str:
    """A docstring as ``kubectl explain`` shows it: no reStructuredText literals."""
    return text.replace("``", "")


_KEY_ORDER = (
    "description",
    "type",
    "format",
    "nullable",
    "enum",
    *_SCALAR_KEYS[2:],
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
)


def _ordered(node: Mapping[str, Any]) -> dict[str, Any]:
    """The node's keys in one fixed order, so output reads the same everywhere."""
    out = {key: node[key] for key in _KEY_ORDER if key in node}
    out.update({k: v for k, v in node.items() if k not in out})
    return out


# ----- Kubernetes definitions → structural --------------------------------------------


@cache
def _definitions(k8s_version: str) -> dict[str, Any]:
    folder = f"v{k8s_version}.0-local-strict"
    path = resources.files("kubernetes_validate").joinpath(
        "kubernetes-json-schema", folder, "_definitions.json"
    )
    try:
        defs: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["$defs"]
    except FileNotFoundError:
        raise SchemaError(f"no Kubernetes {k8s_version} schema is bundled") from None
    return defs


@cache
def _kubernetes_definition(name: str, k8s_version: str) -> str:
    definitions = _definitions(k8s_version)
    if name not in definitions:
        raise SchemaError(f"Kubernetes {k8s_version} has no definition {name!r}")
    return json.dumps(_K8sConverter(definitions).convert(definitions[name], [name]))


def kubernetes_definition(name: str, k8s_version: str) -> dict[str, Any]:
    """The structural schema of Kubernetes type ``name`` (``io.k8s.api.core.v1.PodTemplateSpec``).

    A fresh copy each call; the conversion itself is done once per type and version.
    """
    converted: dict[str, Any] = json.loads(_kubernetes_definition(name, k8s_version))
    return converted


class _K8sConverter:
    """kubernetes-validate's strict JSON schemas → structural OpenAPI v3."""

    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self.definitions = definitions

    def convert(self, node: Mapping[str, Any], stack: list[str]) -> dict[str, Any]:
        if "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            if name in stack:
                raise SchemaError(f"Kubernetes type {name} refers to itself")
            target = self.convert(self.definitions[name], [*stack, name])
            if name == _OBJECT_META:
                properties = target.get("properties") or {}
                target["properties"] = {
                    k: properties[k] for k in _EMBEDDED_META_FIELDS if k in properties
                }
            return _with_description(target, node.get("description"))
        out: dict[str, Any] = {}
        if node.get("description"):
            out["description"] = node["description"]
        if "oneOf" in node or "anyOf" in node:
            # IntOrString and Quantity are the only unions in the core schemas.
            return _ordered({**out, **_INT_OR_STRING})
        kind = node.get("type")
        if isinstance(kind, list):
            present = [k for k in kind if k != "null"]
            kind = present[0] if len(present) == 1 else None
        if kind is None:
            return _ordered({**out, **_PRESERVE})
        out["type"] = kind
        if node.get("format") in FORMATS:
            out["format"] = node["format"]
        for key in _SCALAR_KEYS[1:]:
            if key in node:
                out[key] = node[key]
        if "enum" in out:
            out["enum"] = [value for value in out["enum"] if value is not None]
        if kind == "object":
            out.update(self._object(node, stack))
        elif kind == "array":
            items = node.get("items")
            out["items"] = self.convert(items, stack) if items else dict(_PRESERVE)
            out.update(_list_type(node, out["items"]))
        return _ordered(out)

    def _object(self, node: Mapping[str, Any], stack: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        properties = node.get("properties")
        extra = node.get("additionalProperties")
        if properties:
            out["properties"] = {name: self.convert(sub, stack) for name, sub in properties.items()}
            if node.get("required"):
                out["required"] = list(node["required"])
        elif isinstance(extra, Mapping) and extra:
            out["additionalProperties"] = self.convert(extra, stack)
        else:
            out.update(_PRESERVE)
        if node.get("x-kubernetes-map-type") in ("atomic", "granular"):
            out["x-kubernetes-map-type"] = node["x-kubernetes-map-type"]
        return out


def _list_type(node: Mapping[str, Any], items: Mapping[str, Any]) -> dict[str, Any]:
    """The list's merge annotations, where the structural rules allow them.

    A ``map`` list needs every key to be a required field of its items (a key the
    API server defaults, like a port's protocol, is not required in the bundled
    schemas), so such lists fall back to ``atomic``.
    """
    kind = node.get("x-kubernetes-list-type")
    if kind == "map":
        keys = list(node.get("x-kubernetes-list-map-keys") or [])
        required = set(items.get("required") or [])
        if keys and set(keys) <= required:
            return {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys}
        return {"x-kubernetes-list-type": "atomic"}
    if kind == "set" and items.get("type") not in ("string", "integer", "number", "boolean"):
        return {"x-kubernetes-list-type": "atomic"}
    if kind in ("atomic", "set"):
        return {"x-kubernetes-list-type": kind}
    return {}
