"""Kubernetes objects as plain data: their types, and copies that never alias the user's input."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from trainjobs.k8s.structural import kubernetes_type

__all__ = ["Manifest", "PodTemplate", "deep_copy", "drop_nulls"]

Manifest = dict[str, Any]
"""One plain Kubernetes object (``apiVersion``, ``kind``, ``metadata`` …)."""

PodTemplate = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.PodTemplateSpec")]
"""A core/v1 PodTemplateSpec as plain data; checked against the Kubernetes schema, and
written with the Kubernetes schema into generated CRDs."""


def deep_copy(value: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy, so expansions never alias the user's input.

    Manifests are plain JSON-like data (dicts, lists, scalars), so a copier that
    knows only those is several times faster than ``copy.deepcopy`` — and the
    expansion copies a template once per replica.
    """
    return {k: v if type(v) in _SCALARS else _copy_json(v) for k, v in value.items()}


_SCALARS = frozenset({str, int, float, bool, type(None)})


def drop_nulls(value: Any) -> Any:
    """``value`` without the null fields of its mappings, at every depth.

    The API server prunes a null field of a custom resource whose schema does
    not say ``nullable: true`` before defaulting and validation, so ``args:
    null`` and a bare ``command:`` mean "unset". Items of lists stay, nulls too
    (the schema then rejects a null item, as the server does).
    """
    if isinstance(value, Mapping):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(item) for item in value]
    return value


def _copy_json(value: Any) -> Any:
    # Exact type tests, and no call for a scalar: most of a template is scalars,
    # and this runs once per replica.
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _SCALARS else _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _SCALARS else _copy_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: v if type(v) in _SCALARS else _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _SCALARS else _copy_json(v) for v in value]
    return value
