"""GpuNodePool as a document: validation findings, objects per provider, outputs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.platform.pools.docs import pool, pool_doc
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.platform.pools.kind import KIND
from trainjobs.spec import parse_documents


def _errors(*docs: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as err:
        run(parse_documents(list(docs)))
    return [f.render() for f in err.value.findings]


def test_bad_pools_report_every_problem_with_its_path() -> None:
    bad = pool_doc(cpu="lots", memory=0, minNodes=3, static={})
    assert _errors(bad) == [
        "error: nodePools[0].spec.cpu: cpu must be a positive Kubernetes quantity (got 'lots'); "
        "fix: e.g. cpu: 94, memory: 1100Gi",
        "error: nodePools[0].spec.memory: memory must be a positive Kubernetes quantity (got 0); "
        "fix: e.g. cpu: 94, memory: 1100Gi",
        "error: nodePools[0].spec.minNodes: minNodes (3) is above maxNodes (2) (got 3); "
        "fix: lower minNodes to 2 or raise maxNodes",
        "error: nodePools[0].spec.static: settings for provider 'static', but the pool's "
        "provider is 'karpenter'; fix: remove spec.static, or set provider: static",
    ]


def test_a_cloud_provider_needs_its_settings_and_its_gpu() -> None:
    doc = pool_doc(provider="gke", gpu="a10g")
    del doc["spec"]["gke"]
    assert _errors(doc) == [
        "error: nodePools[0].spec.gke: provider 'gke' needs its settings; "
        "fix: add spec.gke with cluster, location and machineType",
        "error: nodePools[0].spec.gpu: GKE offers no a10g GPU (got 'a10g'); "
        "fix: use one of a100-40gb, a100-80gb, h100-80gb, l4, t4",
    ]


def test_unknown_gpu_and_fields_are_named() -> None:
    assert _errors(pool_doc(gpu="a200", gpusPerNod=4)) == [
        "error: nodePools[0].spec.gpu: input should be 'a100-40gb', 'a100-80gb', 'h100-80gb', "
        "'l4', 't4' or 'a10g' (got 'a200'); fix: use one of the values listed",
        "error: nodePools[0].spec.gpusPerNod: unknown field (got 4); "
        "fix: did you mean 'gpusPerNode'?",
    ]


def test_objects_per_provider() -> None:
    kinds = {
        provider: [m["kind"] for m in KIND.manifests(pool(provider=provider))]
        for provider in ("karpenter", "static", "gke", "eks", "aks")
    }
    assert kinds == {
        "karpenter": ["EC2NodeClass", "NodePool"],
        "static": ["DaemonSet"],
        "gke": [],
        "eks": [],
        "aks": [],
    }
    assert KIND.manifests(pool(provider="static", static={"devicePlugin": False})) == []


def test_pools_are_cluster_wide_and_export_their_selector() -> None:
    rendering = run(parse_documents([pool_doc()]))
    (unit,) = rendering.units
    assert str(unit.ref) == "nodePool a100"
    assert unit.outputs == {
        "nodeSelector": "trainjobs.dev/node-pool=a100,karpenter.k8s.aws/instance-gpu-name=a100"
    }
    assert KIND.cloud_pool(pool()) is None
