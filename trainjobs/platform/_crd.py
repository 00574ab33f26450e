"""The CRD an operator kind installs for a framework's custom resource.

Frameworks whose upstream CRD had no schema (Caffe2Job, both MSJobs) ship a CRD
generated from their model at ``crds/<crd_file>`` (``trainjobs crds``). Until that
file exists, the install carries the CRD upstream shipped in spirit: served and
stored, every field kept (``x-kubernetes-preserve-unknown-fields``), no validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainjobs.frameworks.base import Framework, Manifest
from trainjobs.k8s.crds import crd_dir
from trainjobs.platform import install

__all__ = ["framework_crd"]


def framework_crd(
    framework: Framework, labels: Mapping[str, str] = {}, *, status: bool = False
) -> Manifest:
    """The shipped CRD of ``framework``'s kind, or a schema-less one when none is shipped.

    ``status``: the fallback serves a status subresource (the controller writes
    ``<plural>/status``).
    """
    if framework.crd_file and (crd_dir() / framework.crd_file).is_file():
        return install.crd(framework.crd_file, labels)
    kind = framework.kind
    version: dict[str, Any] = {
        "name": kind.version,
        "served": True,
        "storage": True,
        "schema": {
            "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        },
    }
    if status:
        version["subresources"] = {"status": {}}
    metadata: dict[str, Any] = {"name": kind.crd_name}
    if labels:
        metadata["labels"] = dict(labels)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": {
            "group": kind.group,
            "names": {
                "kind": kind.kind,
                "listKind": f"{kind.kind}List",
                "plural": kind.plural,
                "singular": kind.kind.lower(),
            },
            "scope": "Namespaced",
            "versions": [version],
        },
    }
