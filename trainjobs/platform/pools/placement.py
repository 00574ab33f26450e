"""Placement: what a pool does to the pod templates of a job that names it.

GPU replicas (or the replica types named explicitly) get the pool's node selector,
tolerations for its taints and ``nvidia.com/gpu`` limits equal to requests. What
the user wrote stays: selectors and tolerations are added beside theirs, a selector
that contradicts theirs is a finding, affinity is left alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trainjobs.errors import Finding, Rule
from trainjobs.k8s.data import PodTemplate, deep_copy
from trainjobs.k8s.pods import containers
from trainjobs.k8s.quantity import quantity_or_zero
from trainjobs.plan import JobPlan, PodSet
from trainjobs.platform.base import Reference
from trainjobs.platform.pools.resources import GPU, pod_demand
from trainjobs.platform.pools.spec import GpuNodePool, Taint

__all__ = [
    "DO_NOT_DISRUPT",
    "POOL_LABEL",
    "Placement",
    "bound_templates",
    "job_path",
    "node_labels",
    "node_selector",
    "place_template",
    "placement_of",
    "selects",
    "tolerates",
    "toleration_for",
]

POOL_LABEL = "trainjobs.dev/node-pool"
"""The label a provider puts on every node of a pool (value: the pool's name)."""
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
"""Karpenter never voluntarily disrupts a node running a pod with this annotation."""


GPU_REQUESTS_LIMITS = Rule(
    "placement.gpu_requests_limits",
    f"{GPU} requests ({{requests}}) must equal limits ({{limits}}); GPUs are never shared "
    "or overcommitted",
    hint=f"set requests and limits of {GPU} to the same number",
)
SELECTOR_CONFLICT = Rule(
    "placement.node_selector",
    'pool "{pool}" selects {key}={value}, but the template selects {key}={own}; no node has both',
    hint="remove nodeSelector {key} or use a pool whose nodes carry it",
)
NO_TEMPLATES = Rule(
    "placement.no_templates",
    "{kind} exposes no pod templates to trainjobs, so it cannot be placed on a node pool",
    hint="remove nodePool and set the job's own node selector and tolerations",
)
NO_REPLICA_TYPE = Rule(
    "placement.replica_type",
    "the job has no replica type {role!r}",
    hint="use one of: {roles}",
)
NO_GPU_REPLICA = Rule(
    "placement.no_gpu_replica",
    f'the job names GPU pool "{{pool}}", but none of its replicas requests {GPU}, so nothing '
    "would run there",
    hint=f"request {GPU} in the replicas that need GPUs, or name the replica types: "
    "nodePool: {{{role}: {pool}}}",
)


def node_labels(pool: GpuNodePool) -> dict[str, str]:
    """Labels a provider sets on the nodes it creates: the pool label, then the extra labels."""
    return {POOL_LABEL: pool.name, **pool.spec.labels}


def node_selector(pool: GpuNodePool) -> dict[str, str]:
    """What a pod must select to land on the pool's nodes.

    Created nodes carry :func:`node_labels` and their provider's GPU label; existing
    (static) nodes carry the extra labels and, with GPU feature discovery, the product.
    """
    spec = pool.spec
    gpu = spec.gpu_type
    if spec.provider == "static":
        selector = dict(spec.labels)
        if spec.static is not None and spec.static.gpu_feature_discovery:
            selector["nvidia.com/gpu.product"] = gpu.product
        return selector
    selector = node_labels(pool)
    if spec.provider == "karpenter":
        selector["karpenter.k8s.aws/instance-gpu-name"] = gpu.karpenter_gpu_name
    elif spec.provider == "gke" and gpu.gke_accelerator is not None:
        selector["cloud.google.com/gke-accelerator"] = gpu.gke_accelerator
    return selector


@dataclass(frozen=True)
class Placement:
    """The placement contract of one pool.

    Attributes:
        pool: the pool's name, for messages.
        node_selector: labels a pod must select.
        taints: taints a pod must tolerate.
        annotations: annotations its pods get (Karpenter's do-not-disrupt).
    """

    pool: str
    node_selector: Mapping[str, str]
    taints: tuple[Taint, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=dict)


def placement_of(pool: GpuNodePool) -> Placement:
    annotations = {DO_NOT_DISRUPT: "true"} if pool.spec.provider == "karpenter" else {}
    return Placement(pool.name, node_selector(pool), tuple(pool.spec.taints), annotations)


def toleration_for(taint: Taint) -> dict[str, Any]:
    """The toleration of exactly this taint."""
    if taint.value is None:
        return {"key": taint.key, "operator": "Exists", "effect": taint.effect}
    return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}


