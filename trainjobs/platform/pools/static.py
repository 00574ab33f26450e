"""The ``static`` provider: existing GPU nodes, and the NVIDIA device plugin that makes
their GPUs schedulable as ``nvidia.com/gpu``.

The DaemonSet follows NVIDIA's static manifest (github.com/NVIDIA/k8s-device-plugin
tag v0.20.0, ``deployments/static/nvidia-device-plugin.yml``): kube-system, the
``system-node-critical`` priority, the kubelet's device-plugins directory, no
privilege escalation. It runs only on the pool's nodes (its node selector) and
tolerates the pool's taints, which keep every other pod off those nodes.
"""

from __future__ import annotations

from trainjobs.frameworks.base import Manifest
from trainjobs.platform.install import deployment
from trainjobs.platform.pools.placement import node_selector
from trainjobs.platform.pools.spec import GpuNodePool, StaticSettings
from trainjobs.platform.workload import component_labels

__all__ = ["NAMESPACE", "daemonset_name", "device_plugin", "manifests"]

NAMESPACE = "kube-system"
_PLUGIN_DIR = "/var/lib/kubelet/device-plugins"


def daemonset_name(pool: GpuNodePool) -> str:
    return f"nvidia-device-plugin-{pool.name}"


def _settings(pool: GpuNodePool) -> StaticSettings:
    return pool.spec.static or StaticSettings()


def device_plugin(pool: GpuNodePool) -> Manifest:
    """The device plugin DaemonSet of one static pool."""
    labels = component_labels("nvidia-device-plugin", pool, "gpu-device-plugin")
    selector = {k: labels[k] for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance")}
    tolerations = [
        {"key": t.key, "operator": "Exists", "effect": t.effect} for t in pool.spec.taints
    ]
    pod_spec: dict[str, object] = {
        "priorityClassName": "system-node-critical",
        "tolerations": [*tolerations, {"key": "CriticalAddonsOnly", "operator": "Exists"}],
        "containers": [
            {
                "name": "nvidia-device-plugin-ctr",
                "image": _settings(pool).device_plugin_image,
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                },
                "volumeMounts": [{"name": "device-plugins", "mountPath": _PLUGIN_DIR}],
            }
        ],
        "volumes": [
            {"name": "device-plugins", "hostPath": {"path": _PLUGIN_DIR, "type": "Directory"}}
        ],
    }
    nodes = node_selector(pool)
    if nodes:
        pod_spec["nodeSelector"] = nodes
    # A Deployment's shape with the kind and strategy of a DaemonSet: one pod per node.
    manifest = deployment(daemonset_name(pool), NAMESPACE, selector, pod_spec, labels=labels)
    manifest["kind"] = "DaemonSet"
    spec = manifest["spec"]
    del spec["replicas"]
    spec["updateStrategy"] = {"type": "RollingUpdate"}
    return manifest


def manifests(pool: GpuNodePool) -> list[Manifest]:
    return [device_plugin(pool)] if _settings(pool).device_plugin else []
