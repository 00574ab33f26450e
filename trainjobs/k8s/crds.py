"""The CustomResourceDefinitions trainjobs ships, under ``crds/``.

Operators install them and the checks validate custom resources against them;
both read them from here. Each file is parsed once.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml

__all__ = ["crd_dir", "crd_files", "load_crd", "parse_crd"]

try:
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


def crd_dir() -> Path:
    """Where the shipped CRDs are: ``$TRAINJOBS_CRDS``, else the package's ``crds``.

    In a checkout ``trainjobs/crds`` links to the top-level ``crds/``; a built
    wheel holds the files themselves, so an installed trainjobs finds them too.
    """
    override = os.environ.get("TRAINJOBS_CRDS")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1] / "crds"


def crd_files() -> list[Path]:
    """Every CRD file shipped, sorted."""
    return sorted(crd_dir().rglob("*.yaml"))


def parse_crd(source: bytes | str) -> dict[str, Any]:
    """A CRD file's text as a manifest."""
    crd: dict[str, Any] = yaml.load(source, Loader=_Loader)
    return crd


@cache
def _parsed(path: Path) -> dict[str, Any]:
    return parse_crd(path.read_bytes())


def load_crd(relative: str) -> dict[str, Any]:
    """The CRD at ``crds/<relative>`` as a manifest (shared and cached: copy before changing)."""
    return _parsed(crd_dir() / relative)


IMMUTABLE_RULE = "self == oldSelf"
"""The CRD validation rule that makes a field unchangeable once the object exists."""


def immutable_fields(crd: Mapping[str, Any], version: str) -> tuple[str, ...]:
    """The fields of ``version`` of ``crd`` that the API server refuses to change once
    the object exists (``x-kubernetes-validations: [{rule: self == oldSelf}]``), as
    ``.spec.runtimeRef``, with ``[*]`` for any list item; in schema order."""
    for served in (crd.get("spec") or {}).get("versions") or []:
        if served.get("name") == version:
            schema = (served.get("schema") or {}).get("openAPIV3Schema") or {}
            return tuple(_immutable(schema, ""))
    return ()


def _immutable(schema: Mapping[str, Any], path: str) -> Iterator[str]:
    rules = schema.get("x-kubernetes-validations") or []
    if path and any(r.get("rule") == IMMUTABLE_RULE for r in rules if isinstance(r, Mapping)):
        yield path
        return  # the whole subtree is fixed with it
    for name, child in (schema.get("properties") or {}).items():
        if isinstance(child, Mapping):
            yield from _immutable(child, f"{path}.{name}")
    items = schema.get("items")
    if isinstance(items, Mapping):
        yield from _immutable(items, f"{path}[*]")
