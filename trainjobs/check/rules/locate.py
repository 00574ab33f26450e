"""From a place in a rendered object back to the field the user wrote.

A rule finds ``spec.containers[0].image`` of Pod ``mnist-worker-1``; the user wrote
that image at ``jobs[0].spec.tfReplicaSpecs.Worker.template.spec.containers[0].image``.
One mechanism serves every framework and target: the job's pod templates are
marked with a probe label and expanded once more, and wherever a marked template
lands — a Pod, a batch Job's template, a custom resource's replica — that pod
spec is known to come from that template (the mark is a label and the images of
the template's containers, since some operators drop the template's labels). A
place is mapped back only when the user's template holds the same value there
(or lacks it just as the object does), and every list item on the way (a
container, a volume) is the same item: what the operator or trainjobs added
(its env, init containers, restartPolicy) stays located in the rendered object.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

from trainjobs.check.rules.sites import (
    MISSING,
    PodSite,
    containers,
    get_path,
    join,
    pod_sites,
    split_path,
)
from trainjobs.errors import format_path
from trainjobs.k8s import pods
from trainjobs.k8s.data import PodTemplate, deep_copy
from trainjobs.plan import PodSet
from trainjobs.render import RenderedJob
from trainjobs.render.jobs import expand_job

__all__ = ["PROBE_LABEL", "JobOrigins", "identity"]

PROBE_LABEL = "trainjobs.dev/template-probe"
"""Label that marks a pod template in the probe expansion; never in a real render."""

Identity = tuple[str, str, str, str]


def identity(manifest: Mapping[str, Any]) -> Identity:
    """(API group, kind, namespace, name), as ``RenderedObject.identity``."""
    meta = manifest.get("metadata") or {}
    return (
        str(manifest.get("apiVersion", "")).rpartition("/")[0],
        str(manifest.get("kind")),
        str(meta.get("namespace", "")),
        str(meta.get("name")),
    )


def _probed(template: Mapping[str, Any], mark: str) -> PodTemplate:
    """The template marked twice: a label, and its containers' images — some operators
    (MindSpore's 2020 one) build pods without the template's labels, none without its
    containers' images."""
    out = deep_copy(template)
    meta = out.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), PROBE_LABEL: mark}
    for container in pods.containers(out):
        container["image"] = f"{PROBE_LABEL}:{mark}"
    return out


def _mark_of(site: PodSite) -> str:
    """The probe mark a pod site carries, or ``""``."""
    mark = (site.metadata.get("labels") or {}).get(PROBE_LABEL)
    if mark is None:
        images = [str(c.get("image")) for _, c in containers(site.spec)]
        marks = [i.rpartition(":")[2] for i in images if i.startswith(PROBE_LABEL + ":")]
        mark = marks[0] if marks else None
    return str(mark or "")


class JobOrigins:
    """Where the pod specs of one rendered job come from in the user's job document."""

    def __init__(self, job: RenderedJob) -> None:
        self.job = job
        self.document = job.entry.job.to_manifest()

    @cached_property
    def _written(self) -> dict[str, PodSet]:
        """The user's templates by role; defaulting may respell a key (worker → Worker)."""
        framework = self.job.entry.framework
        return {ref.role.lower(): ref for ref in framework.pod_templates(self.job.entry.job)}

    @cached_property
    def _own_sites(self) -> list[tuple[str, PodSet]]:
        """The job's custom resource is the defaulted job: its templates sit where its
        framework says, no probe needed."""
        refs = self.job.plan.pod_sets
        return [
            (ref.path, self._written[ref.role.lower()])
            for ref in refs
            if ref.role.lower() in self._written
        ]

    @cached_property
    def _probed_sites(self) -> dict[Identity, list[tuple[str, PodSet]]]:
        """Per object of the expansion, each pod site that comes from a user's template."""
        refs = self.job.plan.pod_sets
        marked = {ref.role: _probed(ref.template, str(i)) for i, ref in enumerate(refs)}
        probe = self.job.plan.with_templates(marked)
        framework = self.job.entry.framework
        written = framework.written(self.job.defaulted, probe)
        manifests, _ = expand_job(framework, written, probe, self.job.target)
        found: dict[Identity, list[tuple[str, PodSet]]] = {}
        for manifest in manifests:
            for site in pod_sites(manifest):
                mark = _mark_of(site)
                if not mark.isdigit() or int(mark) >= len(refs):
                    continue
                user = self._written.get(refs[int(mark)].role.lower())
                if user is not None:
                    found.setdefault(identity(manifest), []).append((site.path, user))
        return found

    def _is_own_resource(self, manifest: Mapping[str, Any]) -> bool:
        kind = self.job.entry.framework.kind
        return (
            manifest.get("apiVersion") == kind.api_version
            and manifest.get("kind") == kind.kind
            and identity(manifest)[3] == self.job.job.name
        )

    def locate(self, manifest: Mapping[str, Any], path: str) -> str | None:
        """The path in the job document (``spec.…``) of ``path`` in ``manifest``, or None."""
        own = self._is_own_resource(manifest)
        sites = self._own_sites if own else self._probed_sites.get(identity(manifest), [])
        for site_path, ref in sorted(sites, key=lambda site: -len(site[0])):
            if site_path and path != site_path and not path.startswith(site_path + "."):
                continue
            rest = path[len(site_path) :].lstrip(".")
            candidate = join(ref.path, rest)
            return candidate if self._agrees(manifest, site_path, ref.path, rest) else None
        if own and self._agrees(manifest, "", "", path):
            return path
        return None

    def _agrees(self, manifest: Mapping[str, Any], site: str, written: str, rest: str) -> bool:
        """Whether the user wrote what the object holds at ``rest`` below both roots."""
        here, there = site, written
        for part in split_path(rest) if rest else []:
            step = format_path([part])
            here, there = join(here, step), join(there, step)
            if isinstance(part, int):
                theirs, ours = get_path(self.document, there), get_path(manifest, here)
                if theirs is MISSING:
                    return False
                both = isinstance(theirs, Mapping) and isinstance(ours, Mapping)
                if both and theirs.get("name") != ours.get("name"):
                    return False
        return bool(get_path(self.document, there) == get_path(manifest, here))
