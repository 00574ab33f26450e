"""Does a job fit the pools it runs on? Offline, with the numbers and the fix.

Per pod: GPUs, CPU and memory against one node. Per gang (the pods that must run at
once: every replica, or ``runPolicy.schedulingPolicy.minAvailable`` of them): packed
onto the pool's ``maxNodes`` nodes, first-fit by GPUs then CPU and memory — exact for
replicas of one shape, the usual case. And every placed replica must still tolerate
its pool's taints and select its labels after rendering.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from trainjobs.errors import Finding, Severity
from trainjobs.k8s.quantity import format_quantity
from trainjobs.plan import PodSet
from trainjobs.platform.pools.placement import Placement, selects, tolerates
from trainjobs.platform.pools.resources import GPU, PodDemand, pod_demand
from trainjobs.platform.pools.spec import GpuNodePool

__all__ = [
    "BoundReplica",
    "bytes_text",
    "gang_findings",
    "min_available",
    "nodes_needed",
    "replica_findings",
    "unplaced_findings",
]


@dataclass(frozen=True)
class BoundReplica:
    """One replica type of a job and the pool it runs on (None: no pool named for it).

    Attributes:
        ref: its pod template, role and replica count.
        path: the replica's path in the input (``jobs[0].spec.tfReplicaSpecs.Worker``).
        pool: the pool, or None.
        placement: that pool's placement contract, or None.
    """

    ref: PodSet
    path: str
    pool: GpuNodePool | None = None
    placement: Placement | None = None

    @property
    def demand(self) -> PodDemand:
        return pod_demand(self.ref.template)


def _num(value: Fraction) -> str:
    return format_quantity(value)


def bytes_text(value: Fraction) -> str:
    """Bytes in the largest binary unit that keeps them whole: ``32Gi``, ``1536Mi``."""
    for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value >= size and (value / size).denominator == 1:
            return f"{value / size}{suffix}"
    return _num(value)


def _gpus(value: Fraction) -> str:
    return f"{_num(value)} GPU{'' if value == 1 else 's'}"


def replica_findings(replica: BoundReplica) -> list[Finding]:
    """One pod of the replica against one node of its pool."""
    pool = replica.pool
    if pool is None:
        return []
    spec = pool.spec
    demand = replica.demand
    name = pool.name
    findings: list[Finding] = []
    if demand.gpus.denominator != 1:
        findings.append(
            Finding(
                code="schedule.gpu_fraction",
                path=replica.path,
                message=f"{_num(demand.gpus)} GPUs per pod; {GPU} counts whole GPUs",
                hint=f"request a whole number of {GPU}",
            )
        )
    if demand.gpus > spec.gpus_per_node:
        findings.append(
            Finding(
                code="schedule.gpus_per_node",
                path=replica.path,
                message=(
                    f'{_gpus(demand.gpus)} per pod, but pool "{name}" nodes have '
                    f"{spec.gpus_per_node}"
                ),
                hint=(
                    f"lower {GPU} to {spec.gpus_per_node} or use a pool with "
                    f"{_num(demand.gpus)}-GPU nodes"
                ),
            )
        )
    # cpu and memory: what one pod asks beyond what one node offers, each in its own units.
    sizes = (
        ("cpu", "CPU", demand.cpu, spec.cpu_value, _num),
        ("memory", "memory", demand.memory, spec.memory_value, bytes_text),
    )
    for resource, label, asked, offered, text in sizes:
        if asked > offered:
            findings.append(
                Finding(
                    code=f"schedule.{resource}_per_node",
                    path=replica.path,
                    message=(
                        f'{text(asked)} {label} per pod, but pool "{name}" nodes offer '
                        f"{text(offered)}"
                    ),
                    hint=f"lower the {resource} request to {text(offered)} or use larger nodes",
                )
            )
    findings += _contract_findings(replica)
    return findings


def _contract_findings(replica: BoundReplica) -> list[Finding]:
    """The placed template must still select the pool and tolerate its taints."""
    placement = replica.placement
    if placement is None:
        return []
    template = replica.ref.template
    findings: list[Finding] = []
    if not selects(template, placement.node_selector):
        findings.append(
            Finding(
                code="schedule.node_selector",
                path=f"{replica.path}.template.spec.nodeSelector",
                message=f'the pods do not select the labels of pool "{placement.pool}"',
                value=dict((template.get("spec") or {}).get("nodeSelector") or {}),
                hint="select " + ", ".join(f"{k}={v}" for k, v in placement.node_selector.items()),
            )
        )
    tolerations = (template.get("spec") or {}).get("tolerations") or []
    for taint in placement.taints:
        if taint.effect != "PreferNoSchedule" and not tolerates(tolerations, taint):
            findings.append(
                Finding(
                    code="schedule.toleration",
                    path=f"{replica.path}.template.spec.tolerations",
                    message=(
                        f"the pods do not tolerate taint {taint.text()} of pool "
                        f'"{placement.pool}", so they never start there'
                    ),
                    hint=f"add a toleration for {taint.key} ({taint.effect})",
                )
            )
    return findings


def min_available(spec: Any) -> int | None:
    """``runPolicy.schedulingPolicy.minAvailable`` of a job's spec, where it has one."""
    run_policy = getattr(spec, "run_policy", None)
    policy = getattr(run_policy, "scheduling_policy", None)
    value = getattr(policy, "min_available", None)
    return value if isinstance(value, int) else None


