"""EdlController: the PaddlePaddle EDL controller, installed as code.

What upstream's install steps created (seed-systems.md §3.7): the ``paddlecloud``
namespace, the TrainingJob definition and the ``training-job-controller``
Deployment running ``/usr/local/bin/edl -logtostderr -log_level debug
-max_load_desired 0.9``. Instead of the ThirdPartyResource (gone since Kubernetes
1.8) it installs the CRD trainjobs generates from its TrainingJob model
(``crds/generated/trainingjobs.paddlepaddle.org.yaml``); instead of binding
``cluster-admin`` to the ``default`` ServiceAccounts it gives the controller its
own ServiceAccount with exactly the calls the controller makes:

* TrainingJobs (``paddlepaddle.org``): list and watch, in every namespace (its informer);
* ReplicaSets: create (the master and pserver sets), in ``extensions`` — what the
  2018 binary calls — and ``apps``, what a controller rebuilt against a current
  client calls (``extensions`` ReplicaSets are not served since Kubernetes 1.16);
* Jobs (``batch``): create, get, update (the trainer Job; the autoscaler resizes it);
* Nodes: list; Pods: list, in every namespace (the autoscaler's inventory).

The upstream image is unpinned and its availability is unconfirmed; set
``spec.image`` to a build you trust.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.model import K8sModel
from trainjobs.platform import install
from trainjobs.platform.base import PlatformKind, PlatformResource
from trainjobs.platform.install import PolicyRule
from trainjobs.platform.workload import (
    Resources,
    component_labels,
    create_namespace_field,
    resources_field,
    restricted_container,
    restricted_pod,
)

__all__ = [
    "DEFAULT_IMAGE",
    "DEFAULT_MAX_LOAD",
    "RULES",
    "EdlController",
    "EdlControllerKind",
    "EdlControllerSpec",
]

DEFAULT_IMAGE = "yancey1989/edl-controller"
"""The image upstream's install manifest runs (no tag was ever published)."""
DEFAULT_MAX_LOAD = 0.9
"""``-max_load_desired`` as upstream's install manifest passes it (the binary's own default
is 0.97): the autoscaler keeps requested CPU and GPUs at or below this share of the cluster."""
NOBODY = 65534
"""The controller needs no privileges: it runs as the conventional unprivileged user."""

EDL = REGISTRY.named("paddle-edl")

RULES: tuple[PolicyRule, ...] = (
    PolicyRule((EDL.kind.group,), (EDL.kind.plural,), ("list", "watch")),
    PolicyRule(("apps", "extensions"), ("replicasets",), ("create",)),
    PolicyRule(("batch",), ("jobs",), ("create", "get", "update")),
    PolicyRule(("",), ("nodes",), ("list",)),
    PolicyRule(("",), ("pods",), ("list",)),
)
"""What the controller calls, and nothing else (seed-systems.md §3.7, derived)."""


class EdlControllerSpec(K8sModel):
    """``spec`` of an EdlController."""

    image: str = Field(
        default=DEFAULT_IMAGE,
        description=f"Controller image; default {DEFAULT_IMAGE} (upstream's, unpinned).",
    )
    max_load_desired: float = Field(
        default=DEFAULT_MAX_LOAD,
        gt=0,
        le=1,
        description="Share of the cluster's CPU and GPUs the autoscaler fills before it "
        f"scales jobs down (-max_load_desired); default {DEFAULT_MAX_LOAD}.",
    )
    log_level: Literal["debug", "info", "warn", "error", "crit"] = Field(
        default="debug", description="-log_level; default debug (as upstream's manifest)."
    )
    resources: Resources = resources_field("Container", ("100m", "64Mi"), ("500m", "256Mi"))
    create_namespace: bool = create_namespace_field()


class EdlController(PlatformResource):
    """An EdlController document."""

    kind: Literal["EdlController"] = "EdlController"
    spec: EdlControllerSpec = Field(default_factory=EdlControllerSpec)


class EdlControllerKind(PlatformKind[EdlController]):
    """Renders the EDL controller install."""

    category = "operator"
    title = "PaddlePaddle EDL controller (TrainingJob, elastic trainers)"
    default_namespace = "paddlecloud"

    def command(self, resource: PlatformResource) -> list[str]:
        """The controller's command line, flags as upstream spells them."""
        spec = self.document(resource).spec
        return [
            "/usr/local/bin/edl",
            "-logtostderr",
            "-log_level",
            spec.log_level,
            "-max_load_desired",
            repr(spec.max_load_desired),
        ]

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        spec = self.document(resource).spec
        ns = self.required_namespace(resource)
        name = resource.name
        labels = component_labels("edl-controller", resource, "controller")
        selector = {k: labels[k] for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance")}
        container: dict[str, Any] = {
            "name": "training-job-controller",
            "image": spec.image,
            "command": self.command(resource),
            # Upstream clears proxies the image may carry: the API server is in-cluster.
            # An env var without a value is set to "" (upstream writes value: ""), and it
            # is what the API server stores: it drops an empty value.
            "env": [{"name": "https_proxy"}, {"name": "http_proxy"}],
            "resources": spec.resources,
            **restricted_container(),
        }
        pod = {
            **restricted_pod(NOBODY),
            "serviceAccountName": name,
            "automountServiceAccountToken": True,
            "containers": [container],
        }
        objects = [install.namespace(ns, labels)] if spec.create_namespace else []
        return [
            *objects,
            install.crd(EDL.crd_file, labels),
            install.service_account(name, ns, labels),
            install.cluster_role(name, RULES, labels),
            install.cluster_role_binding(name, name, name, ns, labels),
            install.deployment(name, ns, selector, pod, labels=labels),
        ]

    def outputs(self, resource: PlatformResource) -> dict[str, str]:
        return {"namespace": self.required_namespace(resource)}


KIND = EdlControllerKind()
