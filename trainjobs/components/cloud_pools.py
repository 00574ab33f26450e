"""Cloud node pools: a ``CloudPoolRequest`` → the pulumi-gcp, pulumi-aws or
pulumi-azure-native resource, registered inside the GpuNodePool component.

The cloud SDKs are large optional extras (``pip install 'trainjobs[gke]'`` …), so
each is imported only when a pool of its provider is declared, with a message
saying what to install when it is missing.
"""

from __future__ import annotations

import importlib
from typing import Any

import pulumi

from trainjobs.components.inputs import Inputs
from trainjobs.platform.pools.cloud import CloudPoolRequest

__all__ = ["MissingProviderError", "register_cloud_pool"]

# The SDK module of each provider, and the package and extra that install it.
_SDKS = {
    "gke": ("pulumi_gcp", "pulumi-gcp"),
    "eks": ("pulumi_aws", "pulumi-aws"),
    "aks": ("pulumi_azure_native", "pulumi-azure-native"),
}


class MissingProviderError(pulumi.RunError):
    """A pool's cloud provider SDK is not installed."""


def _resource_class(request: CloudPoolRequest) -> Any:
    module, package = _SDKS[request.provider]
    try:
        sdk = importlib.import_module(module)
    except ImportError:
        raise MissingProviderError(
            f"GpuNodePool {request.name!r} uses provider {request.provider!r}, which needs "
            f"the {package} package; install it with: pip install 'trainjobs[{request.provider}]'"
        ) from None
    namespace, name = request.resource_type.split(".")
    return getattr(getattr(sdk, namespace), name)


def register_cloud_pool(
    request: CloudPoolRequest,
    parent: pulumi.Resource,
    inputs: Inputs | None = None,
    prefix: str = "",
) -> pulumi.CustomResource:
    """Register the cloud node pool ``request`` describes as a child of ``parent``.

    ``inputs`` turns the tokens of Pulumi Inputs in the request back into Outputs (the
    SDKs take Inputs for every argument, so a cluster name that is another resource's
    output goes straight to them and makes the pool depend on it); ``prefix`` scopes the
    Pulumi name as the component's other children are scoped (the unscoped name stays
    an alias).
    """
    opts = pulumi.ResourceOptions(parent=parent)
    resource_name = request.name
    if prefix:
        resource_name = f"{prefix}:{request.name}"
        alias = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=request.name)])
        opts = pulumi.ResourceOptions.merge(opts, alias)
    try:
        resource_class = _resource_class(request)
    except MissingProviderError as exc:
        if not inputs:
            raise
        # A pool named by an Output: its name as the user knows it, not the placeholder.
        raise MissingProviderError(inputs.describe(str(exc))) from None
    args = inputs.substitute(request.args) if inputs else request.args
    resource: pulumi.CustomResource = resource_class(resource_name, **args, opts=opts)
    return resource
