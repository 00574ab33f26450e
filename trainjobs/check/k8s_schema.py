"""Kubernetes OpenAPI schema checks, using the schemas kubernetes-validate ships.

kubernetes-validate's own ``validate`` loads and compiles a schema on every
call; here each (version, kind) validator is compiled once and reused, and all
errors of an object are reported, not only the first.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

import fastjsonschema
import jsonschema
from referencing import Registry, Resource

__all__ = [
    "FAST_THRESHOLD",
    "SchemaProblem",
    "UnknownKind",
    "available_versions",
    "problems",
    "problems_many",
    "template_problems",
]

FAST_THRESHOLD = 64
"""Objects of one kind in a batch from which a compiled validator pays for its compile time."""

_PACKAGE = "kubernetes_validate"
_DIR = "kubernetes-json-schema"


class UnknownKind(LookupError):
    """No bundled schema for this apiVersion/kind (e.g. a custom resource)."""


SchemaProblem = tuple[str, str, Any]
"""(path inside the object, message, offending value)."""


@cache
def available_versions() -> tuple[str, ...]:
    """Kubernetes minor versions with bundled schemas, e.g. ``("1.25", …, "1.37")``."""
    root = resources.files(_PACKAGE).joinpath(_DIR)
    found = set()
    for entry in root.iterdir():
        match = re.match(r"^v(\d+\.\d+)\.\d+-local-strict$", entry.name)
        if match:
            found.add(match.group(1))
    return tuple(sorted(found, key=lambda v: tuple(int(p) for p in v.split("."))))


def _schema_dir(version: str) -> str:
    versions = available_versions()
    if version not in versions:
        raise ValueError(
            f"no Kubernetes {version} schema is bundled; use one of {', '.join(versions)}"
        )
    return f"v{version}.0-local-strict"


def _load(version: str, name: str) -> Any:
    path = resources.files(_PACKAGE).joinpath(_DIR, _schema_dir(version), name)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise UnknownKind(name) from None


@cache
def _registry(version: str) -> Registry[Any]:
    definitions = Resource.from_contents(_load(version, "_definitions.json"))
    return definitions @ Registry()


@cache
def _validator(version: str, filename: str) -> jsonschema.protocols.Validator:
    schema = _load(version, filename)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, registry=_registry(version))


_REF = re.compile(r'"#/\$defs/([^"]+)"')


@cache
def _fast_validator(version: str, filename: str) -> Callable[[Any], Any]:
    """A compiled validator (fastjsonschema) over only the definitions the kind reaches.

    It answers "valid or not" about 20 times faster than jsonschema; only the
    invalid objects are then run through jsonschema for every error with its path.
    Compiling takes a few tenths of a second, hence ``FAST_THRESHOLD``.
    """
    root = _load(version, filename)
    text = json.dumps({k: v for k, v in root.items() if k not in ("$schema", "$id")})
    text = text.replace('"/api/_definitions.json#/$defs/', '"#/$defs/')
    definitions = _load(version, "_definitions.json")["$defs"]
    needed: dict[str, Any] = {}
    pending = _REF.findall(text)
    while pending:
        name = pending.pop()
        if name not in needed:
            needed[name] = definitions[name]
            pending += _REF.findall(json.dumps(definitions[name]))
    schema = json.loads(text)
    schema["$defs"] = needed
    return fastjsonschema.compile(schema)


def problems_many(
    manifests: Sequence[Mapping[str, Any]], version: str
) -> list[list[SchemaProblem]]:
    """Schema problems of many built-in objects, one list per object, in order.

    Raises UnknownKind for the first custom resource among them.
    """
    groups: dict[str, list[int]] = {}
    for index, manifest in enumerate(manifests):
        name = _filename(str(manifest.get("apiVersion", "")), str(manifest.get("kind", "")))
        groups.setdefault(name, []).append(index)
    results: list[list[SchemaProblem]] = [[] for _ in manifests]
    for filename, indexes in groups.items():
        validator = _validator(version, filename)
        fast = _fast_validator(version, filename) if len(indexes) >= FAST_THRESHOLD else None
        for index in indexes:
            if fast is not None:
                try:
                    fast(manifests[index])
                    continue
                except fastjsonschema.JsonSchemaValueException:
                    pass
            results[index] = list(_problems(validator, manifests[index]))
    return results


def _filename(api_version: str, kind: str) -> str:
    # rbac.authorization.k8s.io/v1 → rbac-v1; v1 → v1 (kubernetes-validate's naming)
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


def _problems(validator: jsonschema.protocols.Validator, obj: Any) -> Iterator[SchemaProblem]:
    errors = sorted(validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        # anyOf/oneOf errors are vague at the top; report the most specific cause.
        best = jsonschema.exceptions.best_match([error])
        path = "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in best.absolute_path
        ).lstrip(".")
        if best.validator == "additionalProperties" and isinstance(best.instance, dict):
            yield from _unknown_fields(path, best.instance, best.schema)
            continue
        yield path, _plain(best.message), best.instance


def _unknown_fields(path: str, instance: dict[str, Any], schema: Any) -> Iterator[SchemaProblem]:
    known = sorted((schema.get("properties") or {}) if isinstance(schema, dict) else {})
    for key in sorted(set(instance) - set(known)):
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        message = f"unknown field (did you mean {close[0]!r}?)" if close else "unknown field"
        yield (f"{path}.{key}" if path else key), message, instance[key]


def _plain(message: str) -> str:
    # jsonschema says "Additional properties are not allowed ('x' was unexpected)".
    match = re.match(
        r"Additional properties are not allowed \((.*) (?:was|were) unexpected\)", message
    )
    if match:
        return f"unknown field {match.group(1)}"
    if len(message) > 200:
        message = message[:197] + "..."
    return message


def has_schema(manifest: Mapping[str, Any], version: str) -> bool:
    """Whether a schema for this object's apiVersion/kind is bundled."""
    name = _filename(str(manifest.get("apiVersion", "")), str(manifest.get("kind", "")))
    try:
        _validator(version, name)
    except UnknownKind:
        return False
    return True


def problems(manifest: Mapping[str, Any], version: str) -> list[SchemaProblem]:
    """Schema problems of one built-in object; raises UnknownKind for custom resources."""
    api_version = str(manifest.get("apiVersion", ""))
    kind = str(manifest.get("kind", ""))
    validator = _validator(version, _filename(api_version, kind))
    return list(_problems(validator, manifest))


def template_problems(template: Mapping[str, Any], version: str) -> list[SchemaProblem]:
    """Schema problems of a core/v1 PodTemplateSpec."""
    return list(_problems(_validator(version, "podtemplatespec-v1.json"), template))
