"""kwok: fake nodes that "run" pods, and the stages that drive them.

Nodes annotated ``kwok.x-k8s.io/node: fake`` are the ones the sandbox's kwok manages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["KWOK_ANNOTATION", "KWOK_STAGES", "SUCCEED_ANNOTATION", "kwok_node"]

KWOK_ANNOTATION = "kwok.x-k8s.io/node"
"""Nodes carrying ``kwok.x-k8s.io/node: fake`` are the ones kwok runs."""
SUCCEED_ANNOTATION = "trainjobs.dev/kwok-succeed"
"""A running pod with this annotation completes with exit code 0 (:data:`KWOK_STAGES`)."""


def _stage(name: str, kind: str, match: str, next_: str) -> str:
    """One kwok Stage: for objects of ``kind`` that ``match`` (matchExpressions lines), do
    ``next_`` (its lines)."""
    return (
        "apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\n"
        f"metadata: {{name: {name}}}\nspec:\n"
        f"  resourceRef: {{apiGroup: v1, kind: {kind}}}\n"
        f"  selector:\n    matchExpressions:\n{match}  next:\n{next_}"
    )


def _pod_stage(name: str, phase: str, selector: str, status: str) -> str:
    """A Stage for live pods in ``phase`` (plus ``selector`` lines) that writes ``status``."""
    return _stage(
        name,
        "Pod",
        "    - {key: .metadata.deletionTimestamp, operator: DoesNotExist}\n"
        f"    - {{key: .status.phase, operator: In, values: [{phase}]}}\n{selector}",
        "    statusTemplate: |\n      {{ $now := Now }}\n" + status,
    )


def _container_statuses(ready: str, state: str) -> str:
    """The statusTemplate lines of every container: ``ready``/``started`` and ``state``."""
    return f"""\
      containerStatuses:
      {{{{ range .spec.containers }}}}
      - {{name: {{{{ .name | Quote }}}}, image: {{{{ .image | Quote }}}}, ready: {ready},
         started: {ready}, restartCount: 0, state: {state}}}
      {{{{ end }}}}
"""


_NODE_READY = _stage(
    "trainjobs-node-ready",
    "Node",
    """\
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
""",
    """\
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {type: Ready, status: "True", reason: KwokReady, message: "kwok runs this node",
         lastHeartbeatTime: {{ $now | Quote }}, lastTransitionTime: {{ $now | Quote }}}
      addresses:
      - {type: InternalIP, address: {{ NodeIP | Quote }}}
      - {type: Hostname, address: {{ NodeName | Quote }}}
      allocatable:
      {{ with .status.allocatable }}
      {{ YAML . 1 }}
      {{ else }}
        {cpu: "64", memory: 512Gi, pods: "110"}
      {{ end }}
      capacity:
      {{ with .status.capacity }}
      {{ YAML . 1 }}
      {{ else }}
        {cpu: "64", memory: 512Gi, pods: "110"}
      {{ end }}
      nodeInfo:
        architecture: amd64
        operatingSystem: linux
        kubeletVersion: fake
        kubeProxyVersion: fake
        containerRuntimeVersion: kwok
        kernelVersion: kwok
        osImage: kwok
        machineID: ""
        bootID: ""
        systemUUID: ""
      phase: Running
""",
)

_POD_RUNNING = _pod_stage(
    "trainjobs-pod-running",
    "Pending",
    "",
    """\
      conditions:
      - {type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }}}
      - {type: Ready, status: "True", lastTransitionTime: {{ $now | Quote }}}
      - {type: ContainersReady, status: "True", lastTransitionTime: {{ $now | Quote }}}
      - {type: PodScheduled, status: "True", lastTransitionTime: {{ $now | Quote }}}
"""
    + _container_statuses("true", "{running: {startedAt: {{ $now | Quote }}}}")
    + """\
      {{ with NodeIPsWith .spec.nodeName }}
      hostIP: {{ index . 0 | Quote }}
      {{ end }}
      {{ with PodIPsWith .spec.nodeName false ( or .metadata.uid "" )
         ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      podIP: {{ index . 0 | Quote }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
""",
)

_POD_SUCCEEDED = _pod_stage(
    "trainjobs-pod-succeeded",
    "Running",
    f"""\
    - {{key: '.metadata.annotations["{SUCCEED_ANNOTATION}"]', operator: Exists}}
""",
    """\
      conditions:
      - {type: Ready, status: "False", reason: PodCompleted, lastTransitionTime: {{ $now | Quote }}}
"""
    + _container_statuses(
        "false",
        "{terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, "
        "finishedAt: {{ $now | Quote }}}}",
    )
    + """\
      phase: Succeeded
""",
)

_POD_DELETE = _stage(
    "trainjobs-pod-delete",
    "Pod",
    "    - {key: .metadata.deletionTimestamp, operator: Exists}\n",
    "    delete: true\n",
)

KWOK_STAGES = "---\n".join((_NODE_READY, _POD_RUNNING, _POD_SUCCEEDED, _POD_DELETE))
"""Our own minimal stages: a fake node becomes Ready with the capacity it was created
with; a scheduled pod becomes Running (and Ready) at once; a pod annotated
:data:`SUCCEED_ANNOTATION` completes with exit code 0; a pod being deleted is removed (no
kubelet would ever finish a graceful delete)."""


def kwok_node(
    name: str,
    capacity: Mapping[str, str],
    *,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """A Node kwok runs: ``capacity`` is also its allocatable; ``pods`` defaults to 110."""
    capacity = {"pods": "110", **capacity}
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {KWOK_ANNOTATION: "fake"},
            "labels": {**(labels or {}), "kubernetes.io/hostname": name, "type": "kwok"},
        },
        "status": {"capacity": capacity, "allocatable": dict(capacity)},
    }
    if taints:
        node["spec"] = {"taints": [dict(t) for t in taints]}
    return node
