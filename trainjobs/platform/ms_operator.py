"""MSOperator: the 2020 ms-operator (MSJob kubeflow.org/v1), the objects of its Helm chart.

The chart ``ms-operator-chart`` (0.1.0) rendered the CRD ``msjobs.kubeflow.org``, a
Deployment ``ms-operator`` and — only with ``rbac.install`` — a ServiceAccount and a
ClusterRole granting ``*`` on pods, services, jobs, CRDs and more. This kind always
installs the ServiceAccount, with least privilege instead, derived from the calls
the controller makes (ms-operator @ 8bcc840, pkg/trainer, pkg/controller):

* ``msjobs`` get/list/watch (informer and re-read; it never writes status back);
* ``pods`` get/list/create/deletecollection (sync, status lookup, clean-up);
* ``services`` get/create/delete; ``configmaps`` get/delete (clean-up of ``cm-ps-<id>``);
* ``events`` create/patch;
* in its own namespace only: ``endpoints`` create plus get/update of the
  ``ms-operator`` leader lock.

Differences from the chart: ``apps/v1`` with a selector instead of ``extensions/v1beta1``;
``KUBEFLOW_NAMESPACE`` always set to the operator's namespace (the lock lives there,
where its Role allows it); a non-root, read-only container with ``/tmp`` writable.

The only image upstream named is ``mindspore/ms-operator:latest`` (a floating tag whose
availability is unconfirmed); it is the default, and a warning asks for a pinned one.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from trainjobs import errors
from trainjobs.errors import Finding, Severity
from trainjobs.k8s.data import Manifest
from trainjobs.platform._legacy_operator import LegacyOperator, LegacyOperatorSpec
from trainjobs.platform.base import Category, PlatformKind, PlatformResource
from trainjobs.platform.install import PolicyRule

__all__ = ["DEFAULT_IMAGE", "KIND", "RULES", "MSOperator", "MSOperatorKind", "MSOperatorSpec"]

DEFAULT_IMAGE = "mindspore/ms-operator:latest"
"""The chart's ``image`` value."""
FLOATING_IMAGE = errors.Rule(
    "ms_operator.image",
    "the image tag floats: each node may pull a different build, or none",
    hint="build or mirror the operator and set spec.image to a fixed tag or digest",
    severity=Severity.WARNING,
)
CONFIG_FILE = "/etc/config/controller-config-file.yaml"
"""Where the chart mounts the controller config (``config.file``)."""
LOCK = "ms-operator"
RULES = (
    PolicyRule(("kubeflow.org",), ("msjobs",), ("get", "list", "watch")),
    PolicyRule(("",), ("pods",), ("get", "list", "create", "deletecollection")),
    PolicyRule(("",), ("services",), ("get", "create", "delete")),
    PolicyRule(("",), ("configmaps",), ("get", "delete")),
    PolicyRule(("",), ("events",), ("create", "patch")),
)
"""What the controller does in every namespace; nothing more."""

_INSTALL = LegacyOperator("ms-operator", "mindspore", LOCK, RULES)


class MSOperatorSpec(LegacyOperatorSpec):
    """``spec`` of an MSOperator."""

    image: str = Field(
        default=DEFAULT_IMAGE,
        description=f"The operator image; default {DEFAULT_IMAGE} (floating: pin your own).",
    )
    controller_config_map: str | None = Field(
        default=None,
        description=(
            "An existing ConfigMap with controller-config-file.yaml (accelerator volumes "
            "and env per resource name), mounted at /etc/config; default none."
        ),
    )


class MSOperator(PlatformResource):
    """An MSOperator document."""

    kind: Literal["MSOperator"] = "MSOperator"
    spec: MSOperatorSpec = Field(default_factory=MSOperatorSpec)


class MSOperatorKind(PlatformKind[MSOperator]):
    """Installs the 2020 ms-operator."""

    category: ClassVar[Category] = "operator"
    title = "mindspore-ai/ms-operator 2020 (MSJob kubeflow.org/v1)"
    default_namespace = "ms-operator"

    def validate(self, resource: PlatformResource) -> list[Finding]:
        image = self.document(resource).spec.image
        tag = image.rpartition("/")[2]
        if "@" in tag or (":" in tag and not tag.endswith(":latest")):
            return []
        return [FLOATING_IMAGE.at("spec.image", image)]

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        spec = self.document(resource).spec
        namespace = self.required_namespace(resource)
        command = ["/ms-operator"]
        volumes: list[dict[str, Any]] = []
        mounts: list[dict[str, Any]] = []
        if spec.controller_config_map:
            command.append(f"--controller-config-file={CONFIG_FILE}")
            volumes.append(
                {"name": "config-volume", "configMap": {"name": spec.controller_config_map}}
            )
            mounts.append({"name": "config-volume", "mountPath": "/etc/config"})
        command += ["-alsologtostderr", "-v=1"]
        container = {
            "name": "ms-operator",
            "image": spec.image,
            "imagePullPolicy": "IfNotPresent",
            "command": command,
        }
        selector = {"name": resource.name}
        return _INSTALL.manifests(
            resource, namespace, spec, container, selector, volumes=volumes, mounts=mounts
        )


KIND = MSOperatorKind()
