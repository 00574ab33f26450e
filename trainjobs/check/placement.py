"""The schedulability rule over a stack: every job against the node pools and queues it names.

Runs on every render (``check.run``). The rules themselves live with the pools
(``platform.pools.schedulability``); this module only pairs each rendered job's
replicas with their pools and the job with its queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from trainjobs.errors import Finding, Severity
from trainjobs.k8s.pods import containers
from trainjobs.k8s.quantity import format_quantity, quantity_or_zero
from trainjobs.platform.base import Reference
from trainjobs.platform.pools.placement import bound_templates, node_selector, placement_of
from trainjobs.platform.pools.resources import GPU
from trainjobs.platform.pools.schedulability import (
    BoundReplica,
    bytes_text,
    gang_findings,
    min_available,
    replica_findings,
    unplaced_findings,
)
from trainjobs.platform.pools.spec import GpuNodePool
from trainjobs.platform.queue import EPHEMERAL, GpuQueue, job_demand
from trainjobs.platform.queue import KIND as QUEUE_KIND
from trainjobs.render import PlatformIndex, RenderedJob, Rendering
from trainjobs.spec.stack import StackSpec

__all__ = ["placement_findings"]


def _replica_path(job: RenderedJob, template_path: str) -> str:
    return f"{job.origin}.{template_path.removesuffix('.template')}"


def _bind(job: RenderedJob, index: PlatformIndex) -> list[BoundReplica]:
    """Each replica type of the job with the pool it was placed on (or none)."""
    pools: dict[str, GpuNodePool] = {}
    for ref in job.entry.references():
        if ref.category != "nodePool":
            continue
        found, _ = index.resolve(ref, job.job.namespace)
        if found is None or not isinstance(found.resource, GpuNodePool):
            continue
        templates, _ = bound_templates(job.plan, ref)
        for template in templates:
            pools[template.role] = found.resource
    return [
        BoundReplica(
            t,
            _replica_path(job, t.path),
            pools.get(t.role),
            placement_of(pools[t.role]) if t.role in pools else None,
        )
        for t in job.plan.pod_sets
    ]


def _queue_findings(job: RenderedJob, index: PlatformIndex, ref: Reference) -> list[Finding]:
    found, _ = index.resolve(ref, job.job.namespace)
    if found is None or not isinstance(found.resource, GpuQueue):
        return []
    # A GpuQueue document is served by its kind's plugin.
    queue = found.resource
    quota = QUEUE_KIND.quota(queue, QUEUE_KIND.pool_of(queue, index.resources))
    need = job_demand(job.plan)
    findings = []
    checks = (
        ("GPUs", need.gpus, quota.gpus, format_quantity, "gpus", GPU),
        ("CPU", need.cpu, quota.cpu, format_quantity, "cpu", "cpu"),
        ("memory", need.memory, quota.memory, bytes_text, "memory", "memory"),
    )
    findings += _uncovered_findings(job, queue, ref)
    ephemeral = QUEUE_KIND.ephemeral_quota(queue)
    wanted_ephemeral = sum(
        (_request(t, EPHEMERAL) * count for _, t, count in _job_pods(job)), Fraction(0)
    )
    if ephemeral is not None and wanted_ephemeral > ephemeral:
        findings.append(
            Finding(
                code="queue.quota",
                path=ref.path,
                message=(
                    f"the job needs {bytes_text(wanted_ephemeral)} ephemeral-storage at once, "
                    f'but queue "{queue.name}" has a quota of {bytes_text(ephemeral)}; Kueue '
                    "would never admit it"
                ),
                hint=f'raise spec.ephemeralStorage of queue "{queue.name}" to '
                f"{bytes_text(wanted_ephemeral)}",
                source=job.source,
            )
        )
    for what, wanted, allowed, text, field, resource in checks:
        if wanted <= allowed or (what != "GPUs" and wanted == Fraction(0)):
            continue
        findings.append(
            Finding(
                code="queue.quota",
                path=ref.path,
                message=(
                    f'the job needs {text(wanted)} {what} at once, but queue "{queue.name}" '
                    f"has a quota of {text(allowed)} {resource}; Kueue would never admit it"
                ),
                hint=(
                    f'raise spec.{field} of queue "{queue.name}" to {text(wanted)} or run '
                    "fewer or smaller replicas"
                ),
                source=job.source,
            )
        )
    return findings


def _job_pods(job: RenderedJob) -> list[tuple[str, Mapping[str, Any], int]]:
    """(what, pod template, how many) of every pod the job runs: the Pods and batch Jobs
    the render made (the ``pods`` target, with what the operator adds to them), else
    the plan's pod sets (the operator makes the pods from those templates)."""
    made: list[tuple[str, Mapping[str, Any], int]] = []
    for obj in job.objects:
        m = obj.manifest
        if m.get("kind") == "Pod":
            made.append((f"pod {m['metadata']['name']}", {"spec": m.get("spec") or {}}, 1))
        elif m.get("kind") == "Job":
            spec = m.get("spec") or {}
            count = int(spec.get("parallelism", 1))
            made.append((f"Job {m['metadata']['name']}", spec.get("template") or {}, count))
    if made:
        return made
    return [(f"{s.role} pods", s.template, s.replicas) for s in job.plan.pod_sets]


