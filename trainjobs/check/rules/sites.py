"""Where pods are in a rendered object: bare Pods, workload templates, custom resources.

Every rule about pods runs over *sites*: one pod spec with its metadata and the
path where it sits in the object. A Pod is one site at the root; a Deployment,
StatefulSet, DaemonSet, ReplicaSet, Job or CronJob has its template; a training
custom resource has one template per replica type, found through its framework's
``pod_templates`` — so a rule written once covers every target and kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from trainjobs.check.rules.model import Check, RuleContext, Violation
from trainjobs.errors import format_path
from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.pods import each_container

__all__ = [
    "CONTAINER_FIELDS",
    "MISSING",
    "PodCheck",
    "PodSite",
    "carries_pods",
    "containers",
    "get_path",
    "join",
    "per_pod",
    "pod_sites",
    "quoted",
    "split_path",
]

CONTAINER_FIELDS = ("containers", "initContainers", "ephemeralContainers")
"""The PodSpec lists whose entries are containers."""

# Where the pod template of each built-in workload kind sits.
_TEMPLATE_AT: dict[tuple[str, str], str] = {
    ("v1", "Pod"): "",
    ("v1", "PodTemplate"): "template",
    ("v1", "ReplicationController"): "spec.template",
    ("apps/v1", "Deployment"): "spec.template",
    ("apps/v1", "StatefulSet"): "spec.template",
    ("apps/v1", "DaemonSet"): "spec.template",
    ("apps/v1", "ReplicaSet"): "spec.template",
    ("batch/v1", "Job"): "spec.template",
    ("batch/v1", "CronJob"): "spec.jobTemplate.spec.template",
}


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()
"""What :func:`get_path` returns for a path that is not in the object."""


@dataclass(frozen=True)
class PodSite:
    """One pod spec inside a rendered object.

    Attributes:
        path: where the pod (its ``metadata`` and ``spec``) sits in the object: ``""``
            for a Pod, ``spec.template`` for a Deployment, the replica's template path
            for a custom resource.
        metadata: the pod's (or template's) metadata.
        spec: the PodSpec.
        owner: the object's ``apiVersion`` and ``kind``, e.g. ``("batch/v1", "Job")``.
        framework: the framework whose custom resource holds the template, else None.
        replica_restart_policy: for a custom resource, the replica's ``restartPolicy``
            (which overrides the template's); None otherwise.
        replica_restart_path: where that ``restartPolicy`` sits in the object.
    """

    path: str
    metadata: Mapping[str, Any]
    spec: Mapping[str, Any]
    owner: tuple[str, str]
    framework: Framework[Any] | None = None
    replica_restart_policy: str | None = None
    replica_restart_path: str = ""

    def at(self, path: str) -> str:
        """A path inside the pod (``spec.hostNetwork``) as a path inside the object."""
        return join(self.path, path)

    @property
    def is_linux(self) -> bool:
        """False only for pods that declare ``spec.os.name: windows``."""
        return (self.spec.get("os") or {}).get("name") != "windows"


PodCheck = Callable[[PodSite, RuleContext], Iterable[Violation]]
"""A rule over one pod site; its violations carry paths inside the whole object."""


def join(*parts: str) -> str:
    """Join dotted path parts, skipping empty ones: ``join("spec.template", "spec")``."""
    out = ""
    for part in parts:
        if not part:
            continue
        out = part if not out else out + (part if part.startswith("[") else "." + part)
    return out


_TOKEN = re.compile(r"\.?([A-Za-z0-9_$-]+)|\[(\d+)\]|\[('(?:[^'\\]|\\.)*'|\"[^\"]*\")\]")


def split_path(path: str) -> list[str | int]:
    """``spec.containers[0]['a.b/c']`` → ``["spec", "containers", 0, "a.b/c"]``.

    The inverse of :func:`trainjobs.errors.format_path`.
    """
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        match = _TOKEN.match(path, pos)
        if match is None:
            raise ValueError(f"not a field path: {path!r}")
        name, index, quoted = match.groups()
        if name is not None:
            parts.append(name)
        elif index is not None:
            parts.append(int(index))
        else:
            parts.append(quoted[1:-1].replace("\\'", "'"))
        pos = match.end()
    return parts


def get_path(obj: Any, path: str) -> Any:
    """The value at ``path`` inside ``obj``, or ``MISSING``."""
    current = obj
    for part in split_path(path):
        if isinstance(part, int):
            if not isinstance(current, list) or part >= len(current):
                return MISSING
        elif not isinstance(current, Mapping) or part not in current:
            return MISSING
        current = current[part]
    return current


def containers(spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every container of a PodSpec with its path (``spec.initContainers[0]``)."""
    for field, index, container in each_container(spec, CONTAINER_FIELDS):
        yield f"spec.{field}[{index}]", container


def carries_pods(api_version: str, kind: str) -> bool:
    """Whether objects of this kind hold pod specs (and so the check rules apply to them)."""
    return (api_version, kind) in _TEMPLATE_AT or REGISTRY.by_kind(api_version, kind) is not None


def _site(
    obj: Mapping[str, Any], path: str, owner: tuple[str, str], **extra: Any
) -> PodSite | None:
    pod = get_path(obj, path) if path else obj
    if not isinstance(pod, Mapping):
        return None
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return None
    metadata = pod.get("metadata")
    return PodSite(path, metadata if isinstance(metadata, Mapping) else {}, spec, owner, **extra)


def _custom_resource_sites(manifest: Mapping[str, Any], framework: Framework[Any]) -> list[PodSite]:
    try:
        job = framework.model.model_validate(manifest)
    except ValidationError:
        return []  # the CRD schema check reports what is malformed
    owner = (framework.kind.api_version, framework.kind.kind)
    sites = []
    for ref in framework.pod_templates(job):
        # Kubeflow's common ReplicaSpec: restartPolicy sits beside the template.
        replica_path = ref.path.rpartition(".")[0]
        policy = get_path(manifest, join(replica_path, "restartPolicy"))
        site = _site(
            manifest,
            ref.path,
            owner,
            framework=framework,
            replica_restart_policy=policy if isinstance(policy, str) else None,
            replica_restart_path=join(replica_path, "restartPolicy"),
        )
        if site is not None:
            sites.append(site)
    return sites


def pod_sites(manifest: Mapping[str, Any]) -> list[PodSite]:
    """Every pod spec in ``manifest``, in the order they appear."""
    owner = (str(manifest.get("apiVersion", "")), str(manifest.get("kind", "")))
    path = _TEMPLATE_AT.get(owner)
    if path is not None:
        site = _site(manifest, path, owner)
        return [site] if site is not None else []
    framework = REGISTRY.of_document(manifest)
    if framework is not None:
        return _custom_resource_sites(manifest, framework)
    return []


def quoted(*parts: str | int) -> str:
    """A path with keys that hold dots or slashes quoted, as findings print them."""
    return format_path(parts)


def per_pod(check: PodCheck) -> Check:
    """A rule over every pod site of an object, from a rule over one site."""

    def run(manifest: Mapping[str, Any], ctx: RuleContext) -> Iterator[Violation]:
        for site in pod_sites(manifest):
            yield from check(site, ctx)

    run.__doc__ = check.__doc__
    run.__name__ = check.__name__
    return run
