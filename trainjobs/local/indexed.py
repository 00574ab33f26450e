"""The pods of an Indexed batch Job, as Kubernetes' Job controller makes them. Pure.

JobSet (and so a TrainJob on the ``pods`` target) runs its replicas as Indexed Jobs:
one Job, ``completions`` pods. The Job controller (Kubernetes 1.31+,
``pkg/controller/job``) gives pod ``k``:

* the annotation and the label ``batch.kubernetes.io/job-completion-index: "k"``;
* the hostname ``<job>-<k>``, unless the template sets one (with the template's
  ``subdomain``, ``<job>-<k>.<subdomain>`` resolves through the headless Service);
* in every container and init container that does not already define it, the env
  entry ``JOB_COMPLETION_INDEX`` from a fieldRef to that annotation, last in the list.

A fieldRef to the annotation (Trainer's ``PET_NODE_RANK``) then resolves to ``k`` the
way every other fieldRef does (see ``environment``). On a cluster the pod's name is
``<job>-<k>-<random suffix>``; here it is ``<job>-<k>``, its hostname, so names stay
deterministic.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from trainjobs.k8s.data import Manifest, deep_copy

__all__ = [
    "COMPLETION_INDEX_ENV",
    "COMPLETION_INDEX_KEY",
    "completions",
    "indexed_pods",
    "pod_of",
]

COMPLETION_INDEX_KEY: Final = "batch.kubernetes.io/job-completion-index"
"""The annotation (and label) holding a pod's completion index."""
COMPLETION_INDEX_ENV: Final = "JOB_COMPLETION_INDEX"
"""The env variable the Job controller adds to every container of an Indexed Job's pod."""
_FIELD: Final = f"metadata.annotations['{COMPLETION_INDEX_KEY}']"


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def completions(job: Mapping[str, Any]) -> int:
    """How many pods an Indexed Job makes: ``completions``, else ``parallelism``, else 1."""
    spec = job.get("spec") or {}
    return _int(spec.get("completions"), _int(spec.get("parallelism"), 1))


def _with_index_env(container: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(container)
    env = list(out.get("env") or [])
    if not any(isinstance(e, Mapping) and e.get("name") == COMPLETION_INDEX_ENV for e in env):
        env.append({"name": COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": _FIELD}}})
    out["env"] = env
    return out


def pod_of(job: Manifest, index: int) -> Manifest:
    """Pod ``index`` of the Indexed Job ``job``, named ``<job>-<index>``."""
    name = str((job.get("metadata") or {}).get("name"))
    namespace = (job.get("metadata") or {}).get("namespace")
    template = deep_copy((job.get("spec") or {}).get("template") or {})
    meta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    value = str(index)
    metadata: dict[str, Any] = {
        "name": f"{name}-{index}",
        "labels": {**(meta.get("labels") or {}), COMPLETION_INDEX_KEY: value},
        "annotations": {**(meta.get("annotations") or {}), COMPLETION_INDEX_KEY: value},
    }
    if namespace is not None:
        metadata["namespace"] = namespace
    spec["hostname"] = spec.get("hostname") or f"{name}-{index}"
    for key in ("initContainers", "containers"):
        if spec.get(key):
            spec[key] = [_with_index_env(c) for c in spec[key] if isinstance(c, Mapping)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _indexed(manifest: Manifest) -> bool:
    return (
        manifest.get("kind") == "Job"
        and (manifest.get("spec") or {}).get("completionMode") == "Indexed"
    )


def indexed_pods(manifests: Sequence[Manifest]) -> Iterator[Manifest]:
    """The pods of every Indexed Job among ``manifests``, in order; a pod whose name
    an object of ``manifests`` already has is left out (that object wins)."""
    taken = {(str(m.get("kind")), str((m.get("metadata") or {}).get("name"))) for m in manifests}
    for manifest in manifests:
        if not _indexed(manifest):
            continue
        for index in range(completions(manifest)):
            pod = pod_of(manifest, index)
            if ("Pod", pod["metadata"]["name"]) not in taken:
                yield pod
