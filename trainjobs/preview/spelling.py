"""Values the API server stores in a spelling of its own, so that two spellings are no change.

The Pulumi Kubernetes provider (v4, server-side apply) does not compare the inputs
of a built-in object: it asks the API server for a dry run of the new object and
compares what the server would store with what it stores now. The server parses
every resource quantity of a built-in object (a Pod's or a Job template's
``resources``, ``overhead``, an ``emptyDir``'s ``sizeLimit`` …) and stores it in
its canonical text (:func:`~trainjobs.k8s.quantity.canonical_quantity`), so editing
``cpu: "1"`` to ``cpu: 1`` or ``"1000m"`` changes nothing there, while ``"1Gi"`` to
``1073741824`` does (the server keeps the decimal form), and replaces a Pod. A custom
resource (a TFJob) keeps each value as written: every spelling edit updates it.
``tests/cluster/pulumi_up/test_quantity_spelling.py`` pins this with the real engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainjobs.k8s.changes import Path, Same, same_value
from trainjobs.k8s.quantity import QuantityError, canonical_quantity

__all__ = ["BUILT_IN_GROUPS", "is_built_in", "quantity_field", "server_same"]

BUILT_IN_GROUPS = frozenset(
    {
        "",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
    }
)
"""API groups the API server serves itself (Kubernetes 1.36): their objects are decoded
into typed Go structs, quantities included. Any other group is a custom resource."""

_LIMIT_RANGE_FIELDS = frozenset({"default", "defaultRequest", "max", "maxLimitRequestRatio", "min"})


def is_built_in(api_version: str) -> bool:
    """Whether objects of ``api_version`` (``v1``, ``batch/v1``, not ``x.org/v1``) are built in."""
    group, _, _ = api_version.rpartition("/")
    return group in BUILT_IN_GROUPS


def quantity_field(kind: str, path: Path) -> bool:
    """Whether the field at ``path`` of a built-in object of ``kind`` is a resource quantity.

    Any container's or pod's ``resources.requests``/``limits`` (in a Pod, a
    template, a PersistentVolumeClaim), ``overhead`` (and a RuntimeClass's
    ``overhead.podFixed``), an ``emptyDir``'s ``sizeLimit``, a PersistentVolume's
    ``spec.capacity``, a ResourceQuota's ``spec.hard`` and a LimitRange's limits.
    """
    names = [p if isinstance(p, str) else "" for p in path]
    if len(names) >= 3 and names[-3] == "resources" and names[-2] in ("requests", "limits"):
        return True
    if len(names) >= 2 and (names[-2] == "overhead" or names[-2:] == ["emptyDir", "sizeLimit"]):
        return True
    if len(names) >= 3 and names[-3:-1] == ["overhead", "podFixed"]:
        return True
    if kind == "PersistentVolume" and names[:2] == ["spec", "capacity"] and len(names) == 3:
        return True
    if kind == "ResourceQuota" and names[:2] == ["spec", "hard"] and len(names) == 3:
        return True
    return (
        kind == "LimitRange"
        and names[:2] == ["spec", "limits"]
        and len(names) == 5
        and names[3] in _LIMIT_RANGE_FIELDS
    )


def server_same(obj: Mapping[str, Any], same: Same = same_value) -> Same:
    """How the provider compares two leaf values of ``obj``: with ``same``, except at a
    quantity field of a built-in object, where the text the API server stores decides
    (``"1"``, ``1`` and ``"1000m"`` are the same; ``"1Gi"`` and ``1073741824`` are not,
    whatever ``same`` says — ``preview --live`` compares quantities by value)."""
    if not is_built_in(str(obj.get("apiVersion", ""))):
        return same
    kind = str(obj.get("kind", ""))

    def compare(path: Path, old: Any, new: Any) -> bool:
        if quantity_field(kind, path):
            try:
                return canonical_quantity(old) == canonical_quantity(new)
            except QuantityError:
                pass  # not a quantity (the check reports it): compared as written
        return same(path, old, new)

    return compare