def tolerates(tolerations: Iterable[Mapping[str, Any]], taint: Taint) -> bool:
    """Whether any toleration matches the taint, by the Kubernetes rules."""
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != taint.effect:
            continue
        operator = tol.get("operator") or "Equal"
        if not tol.get("key"):
            if operator == "Exists":
                return True
            continue
        if tol["key"] != taint.key:
            continue
        if operator == "Exists" or (tol.get("value") or "") == (taint.value or ""):
            return True
    return False


def selects(template: Mapping[str, Any], selector: Mapping[str, str]) -> bool:
    """Whether the template's nodeSelector holds every label of ``selector``."""
    own = (template.get("spec") or {}).get("nodeSelector") or {}
    return all(own.get(k) == v for k, v in selector.items())


def job_path(ref: Reference) -> str:
    """The job's path in the input (``jobs[0]``), from the path of one of its options."""
    return ref.path.rsplit(".trainjobs.", 1)[0]


def _gpu_findings(template: PodTemplate, path: str) -> list[Finding]:
    """Make GPU requests and limits equal where one is missing; report them when they differ."""
    findings: list[Finding] = []
    for i, container in enumerate(containers(template)):
        resources = container.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        if GPU not in requests and GPU not in limits:
            continue
        where = f"{path}.spec.containers[{i}].resources"
        if GPU in requests and GPU in limits:
            if quantity_or_zero(requests[GPU]) != quantity_or_zero(limits[GPU]):
                findings.append(
                    GPU_REQUESTS_LIMITS.at(
                        f"{where}.requests[{GPU!r}]",
                        requests[GPU],
                        requests=requests[GPU],
                        limits=limits[GPU],
                    )
                )
            continue
        # Kubernetes refuses a GPU request without a limit, and defaults the request
        # from the limit; write both so the pod says what it gets.
        count = limits[GPU] if GPU in limits else requests[GPU]
        container["resources"] = {
            **resources,
            "requests": {**requests, GPU: count},
            "limits": {**limits, GPU: count},
        }
    return findings


def place_template(
    template: Mapping[str, Any], placement: Placement, path: str
) -> tuple[PodTemplate, list[Finding]]:
    """A copy of ``template`` placed on the pool; ``path`` is the template's input path."""
    out = deep_copy(template)
    spec = out.setdefault("spec", {})
    findings = _gpu_findings(out, path)
    own = dict(spec.get("nodeSelector") or {})
    for key, value in placement.node_selector.items():
        if key in own and own[key] != value:
            findings.append(
                SELECTOR_CONFLICT.at(
                    f"{path}.spec.nodeSelector[{key!r}]",
                    own[key],
                    pool=placement.pool,
                    key=key,
                    value=value,
                    own=own[key],
                )
            )
        else:
            own[key] = value
    if own:
        spec["nodeSelector"] = own
    tolerations = list(spec.get("tolerations") or [])
    for taint in placement.taints:
        if not tolerates(tolerations, taint):
            tolerations.append(toleration_for(taint))
    if tolerations:
        spec["tolerations"] = tolerations
    if placement.annotations:
        if "metadata" not in out:
            out = {"metadata": {}, **out}
        meta = out["metadata"]
        meta["annotations"] = {**placement.annotations, **(meta.get("annotations") or {})}
    return out, findings


def _replica_key(role: str, roles: Sequence[str]) -> str | None:
    return next((r for r in roles if r.lower() == role.lower()), None)


def bound_templates(plan: JobPlan, ref: Reference) -> tuple[list[PodSet], list[Finding]]:
    """The templates a node-pool reference places: the named replica types, or else every
    replica that requests GPUs. Findings for a named type the job lacks, or a pool that
    would place nothing."""
    templates = list(plan.pod_sets)
    roles = [t.role for t in templates]
    if not templates:
        return [], [NO_TEMPLATES.at(ref.path, ref.name, kind=plan.kind.kind)]
    if ref.roles:
        missing = [r for r in ref.roles if _replica_key(r, roles) is None]
        if missing:
            return [], [
                NO_REPLICA_TYPE.at(ref.path, missing[0], role=missing[0], roles=", ".join(roles))
            ]
        wanted = {_replica_key(r, roles) for r in ref.roles}
        return [t for t in templates if t.role in wanted], []
    chosen = [t for t in templates if pod_demand(t.template).gpus > 0]
    if not chosen:
        return [], [
            NO_GPU_REPLICA.at(
                ref.path, ref.name, pool=ref.name, role=roles[0] if roles else "Worker"
            )
        ]
    return chosen, []
