"""Small helpers the Trainer and JobSet expansions share: strategic merge and upserts
(quantities are ``k8s.quantity``'s).

Pure functions on plain data; every function returns new data and never aliases input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from trainjobs.k8s.data import deep_copy

__all__ = [
    "MERGE_KEYS",
    "by_name",
    "by_port_or_name",
    "strategic_merge",
    "upsert",
]

MERGE_KEYS: Final = {
    "replicatedJobs": "name",
    "dependsOn": "name",
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "imagePullSecrets": "name",
    "schedulingGates": "name",
    "ports": "containerPort",
    "resourceClaims": "name",
    "claims": "name",
}
"""The list fields of JobSetSpec and core/v1 that a strategic merge patch merges by key
(their ``patchMergeKey``), as ``strategicpatch.StrategicMergePatch`` reads the Go struct
tags of ``jobset.x-k8s.io/v1alpha2`` and ``k8s.io/api``. Any other list is replaced."""


RETAIN_KEYS: Final = frozenset({"volumes"})
"""Keyed lists whose patch strategy also says ``retainKeys``: a patched item keeps only the
keys the patch names (a volume patched to ``emptyDir`` loses its ``configMap``)."""


def strategic_merge(original: Any, patch: Any, field: str = "") -> Any:
    """``patch`` applied to ``original`` by the strategic-merge rules of :data:`MERGE_KEYS`.

    Maps merge key by key (a null deletes); keyed lists merge item by item (new items are
    appended); other lists and scalars are replaced.
    """
    if isinstance(original, Mapping) and isinstance(patch, Mapping):
        out = deep_copy(original)
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = strategic_merge(out[key], value, str(key))
            else:
                out[key] = _copy(value)
        return out
    key = MERGE_KEYS.get(field)
    if key and isinstance(original, list) and isinstance(patch, list):
        out_list = [_copy(item) for item in original]
        for item in patch:
            if not isinstance(item, Mapping):
                out_list.append(_copy(item))
                continue
            for index, existing in enumerate(out_list):
                if isinstance(existing, Mapping) and existing.get(key) == item.get(key):
                    merged = strategic_merge(existing, item, field)
                    if field in RETAIN_KEYS:
                        merged = {k: v for k, v in merged.items() if k in item}
                    out_list[index] = merged
                    break
            else:
                out_list.append(_copy(item))
        return out_list
    return _copy(patch)


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return deep_copy(value)
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def by_name(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same ``name`` (env vars, volumes)."""
    return a.get("name") == b.get("name")


def by_mount_path(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same ``mountPath`` (volume mounts)."""
    return a.get("mountPath") == b.get("mountPath")


def by_port_or_name(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same ``containerPort``, or same ``name`` — two unnamed ports count as the same, as
    the Trainer's ``apply.UpsertPort`` compares two unset names equal."""
    return a.get("containerPort") == b.get("containerPort") or a.get("name") == b.get("name")


def upsert(
    items: Sequence[Mapping[str, Any]],
    new: Sequence[Mapping[str, Any]],
    same: Callable[[Mapping[str, Any], Mapping[str, Any]], bool] = by_name,
) -> list[dict[str, Any]]:
    """``items`` with each of ``new`` replacing the first item it matches in place, or
    appended: the Trainer's ``apply.Upsert*``."""
    out = [deep_copy(item) for item in items]
    for item in new:
        for index, existing in enumerate(out):
            if same(existing, item):
                out[index] = deep_copy(item)
                break
        else:
            out.append(deep_copy(item))
    return out
