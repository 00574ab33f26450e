"""The ``static`` provider: existing GPU nodes, and the NVIDIA device plugin that makes
their GPUs schedulable as ``nvidia.com/gpu``.

The DaemonSet follows NVIDIA's static manifest (github.com/NVIDIA/k8s-device-plugin
tag v0.20.0, ``deployments/static/nvidia-device-plugin.yml``): kube-system, the
``system-node-critical`` priority, the kubelet's device-plugins directory, no
privilege escalation. It runs only on the pool's nodes (its node selector) and
tolerates the pool's taints, which keep every other pod off those nodes.

NVIDIA's manifest and chart (``values.yaml``: ``resources: {}``) request nothing; the
container here requests what the Kubernetes cluster add-on of the NVIDIA GPU device
plugin requests (github.com/kubernetes/kubernetes,
``cluster/addons/device-plugins/nvidia-gpu/daemonset.yaml``: cpu 50m, memory 10Mi), and
sets no limit, as NVIDIA's own manifests, so the plugin is never throttled or
OOM-killed on the node whose GPUs it serves.
"""

from __future__ import annotations

from trainjobs.k8s.data import Manifest
from trainjobs.platform.base import CheckExemption
from trainjobs.platform.install import deployment
from trainjobs.platform.pools.placement import node_selector
from trainjobs.platform.pools.spec import GpuNodePool, StaticSettings
from trainjobs.platform.workload import component_labels

__all__ = [
    "DEVICE_PLUGIN_EXEMPTIONS",
    "DEVICE_PLUGIN_REQUESTS",
    "NAMESPACE",
    "daemonset_name",
    "device_plugin",
    "exemptions",
    "manifests",
]

NAMESPACE = "kube-system"
_PLUGIN_DIR = "/var/lib/kubelet/device-plugins"

DEVICE_PLUGIN_REQUESTS = {"cpu": "50m", "memory": "10Mi"}
"""What the device plugin container requests (see the module's docstring)."""

_HOST_DIR = (
    "the device plugin registers with the kubelet through a socket in the node's "
    f"{_PLUGIN_DIR} (a hostPath volume); that is how the node's GPUs become "
    "schedulable as nvidia.com/gpu"
)
DEVICE_PLUGIN_EXEMPTIONS = (
    CheckExemption("pss.baseline.host_path", _HOST_DIR),
    CheckExemption("pss.restricted.volume_types", _HOST_DIR),
    CheckExemption(
        "pss.restricted.run_as_non_root",
        f"the kubelet's {_PLUGIN_DIR} belongs to root; the plugin runs as root to create "
        "its socket there, as in NVIDIA's manifests",
    ),
)
"""The check rules the device plugin DaemonSet breaks by design, with the reasons."""


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
        # NVIDIA's manifest leaves seccomp to the node; the runtime's default profile allows
        # what the plugin does (files, its gRPC socket, NVML's ioctls) and is what kubelets
        # with --seccomp-default apply anyway.
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "tolerations": [*tolerations, {"key": "CriticalAddonsOnly", "operator": "Exists"}],
        "containers": [
            {
                "name": "nvidia-device-plugin-ctr",
                "image": _settings(pool).device_plugin_image,
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                },
                "resources": {"requests": dict(DEVICE_PLUGIN_REQUESTS)},
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


def exemptions(pool: GpuNodePool, manifest: Manifest) -> tuple[CheckExemption, ...]:
    """The check rules ``manifest``, one of the pool's objects, breaks by design: the
    device plugin's, else none."""
    name = (manifest.get("metadata") or {}).get("name")
    is_plugin = manifest.get("kind") == "DaemonSet" and name == daemonset_name(pool)
    return DEVICE_PLUGIN_EXEMPTIONS if is_plugin else ()