def _requested(template: Mapping[str, Any]) -> dict[str, str]:
    """Each resource the pod requests (or limits, which then default its request), with
    the first container that does."""
    found: dict[str, str] = {}
    for key in ("initContainers", "containers"):
        for c in containers(template, key):
            resources = c.get("resources") or {}
            for name in [*(resources.get("requests") or {}), *(resources.get("limits") or {})]:
                found.setdefault(str(name), f"{key[:-1]} {c.get('name')}")
    return found


def _request(template: Mapping[str, Any], name: str) -> Fraction:
    """What a pod reserves of ``name``: the containers' sum or the largest init container."""

    def one(c: Mapping[str, Any]) -> Fraction:
        resources = c.get("resources") or {}
        limit = (resources.get("limits") or {}).get(name)
        return quantity_or_zero((resources.get("requests") or {}).get(name, limit))

    total = sum((one(c) for c in containers(template)), Fraction(0))
    return max([total, *(one(c) for c in containers(template, "initContainers"))])


def _uncovered_findings(job: RenderedJob, queue: GpuQueue, ref: Reference) -> list[Finding]:
    """A resource the job's pods request that the queue has no quota for: Kueue admits
    no workload asking for a resource its ClusterQueue does not cover."""
    covered = set(QUEUE_KIND.covered(queue))
    first: dict[str, str] = {}
    for what, template, _ in _job_pods(job):
        for name, container in _requested(template).items():
            if name not in covered:
                first.setdefault(name, f"{what}, {container}")
    findings = []
    for name, where in sorted(first.items()):
        fix = (
            f'give queue "{queue.name}" a quota of it: spec.ephemeralStorage'
            if name == EPHEMERAL
            else f"drop the {name} request, or admit the job through a queue that covers it"
        )
        findings.append(
            Finding(
                code="queue.resource",
                path=ref.path,
                message=(
                    f'the job\'s pods request {name} ({where}), which queue "{queue.name}" has '
                    f"no quota for (it covers {', '.join(QUEUE_KIND.covered(queue))}); Kueue "
                    "would never admit it"
                ),
                hint=fix,
                source=job.source,
            )
        )
    return findings


def _device_plugin_findings(stack: StackSpec) -> list[Finding]:
    """Two static pools whose device plugins would both run on the same nodes."""
    pools = [
        (e, e.resource)
        for e in stack.platform
        if isinstance(e.resource, GpuNodePool)
        and e.resource.spec.provider == "static"
        and (e.resource.spec.static is None or e.resource.spec.static.device_plugin)
    ]
    findings = []
    for i, (_, first) in enumerate(pools):
        for second_entry, second in pools[i + 1 :]:
            a, b = node_selector(first), node_selector(second)
            if a.items() <= b.items() or b.items() <= a.items():
                findings.append(
                    Finding(
                        code="pool.device_plugin_overlap",
                        path=f"{second_entry.path}.spec.labels",
                        message=(
                            f"static pools {first.name!r} and {second.name!r} "
                            "both run the NVIDIA device plugin, and a node that carries the "
                            "labels of one carries those of the other; two plugins on one node "
                            "compete for its GPUs"
                        ),
                        value=b,
                        hint="give each static pool labels of its own, or set "
                        "static.devicePlugin: false on one of them",
                        severity=Severity.WARNING,
                        source=second_entry.source,
                    )
                )
    return findings


def placement_findings(stack: StackSpec, rendering: Rendering) -> list[Finding]:
    """Per pod, per gang and per queue: whether each job can ever run where it is sent."""
    index = PlatformIndex(stack.platform, stack.unresolved)
    all_pools = [e.resource for e in stack.platform if isinstance(e.resource, GpuNodePool)]
    findings = _device_plugin_findings(stack)
    for job in rendering.jobs:
        replicas = _bind(job, index)
        problems: list[Finding] = []
        for replica in replicas:
            problems += replica_findings(replica)
            problems += unplaced_findings(replica, all_pools)
        gang = min_available(getattr(job.job, "spec", None))
        problems += gang_findings(replicas, gang)
        findings += [f.located(job.source) for f in problems]
        for ref in job.entry.references():
            if ref.category == "queue":
                findings += _queue_findings(job, index, ref)
    return findings
