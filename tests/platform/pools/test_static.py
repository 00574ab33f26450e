"""The static provider: the NVIDIA device plugin on the pool's existing nodes."""

from __future__ import annotations

from tests.platform.pools.docs import pool
from trainjobs.check import k8s_schema
from trainjobs.platform.pools.static import device_plugin


def test_device_plugin_runs_on_the_pool_nodes_and_tolerates_their_taints() -> None:
    static = pool(
        provider="static", labels={"gpu-pool": "a100"}, static={"gpuFeatureDiscovery": True}
    )
    manifest = device_plugin(static)
    assert manifest["kind"] == "DaemonSet"
    assert manifest["metadata"]["name"] == "nvidia-device-plugin-a100"
    assert manifest["metadata"]["namespace"] == "kube-system"
    spec = manifest["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {
        "gpu-pool": "a100",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
    }
    assert spec["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
    ]
    assert spec["priorityClassName"] == "system-node-critical"
    (container,) = spec["containers"]
    assert container["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert manifest["spec"]["updateStrategy"] == {"type": "RollingUpdate"}
    assert "replicas" not in manifest["spec"]
    assert k8s_schema.problems_many([manifest], "1.32") == [[]]


def test_without_labels_or_feature_discovery_it_selects_no_nodes_in_particular() -> None:
    spec = device_plugin(pool(provider="static"))["spec"]["template"]["spec"]
    assert "nodeSelector" not in spec
