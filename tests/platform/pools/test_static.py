"""The static provider: the NVIDIA device plugin on the pool's existing nodes."""

from __future__ import annotations

from tests.platform.pools.docs import pool
from trainjobs.check import k8s_schema
from trainjobs.check.rules import RuleContext, object_violations
from trainjobs.platform.pools.kind import KIND
from trainjobs.platform.pools.static import DEVICE_PLUGIN_EXEMPTIONS, device_plugin


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


def test_device_plugin_requests_cpu_and_memory_and_uses_the_runtime_seccomp_profile() -> None:
    spec = device_plugin(pool(provider="static"))["spec"]["template"]["spec"]
    assert spec["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    (container,) = spec["containers"]
    # The Kubernetes add-on's requests for the NVIDIA device plugin; no limits, as NVIDIA's.
    assert container["resources"] == {"requests": {"cpu": "50m", "memory": "10Mi"}}


def test_the_device_plugin_is_exempt_from_exactly_the_rules_it_breaks() -> None:
    static = pool(provider="static")
    manifest = device_plugin(static)
    broken = {
        rule.code for rule, _ in object_violations(manifest, RuleContext(profile="restricted"))
    }
    assert (
        broken
        == {e.code for e in DEVICE_PLUGIN_EXEMPTIONS}
        == {
            "pss.baseline.host_path",
            "pss.restricted.volume_types",
            "pss.restricted.run_as_non_root",
        }
    )
    assert all(e.reason for e in DEVICE_PLUGIN_EXEMPTIONS)
    assert KIND.check_exemptions(static, manifest) == DEVICE_PLUGIN_EXEMPTIONS


def test_only_a_static_pools_own_device_plugin_is_exempt() -> None:
    static = pool(provider="static")
    other = device_plugin(pool("t4", provider="static"))
    assert KIND.check_exemptions(static, other) == ()
    karpenter = pool()
    assert [KIND.check_exemptions(karpenter, m) for m in KIND.manifests(karpenter)] == [(), ()]
