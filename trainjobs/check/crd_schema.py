"""Custom-resource schema checks against the CRDs in ``crds/``.

The CRDs are large (600 KB each: full pod template schemas), so the index is
built from each file's head (group and kind come first in every CRD we ship)
and a file is parsed only when an object of its kind is checked; its versions'
schemas are then kept in the user's cache as JSON (``check.schema_cache``), which
the next run reads in a few milliseconds instead of parsing the YAML again.

Several files may define one kind at one version (the Training Operator v1.8.1
install ships its own, older TFJob CRD beside v1.9.4's); the file a framework
names as its ``crd_file`` is the one its jobs are checked against.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainjobs.check.compiled import (
    DRAFT7_KEYWORDS,
    CompiledSchema,
    compile_schema,
    without_descriptions,
)
from trainjobs.check.k8s_schema import SchemaProblem, plain_message
from trainjobs.check.schema_cache import cached
from trainjobs.errors import format_path
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.crds import crd_dir, crd_files, parse_crd

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["crd_dir", "crd_files", "problems", "schema_for"]

_GROUP = re.compile(r"^  group: (\S+)$", re.M)
_KIND = re.compile(r"^    kind: (\S+)$", re.M)


@cache
def _index(root: Path) -> dict[tuple[str, str], list[Path]]:
    index: dict[tuple[str, str], list[Path]] = {}
    for path in sorted(root.rglob("*.yaml")):
        with path.open(encoding="utf-8") as handle:
            head = handle.read(4096)
        group, kind = _GROUP.search(head), _KIND.search(head)
        if group and kind:
            index.setdefault((group.group(1), kind.group(1)), []).append(path)
    return index


def _candidates(api_version: str, kind: str) -> list[Path]:
    """The files that may define ``kind``, the one its framework names first.

    Only the framework of this kind is asked for its file: asking every framework
    would import them all, which is most of ``trainjobs check``'s start-up.
    """
    root = crd_dir()
    paths = _index(root).get((api_version.rpartition("/")[0], kind), [])
    framework = REGISTRY.by_kind(api_version, kind) if paths else None
    if framework is None or not framework.crd_file:
        return paths
    preferred = root / framework.crd_file
    return sorted(paths, key=lambda p: p != preferred)


def _version_schemas(source: bytes) -> dict[str, Any]:
    """A CRD file's openAPIV3Schema by version name, without descriptions."""
    crd = parse_crd(source)
    return {
        v["name"]: without_descriptions((v.get("schema") or {}).get("openAPIV3Schema") or {})
        for v in crd["spec"]["versions"]
    }


@cache
def _versions(path: Path) -> dict[str, Any]:
    versions: dict[str, Any] = cached("crd-versions", path.read_bytes(), _version_schemas)
    return versions


def schema_for(api_version: str, kind: str) -> dict[str, Any] | None:
    """The openAPIV3Schema of ``api_version``/``kind`` from the shipped CRDs, or None;
    without its descriptions (``compiled.without_descriptions``), which assert nothing."""
    version = api_version.rpartition("/")[2]
    for path in _candidates(api_version, kind):
        schema = _versions(path).get(version)
        if schema is not None:
            return dict(schema)
    return None


@cache
def _validator(api_version: str, kind: str) -> CompiledSchema | None:
    schema = schema_for(api_version, kind)
    if schema is None:
        return None

    def fallback() -> Validator:
        import jsonschema  # 60 ms: only once a node is left to it or an error is reported

        return jsonschema.Draft7Validator(schema)

    return compile_schema(schema, fallback, keywords=DRAFT7_KEYWORDS)


def _walk(validator: CompiledSchema, obj: Any) -> Iterator[SchemaProblem]:
    for error in sorted(validator.errors(obj), key=lambda e: [str(p) for p in e.absolute_path]):
        yield (
            format_path(error.absolute_path),
            plain_message(error.message, error.instance),
            error.instance,
        )


def problems(manifest: Mapping[str, Any]) -> list[SchemaProblem] | None:
    """Schema problems of one custom resource; None when no shipped CRD knows its kind."""
    validator = _validator(str(manifest.get("apiVersion", "")), str(manifest.get("kind", "")))
    if validator is None:
        return None
    return list(_walk(validator, manifest))
