"""Caffe2Operator: the archived kubeflow/caffe2-operator, installed from typed code.

Upstream shipped only the CRD — no Deployment, no RBAC, no image; its README ran
the binary by hand with a kubeconfig. This kind installs it the way a controller
runs today: Namespace, the Caffe2Job CRD (kept when the install is deleted, so
running jobs survive), a ServiceAccount, a ClusterRole with exactly the calls the
controller makes, a Role for its leader lock, and a Deployment.

RBAC, derived from the controller's API calls (seed-systems.md §1.6):
``caffe2jobs`` get/list/watch/update (informer, adoption re-check, full-object
status updates); ``pods`` list/watch/create/patch (informer, creation,
adopt/release); ``events`` create/patch; and, in its own namespace only,
``endpoints`` create plus get/update of the ``caffe2-operator`` lock.

``spec.image`` is required: build the binary from github.com/kubeflow/caffe2-operator
(commit 3773f5b, ``make``) into an image whose ``/caffe2-operator`` runs it (or set
``spec.command``) and push it where the cluster pulls from.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from trainjobs import errors
from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.platform._legacy_operator import LegacyOperator, LegacyOperatorSpec
from trainjobs.platform.base import Category, PlatformKind, PlatformResource
from trainjobs.platform.install import PolicyRule

__all__ = ["KIND", "RULES", "Caffe2Operator", "Caffe2OperatorKind", "Caffe2OperatorSpec"]

LOCK = "caffe2-operator"
"""The leader-election Endpoints name the binary hard-codes."""
RULES = (
    PolicyRule(("kubeflow.org",), ("caffe2jobs",), ("get", "list", "watch", "update")),
    PolicyRule(("",), ("pods",), ("list", "watch", "create", "patch")),
    PolicyRule(("",), ("events",), ("create", "patch")),
)
"""What the controller does in every namespace; nothing more."""

_INSTALL = LegacyOperator("caffe2-operator", "caffe2", LOCK, RULES)


NO_IMAGE = errors.Rule(
    "caffe2_operator.image",
    "the caffe2-operator has no published image, so spec.image is required",
    hint="build the binary from github.com/kubeflow/caffe2-operator (commit 3773f5b, make) "
    "into an image, push it, and set spec.image to it",
)


class Caffe2OperatorSpec(LegacyOperatorSpec):
    """``spec`` of a Caffe2Operator."""

    image: str | None = Field(
        default=None,
        description=(
            "The operator image. Required: upstream published none; build it from "
            "kubeflow/caffe2-operator @ 3773f5b."
        ),
    )
    command: list[str] = Field(
        default_factory=lambda: ["/caffe2-operator"],
        description="The binary in the image; default ['/caffe2-operator'].",
    )
    args: list[str] = Field(
        default_factory=lambda: ["-alsologtostderr", "-v=1"],
        description=(
            "Flags; default ['-alsologtostderr', '-v=1']. Without -controller-config-file "
            "it uses the in-cluster ServiceAccount."
        ),
    )


class Caffe2Operator(PlatformResource):
    """A Caffe2Operator document."""

    kind: Literal["Caffe2Operator"] = "Caffe2Operator"
    spec: Caffe2OperatorSpec = Field(default_factory=Caffe2OperatorSpec)


class Caffe2OperatorKind(PlatformKind[Caffe2Operator]):
    """Installs the caffe2-operator."""

    category: ClassVar[Category] = "operator"
    title = "kubeflow/caffe2-operator (Caffe2Job), archived"
    default_namespace = "caffe2-operator"

    def validate(self, resource: PlatformResource) -> list[Finding]:
        if self.document(resource).spec.image:
            return []
        return [NO_IMAGE.at("spec.image")]

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        spec = self.document(resource).spec
        namespace = self.required_namespace(resource)
        container = {
            "name": "caffe2-operator",
            "image": spec.image,
            "command": list(spec.command),
            "args": list(spec.args),
        }
        selector = {
            "app.kubernetes.io/name": "caffe2-operator",
            "app.kubernetes.io/instance": resource.name,
        }
        return _INSTALL.manifests(resource, namespace, spec, container, selector)


KIND = Caffe2OperatorKind()
