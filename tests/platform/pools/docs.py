"""Input documents the node-pool tests share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from trainjobs.check import run
from trainjobs.errors import Finding, SpecError
from trainjobs.platform.pools.spec import GpuNodePool
from trainjobs.spec import parse_documents

PLACEMENT_CODES = ("placement.", "pool.", "queue.", "ref.", "schedule.")
"""Finding codes about node pools, queues, their references and where pods land.

Tests about placement compare only these: the check rules (``ttl.unset`` advice,
``resources.requests`` …) run on the same stacks and are tested in tests/check/rules/.
"""


def placement_only(findings: Iterable[Finding]) -> list[str]:
    """The rendered findings whose codes are about placement (``PLACEMENT_CODES``)."""
    return [f.render() for f in findings if f.code.startswith(PLACEMENT_CODES)]


def placement_findings(*docs: dict[str, Any]) -> list[str]:
    """The placement findings of checking ``docs`` (errors, warnings and advice), in order."""
    try:
        return placement_only(run(parse_documents(list(docs))).findings)
    except SpecError as err:
        return placement_only(err.findings)


def pool_doc(name: str = "a100", provider: str = "karpenter", **spec: Any) -> dict[str, Any]:
    """A GpuNodePool document: A100 80GB (8 per node on AWS, else 4), at most 2 nodes."""
    by_provider: dict[str, dict[str, Any]] = {
        "karpenter": {"karpenter": {"clusterName": "training", "role": "NodeRole"}},
        "static": {},
        "gke": {
            "gke": {
                "cluster": "ml",
                "location": "us-central1",
                "machineType": "a2-ultragpu-4g",
            }
        },
        "eks": {
            "eks": {
                "clusterName": "ml",
                "nodeRoleArn": "arn:aws:iam::123456789012:role/nodes",
                "subnetIds": ["subnet-1"],
                "instanceTypes": ["p4de.24xlarge"],
            }
        },
        "aks": {
            "aks": {
                "resourceGroupName": "ml-rg",
                "clusterName": "ml",
                "vmSize": "Standard_NC96ads_A100_v4",
            }
        },
    }
    settings = by_provider[provider]
    body = {
        "provider": provider,
        "gpu": "a100-80gb",
        # p4de.24xlarge, the only A100 80GB EC2 size, has 8 (the shape check holds
        # pools to real instances); a2-ultragpu-4g and NC96ads_A100_v4 have 4.
        "gpusPerNode": 8 if provider in ("karpenter", "eks") else 4,
        "cpu": 46,
        "memory": "500Gi",
        "maxNodes": 2,
        **settings,
        **spec,
    }
    return {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "GpuNodePool",
        "metadata": {"name": name},
        "spec": body,
    }


def pool(name: str = "a100", provider: str = "karpenter", **spec: Any) -> GpuNodePool:
    return GpuNodePool.model_validate(pool_doc(name, provider, **spec))


def container(gpus: int | None = 4, cpu: str = "8", memory: str = "32Gi") -> dict[str, Any]:
    limits: dict[str, Any] = {"cpu": cpu, "memory": memory}
    if gpus is not None:
        limits["nvidia.com/gpu"] = gpus
    return {"name": "tensorflow", "image": "tf:2", "resources": {"limits": limits}}


def tfjob(
    workers: int = 2,
    gpus: int | None = 4,
    options: dict[str, Any] | None = None,
    ps: bool = False,
    **worker_spec: Any,
) -> dict[str, Any]:
    """A TFJob with ``workers`` GPU workers (and a CPU-only PS when ``ps``)."""
    specs: dict[str, Any] = {
        "Worker": {
            "replicas": workers,
            "template": {"spec": {"containers": [container(gpus)], **worker_spec}},
        }
    }
    if ps:
        specs["PS"] = {
            "replicas": 1,
            "template": {"spec": {"containers": [container(None, "2", "4Gi")]}},
        }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf", "namespace": "training"},
        "spec": {"tfReplicaSpecs": specs},
        "trainjobs": options if options is not None else {"nodePool": "a100"},
    }
