"""Check a GpuNodePool's stated node against the instance shapes its provider sells.

A pool's ``gpusPerNode``, ``cpu`` and ``memory`` drive the fit check of every job
placed on it; if no instance of the pool's family has that shape, the fit check
reasons about nodes that can never exist. Findings here name the instance sizes
that do exist (catalog: ``shapes``).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from trainjobs.errors import Finding
from trainjobs.platform.pools.shapes import InstanceShape, family_shapes, shape
from trainjobs.platform.pools.spec import GpuNodePool

__all__ = ["shape_findings"]

_GIB = 2**30


def _num(value: Fraction) -> str:
    return str(int(value)) if value.denominator == 1 else f"{float(value):g}"


def _gib(value: Fraction) -> str:
    return f"{_num(value / _GIB)}Gi" if value % _GIB == 0 else f"{float(value / _GIB):.1f}Gi"


def _size_findings(pool: GpuNodePool, found: InstanceShape, path: str) -> list[Finding]:
    """The named instance must carry the pool's GPU, GPU count, CPU and memory."""
    spec = pool.spec
    facts = f"{found.name} has {found.gpus} {found.gpu} GPUs, {found.vcpus} vCPUs and "
    facts += f"{found.memory_gib}Gi memory"
    problems: list[str] = []
    if found.gpu != spec.gpu:
        problems.append(f"gpu is {spec.gpu}")
    if found.gpus != spec.gpus_per_node:
        problems.append(f"gpusPerNode is {spec.gpus_per_node}")
    if spec.cpu_value > found.vcpus:
        problems.append(f"cpu is {_num(spec.cpu_value)}")
    if spec.memory_value > found.memory_gib * _GIB:
        problems.append(f"memory is {_gib(spec.memory_value)}")
    if not problems:
        return []
    return [
        Finding(
            code="pool.shape",
            path=path,
            message=f"{facts}, but the pool's {' and '.join(problems)}",
            value=found.name,
            hint=(
                f"set gpu: {found.gpu}, gpusPerNode: {found.gpus} and cpu/memory at most "
                f"{found.vcpus} and {found.memory_gib}Gi (less the node's reserve), or pick "
                "an instance of that shape"
            ),
        )
    ]


def _family_findings(pool: GpuNodePool, families: tuple[str, ...]) -> list[Finding]:
    """Some size of the EC2 families Karpenter may choose must have the pool's shape."""
    spec = pool.spec
    known = [s for s in family_shapes("aws", families) if s.gpu == spec.gpu]
    if not known:
        return []
    names = "/".join(families)
    sizes = ", ".join(f"{s.name} has {s.gpus}" for s in known)
    counts = sorted({s.gpus for s in known})
    same = [s for s in known if s.gpus == spec.gpus_per_node]
    if not same:
        return [
            Finding(
                code="pool.shape",
                path="spec.gpusPerNode",
                message=(
                    f"no {names} instance has {spec.gpus_per_node} {spec.gpu} GPUs per node "
                    f"({sizes}): Karpenter can never launch a node for this pool"
                ),
                value=spec.gpus_per_node,
                hint=f"set gpusPerNode to {' or '.join(map(str, counts))}",
            )
        ]
    roomy = [
        s for s in same if s.vcpus >= spec.cpu_value and s.memory_gib * _GIB >= spec.memory_value
    ]
    if roomy:
        return []
    largest = max(same, key=lambda s: (s.vcpus, s.memory_gib))
    return [
        Finding(
            code="pool.shape",
            path="spec.cpu",
            message=(
                f"the pool asks {_num(spec.cpu_value)} CPU and {_gib(spec.memory_value)} per "
                f"node; the largest {names} instance with {spec.gpus_per_node} GPUs, "
                f"{largest.name}, has {largest.vcpus} vCPUs and {largest.memory_gib}Gi: "
                "Karpenter can never launch a node for this pool"
            ),
            value=[spec.cpu, spec.memory],
            hint=f"lower cpu and memory to at most {largest.vcpus} and {largest.memory_gib}Gi "
            "(less the node's reserve)",
        )
    ]


def _named(pool: GpuNodePool, names: Sequence[str], path: str) -> list[Finding]:
    findings: list[Finding] = []
    for index, name in enumerate(names):
        found = shape(name)
        if found is not None:
            findings += _size_findings(pool, found, path.replace("[]", f"[{index}]"))
    return findings


def shape_findings(pool: GpuNodePool) -> list[Finding]:
    """Errors when no instance the pool may use has the node the pool states."""
    spec = pool.spec
    if spec.provider == "karpenter":
        return _family_findings(pool, spec.gpu_type.ec2_families)
    if spec.provider == "eks" and spec.eks is not None:
        return _named(pool, spec.eks.instance_types, "spec.eks.instanceTypes[]")
    if spec.provider == "gke" and spec.gke is not None:
        return _named(pool, [spec.gke.machine_type], "spec.gke.machineType")
    if spec.provider == "aks" and spec.aks is not None:
        return _named(pool, [spec.aks.vm_size], "spec.aks.vmSize")
    return []
