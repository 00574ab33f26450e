"""Pod Security labels on the Namespaces a stack creates.

``trainjobs check`` holds every pod to a Pod Security level (``trainjobs:podSecurity``,
default baseline). A Namespace the stack creates carries the
``pod-security.kubernetes.io/*`` labels of that level, so the cluster's admission
enforces what the check promised: ``audit`` and ``warn`` at the checked level, and
``enforce`` at it too unless an object in the namespace (or the whole stack) silences
rules of that level — a job that names ``pss.baseline.host_namespaces`` in its
``ignore`` needs ``privileged``, one that silences only ``pss.restricted.*`` rules
needs ``baseline``. Each label is pinned to the Kubernetes version the stack is checked
against. Labels a Namespace already has are kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from trainjobs.k8s.data import Manifest
from trainjobs.spec.stack import Profile

__all__ = [
    "LABEL_PREFIX",
    "enforced_level",
    "ignores_by_namespace",
    "with_pod_security_labels",
]

LABEL_PREFIX = "pod-security.kubernetes.io/"


def _silences_level(entry: str, level: str) -> bool:
    """Whether an ignore entry silences some rule of ``level`` (``pss``, ``pss.<level>``,
    or one rule ``pss.<level>.<rule>``)."""
    return entry == "pss" or entry == f"pss.{level}" or entry.startswith(f"pss.{level}.")


def enforced_level(checked: Profile, ignored: Iterable[str]) -> str:
    """The level a namespace can enforce when its objects were checked at ``checked``
    with the rule entries ``ignored`` silenced."""
    entries = list(ignored)
    if any(_silences_level(e, "baseline") for e in entries):
        return "privileged"
    if checked == "restricted" and any(_silences_level(e, "restricted") for e in entries):
        return "baseline"
    return checked


def with_pod_security_labels(
    namespace: Manifest, checked: Profile, enforce: str, k8s_version: str
) -> Manifest:
    """``namespace`` labelled to enforce ``enforce`` and audit and warn at ``checked``."""
    version = f"v{k8s_version}"
    wanted = {
        f"{LABEL_PREFIX}enforce": enforce,
        f"{LABEL_PREFIX}enforce-version": version,
        f"{LABEL_PREFIX}audit": checked,
        f"{LABEL_PREFIX}audit-version": version,
        f"{LABEL_PREFIX}warn": checked,
        f"{LABEL_PREFIX}warn-version": version,
    }
    meta = dict(namespace.get("metadata") or {})
    meta["labels"] = dict(sorted({**wanted, **(meta.get("labels") or {})}.items()))
    return {**namespace, "metadata": meta}


def ignores_by_namespace(
    manifests: Sequence[Manifest], ignore_annotation: str
) -> dict[str, list[str]]:
    """The ignore entries of the objects in each namespace."""
    found: dict[str, list[str]] = {}
    for manifest in manifests:
        meta = manifest.get("metadata") or {}
        ns = meta.get("namespace")
        if not isinstance(ns, str):
            continue
        text = str((meta.get("annotations") or {}).get(ignore_annotation, ""))
        found.setdefault(ns, []).extend(c.strip() for c in text.split(",") if c.strip())
    return found
