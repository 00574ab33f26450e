"""Kubernetes OpenAPI schema checks, using the schemas kubernetes-validate ships.

kubernetes-validate's own ``validate`` loads and compiles a schema on every
call; here each (version, kind) schema is compiled once (``check.compiled``:
jsonschema's errors, tens of microseconds per object) and reused, and all
errors of an object are reported, not only the first.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource

from trainjobs.check.compiled import CompiledSchema, compile_schema
from trainjobs.check.k8s_versions import SCHEMA_DIR as _DIR
from trainjobs.check.k8s_versions import SCHEMA_PACKAGE as _PACKAGE
from trainjobs.check.k8s_versions import available_versions
from trainjobs.errors import format_path

__all__ = [
    "SchemaProblem",
    "UnknownKind",
    "available_versions",
    "plain_message",
    "problems",
    "problems_many",
    "template_problems",
]


class UnknownKind(LookupError):
    """No bundled schema for this apiVersion/kind (e.g. a custom resource)."""


SchemaProblem = tuple[str, str, Any]
"""(path inside the object, message, offending value)."""


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


@cache
def _definitions(version: str) -> dict[str, Any]:
    defs: dict[str, Any] = _load(version, "_definitions.json")["$defs"]
    return defs


@cache
def _compiled(version: str, filename: str) -> CompiledSchema:
    """The kind's schema compiled (see ``check.compiled``): same errors, far faster."""
    validator = _validator(version, filename)
    definitions = _definitions(version)

    def resolve(ref: str) -> Any:
        _, found, name = ref.partition("#/$defs/")
        if not found or name not in definitions:
            raise LookupError(ref)
        return definitions[name]

    return compile_schema(validator.schema, validator, resolve)


def problems_many(
    manifests: Sequence[Mapping[str, Any]], version: str
) -> list[list[SchemaProblem]]:
    """Schema problems of many built-in objects, one list per object, in order.

    Raises UnknownKind for the first custom resource among them.
    """
    return [list(problems(manifest, version)) for manifest in manifests]


def _filename(api_version: str, kind: str) -> str:
    # rbac.authorization.k8s.io/v1 → rbac-v1; v1 → v1 (kubernetes-validate's naming)
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


def _problems(errors: list[jsonschema.ValidationError]) -> Iterator[SchemaProblem]:
    errors = sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        # anyOf/oneOf errors are vague at the top; report the most specific cause.
        best = jsonschema.exceptions.best_match([error])
        parts = list(best.absolute_path)
        if best.validator == "additionalProperties" and isinstance(best.instance, dict):
            yield from _unknown_fields(parts, best.instance, best.schema)
            continue
        yield format_path(parts), plain_message(best.message, best.instance), best.instance


def _unknown_fields(
    parts: list[str | int], instance: dict[str, Any], schema: Any
) -> Iterator[SchemaProblem]:
    known = sorted((schema.get("properties") or {}) if isinstance(schema, dict) else {})
    for key in sorted(set(instance) - set(known), key=str):
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.75)
        message = f"unknown field (did you mean {close[0]!r}?)" if close else "unknown field"
        yield format_path([*parts, str(key)]), message, instance[key]


def plain_message(message: str, instance: Any = None) -> str:
    """A schema validator's message for people: no Python repr of the value (``None is
    not of type 'string'`` → ``the value is not of type 'string'``; the finding shows
    the value itself), unknown fields named plainly, at most 200 characters."""
    shown = repr(instance)
    if message.startswith(shown + " ") and not isinstance(instance, str):
        message = "the value" + message[len(shown) :]
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
    return list(_problems(_compiled(version, _filename(api_version, kind)).errors(manifest)))


def template_problems(template: Mapping[str, Any], version: str) -> list[SchemaProblem]:
    """Schema problems of a core/v1 PodTemplateSpec."""
    return list(_problems(_compiled(version, "podtemplatespec-v1.json").errors(template)))
