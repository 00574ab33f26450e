"""The ``karpenter`` provider: a karpenter.sh/v1 NodePool and its karpenter.k8s.aws/v1 EC2NodeClass.

Training pods run for hours and a restarted worker restarts the whole job, so the
NodePool only ever removes *empty* nodes (``WhenEmpty``), never expires nodes
(``expireAfter: Never``), and its budget forbids replacing drifted nodes; pods placed
on the pool also carry ``karpenter.sh/do-not-disrupt``. Field names and enums follow
the vendored CRDs in ``crds/karpenter-v1.14.1/``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from trainjobs.k8s.data import Manifest
from trainjobs.k8s.quantity import format_quantity
from trainjobs.platform.pools.placement import node_labels
from trainjobs.platform.pools.resources import GPU
from trainjobs.platform.pools.spec import GpuNodePool, KarpenterSettings
from trainjobs.platform.workload import component_labels

__all__ = ["ec2_node_class", "manifests", "node_pool"]

_MIB = 2**20


def _settings(pool: GpuNodePool) -> KarpenterSettings:
    assert pool.spec.karpenter is not None, "validated: provider karpenter has settings"
    return pool.spec.karpenter


def _labels(pool: GpuNodePool) -> dict[str, str]:
    return component_labels("karpenter", pool, "gpu-node-pool")


def _requirement(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def _at_least(key: str, value: Fraction) -> dict[str, Any]:
    # Karpenter offers Gt, not Gte: "more than n-1" for whole n.
    return _requirement(key, "Gt", str(math.ceil(value) - 1))


def node_pool(pool: GpuNodePool) -> Manifest:
    """The NodePool: GPU requirements, taints, limits from max nodes, no disruption of work."""
    spec = pool.spec
    gpu = spec.gpu_type
    requirements = [
        _requirement("karpenter.k8s.aws/instance-family", "In", *gpu.ec2_families),
        _requirement("karpenter.k8s.aws/instance-gpu-name", "In", gpu.karpenter_gpu_name),
        _requirement("karpenter.k8s.aws/instance-gpu-count", "In", str(spec.gpus_per_node)),
        _at_least("karpenter.k8s.aws/instance-cpu", spec.cpu_value),
        _at_least("karpenter.k8s.aws/instance-memory", spec.memory_value / _MIB),
        _requirement("karpenter.sh/capacity-type", "In", spec.capacity_type),
        _requirement("kubernetes.io/arch", "In", "amd64"),
        _requirement("kubernetes.io/os", "In", "linux"),
    ]
    template_spec: dict[str, Any] = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool.name},
        "requirements": requirements,
        "expireAfter": "Never",
    }
    if spec.taints:
        template_spec["taints"] = [t.to_manifest() for t in spec.taints]
    limits: dict[str, Any] = {
        GPU: spec.max_nodes * spec.gpus_per_node,
        "cpu": format_quantity(spec.cpu_value * spec.max_nodes),
        "memory": f"{math.ceil(spec.memory_value * spec.max_nodes / _MIB)}Mi",
    }
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": pool.name, "labels": _labels(pool)},
        "spec": {
            "template": {
                "metadata": {"labels": node_labels(pool)},
                "spec": template_spec,
            },
            "disruption": {
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": _settings(pool).consolidate_after,
                # Empty nodes may go; drifted nodes (new AMI …) wait until they are empty.
                "budgets": [{"nodes": "0", "reasons": ["Drifted"]}],
            },
            "limits": limits,
        },
    }


def ec2_node_class(pool: GpuNodePool) -> Manifest:
    """The EC2NodeClass: AMI alias, discovery-tag subnets and security groups, root volume."""
    settings = _settings(pool)
    discovery = {"tags": {"karpenter.sh/discovery": settings.cluster_name}}
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": pool.name, "labels": _labels(pool)},
        "spec": {
            "role": settings.role,
            "amiSelectorTerms": [{"alias": settings.ami_alias}],
            "subnetSelectorTerms": [discovery],
            "securityGroupSelectorTerms": [discovery],
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "ebs": {
                        "volumeSize": settings.volume_size,
                        "volumeType": "gp3",
                        "encrypted": True,
                        "deleteOnTermination": True,
                    },
                }
            ],
        },
    }


def manifests(pool: GpuNodePool) -> list[Manifest]:
    return [ec2_node_class(pool), node_pool(pool)]
