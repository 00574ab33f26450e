"""Kubernetes OpenAPI schema checks, using the schemas kubernetes-validate ships.

kubernetes-validate's own ``validate`` loads and compiles a schema on every
call; here each (version, kind) schema is compiled once (``check.compiled``:
jsonschema's errors, tens of microseconds per object) and reused, and all
errors of an object are reported, not only the first.

A kind's schema refers into one file of every definition (1.3 MB); what the kind
reaches of it is kept in the user's cache (``check.schema_cache``), and neither
kubernetes-validate nor jsonschema is imported until an object has an error or
reaches a node the compiled checks leave to jsonschema.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainjobs.check.compiled import (
    DRAFT7_KEYWORDS,
    DRAFT202012_KEYWORDS,
    CompiledSchema,
    compile_schema,
    without_descriptions,
)
from trainjobs.check.k8s_versions import available_versions, schema_root
from trainjobs.check.schema_cache import cached
from trainjobs.errors import format_path

if TYPE_CHECKING:
    import jsonschema

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


def _path(version: str, name: str) -> Path:
    """The bundled file ``name`` of ``version``; UnknownKind for a name no file can have
    (a kind with a slash or NUL in it: the kind comes from the user's input)."""
    if "/" in name or "\\" in name or "\0" in name or name.startswith("."):
        raise UnknownKind(name)
    return schema_root() / _schema_dir(version) / name


_DEFS = "#/$defs/"


def _reached(kind_schema: Any, definitions: Mapping[str, Any]) -> dict[str, Any]:
    """The definitions ``kind_schema`` reaches through ``$ref``s, by name."""
    reached: dict[str, Any] = {}
    stack = [kind_schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and _DEFS in ref:
                name = ref.partition(_DEFS)[2]
                if name in definitions and name not in reached:
                    reached[name] = definitions[name]
                    stack.append(definitions[name])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return reached


def _kind_part(kind_text: bytes, definitions_text: bytes) -> dict[str, Any]:
    """From a kind's file and the definitions file: the kind's schema, and the
    definitions document holding only what the kind reaches; neither with
    descriptions."""
    schema = json.loads(kind_text)
    document = json.loads(definitions_text)
    reached = _reached(schema, document.get("$defs") or {})
    return {
        "schema": without_descriptions(schema),
        "definitions": without_descriptions({**document, "$defs": reached}),
    }


@cache
def _kind(version: str, filename: str) -> dict[str, Any]:
    """``{"schema": the kind's schema, "definitions": the definitions it reaches}``.

    The cache entry is keyed by the kind file's bytes and the definitions file's path,
    size and modification time: reading and hashing its 1.3 MB on every run would cost
    more than the rest of the lookup."""
    try:
        kind_bytes = _path(version, filename).read_bytes()
    except FileNotFoundError:
        raise UnknownKind(filename) from None
    definitions = _path(version, "_definitions.json")
    stat = definitions.stat()
    identity = f"{definitions}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()

    def build(_: bytes) -> dict[str, Any]:
        return _kind_part(kind_bytes, definitions.read_bytes())

    part: dict[str, Any] = cached("k8s-kind", kind_bytes + b"\0" + identity, build)
    return part


@cache
def _validator(version: str, filename: str) -> jsonschema.protocols.Validator:
    """jsonschema's validator of the kind, its ``$ref``s resolved in the definitions."""
    import jsonschema  # 60 ms, with referencing: only when an object needs it
    from referencing import Registry, Resource

    part = _kind(version, filename)
    registry: Registry[Any] = Resource.from_contents(part["definitions"]) @ Registry()
    cls = jsonschema.validators.validator_for(part["schema"])
    return cls(part["schema"], registry=registry)


_KEYWORDS = {
    "http://json-schema.org/draft-07/schema#": DRAFT7_KEYWORDS,
    "https://json-schema.org/draft/2020-12/schema": DRAFT202012_KEYWORDS,
}


@cache
def _compiled(version: str, filename: str) -> CompiledSchema:
    """The kind's schema compiled (see ``check.compiled``): same errors, far faster."""
    part = _kind(version, filename)
    definitions = part["definitions"]["$defs"]

    def resolve(ref: str) -> Any:
        _, found, name = ref.partition(_DEFS)
        if not found or name not in definitions:
            raise LookupError(ref)
        return definitions[name]

    keywords = _KEYWORDS.get(part["schema"].get("$schema", ""))
    if keywords is None:  # a draft not known here: let jsonschema name its keywords
        return compile_schema(part["schema"], _validator(version, filename), resolve)
    return compile_schema(part["schema"], lambda: _validator(version, filename), resolve, keywords)


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
    if not errors:
        return
    from jsonschema.exceptions import best_match  # imported by the errors' making already

    errors = sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        # anyOf/oneOf errors are vague at the top; report the most specific cause.
        best = best_match([error])
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
    return _bundled(
        version, _filename(str(manifest.get("apiVersion", "")), str(manifest.get("kind", "")))
    )


@cache
def _bundled(version: str, name: str) -> bool:
    try:
        return _path(version, name).is_file()
    except UnknownKind:
        return False


def problems(manifest: Mapping[str, Any], version: str) -> list[SchemaProblem]:
    """Schema problems of one built-in object; raises UnknownKind for custom resources."""
    api_version = str(manifest.get("apiVersion", ""))
    kind = str(manifest.get("kind", ""))
    return list(_problems(_compiled(version, _filename(api_version, kind)).errors(manifest)))


def template_problems(template: Mapping[str, Any], version: str) -> list[SchemaProblem]:
    """Schema problems of a core/v1 PodTemplateSpec."""
    return list(_problems(_compiled(version, "podtemplatespec-v1.json").errors(template)))