def nodes_needed(pods: Sequence[PodDemand], node: PodDemand) -> int:
    """Nodes of shape ``node`` that hold ``pods``, packed first-fit, largest first."""
    free: list[PodDemand] = []
    for pod in sorted(pods, key=lambda p: (p.gpus, p.cpu, p.memory), reverse=True):
        for i, room in enumerate(free):
            if pod.fits(room):
                free[i] = room - pod
                break
        else:
            free.append(node - pod)
    return len(free)


def _gang(replicas: Sequence[BoundReplica], size: int | None) -> list[BoundReplica]:
    """One entry per pod of the gang: all pods, or the ``size`` smallest."""
    pods = [r for r in replicas for _ in range(r.ref.replicas)]
    if size is None or size >= len(pods):
        return pods
    return sorted(pods, key=lambda r: (r.demand.gpus, r.demand.cpu, r.demand.memory))[:size]


def _where(replicas: Sequence[BoundReplica]) -> str:
    """``<replica>.replicas`` for one replica type, else the map that holds them."""
    paths = sorted({r.path for r in replicas})
    if len(paths) == 1:
        return f"{paths[0]}.replicas"
    return paths[0].rsplit(".", 1)[0]


def gang_findings(replicas: Sequence[BoundReplica], gang_size: int | None) -> list[Finding]:
    """The pods that must run together against each pool's ``maxNodes``."""
    gang = _gang(replicas, gang_size)
    by_pool: dict[str, list[BoundReplica]] = {}
    pools: dict[str, GpuNodePool] = {}
    for pod in gang:
        if pod.pool is not None and pod.demand.fits(_node(pod.pool)):
            by_pool.setdefault(pod.pool.name, []).append(pod)
            pools[pod.pool.name] = pod.pool
    findings = []
    for name, pods in by_pool.items():
        spec = pools[name].spec
        need = nodes_needed([p.demand for p in pods], _node(pools[name]))
        if need <= spec.max_nodes:
            continue
        gpus = sum((p.demand.gpus for p in pods), Fraction(0))
        what = "the gang" if gang_size is not None else "the job"
        findings.append(
            Finding(
                code="schedule.gang",
                path=_where([p for p in replicas if p.pool is not None and p.pool.name == name]),
                message=(
                    f'{what} runs {len(pods)} pods with {_gpus(gpus)} at once on pool "{name}", '
                    f"which packs them onto {need} nodes, but the pool has at most "
                    f"{spec.max_nodes} node{'' if spec.max_nodes == 1 else 's'} of "
                    f"{_gpus(Fraction(spec.gpus_per_node))}"
                ),
                hint=(
                    f'raise maxNodes of pool "{name}" to {need}, run fewer replicas, or set '
                    "runPolicy.schedulingPolicy.minAvailable"
                ),
            )
        )
    return findings


def _node(pool: GpuNodePool) -> PodDemand:
    spec = pool.spec
    return PodDemand(Fraction(spec.gpus_per_node), spec.cpu_value, spec.memory_value)


def unplaced_findings(replica: BoundReplica, pools: Sequence[GpuNodePool]) -> list[Finding]:
    """A GPU replica that names no pool, in a stack whose every GPU pool it cannot enter."""
    if replica.pool is not None or not pools or replica.demand.gpus == 0:
        return []
    tolerations = (replica.ref.template.get("spec") or {}).get("tolerations") or []
    blocked = [
        p
        for p in pools
        if any(
            t.effect != "PreferNoSchedule" and not tolerates(tolerations, t) for t in p.spec.taints
        )
    ]
    if len(blocked) < len(pools):
        return []
    names = ", ".join(p.name for p in pools)
    return [
        Finding(
            code="schedule.unplaced_gpu",
            path=replica.path,
            message=(
                f"{_gpus(replica.demand.gpus)} per pod, but no node pool is named for it and "
                f"it tolerates the taints of none of the stack's pools ({names})"
            ),
            hint=f"add trainjobs.nodePool: {{{replica.ref.role}: {pools[0].name}}} to the job",
            severity=Severity.WARNING,
        )
    ]
