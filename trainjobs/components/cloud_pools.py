"""Cloud node pools: a ``CloudPoolRequest`` → the pulumi-gcp, pulumi-aws or
pulumi-azure-native resource, registered inside the GpuNodePool component.

The cloud SDKs are large optional extras (``pip install 'trainjobs[gke]'`` …), so
each is imported only when a pool of its provider is declared, with a message
saying what to install when it is missing.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pulumi

from trainjobs.components.inputs import Inputs
from trainjobs.platform.pools.cloud import (
    AksAgentPoolRequest,
    CloudPoolRequest,
    EksNodeGroupRequest,
    GkeNodePoolRequest,
)

__all__ = ["MissingProviderError", "register_cloud_pool"]

_EXTRAS = {
    "pulumi_gcp": ("gke", "pulumi-gcp"),
    "pulumi_aws": ("eks", "pulumi-aws"),
    "pulumi_azure_native": ("aks", "pulumi-azure-native"),
}


class MissingProviderError(pulumi.RunError):
    """A pool's cloud provider SDK is not installed."""


def _sdk(module: str, pool: str) -> ModuleType:
    extra, package = _EXTRAS[module]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingProviderError(
            f"GpuNodePool {pool!r} uses provider {extra!r}, which needs the {package} package; "
            f"install it with: pip install 'trainjobs[{extra}]'"
        ) from None


def _gke(
    request: GkeNodePoolRequest, opts: pulumi.ResourceOptions, resource_name: str
) -> pulumi.CustomResource:
    gcp: Any = _sdk("pulumi_gcp", request.name).container
    driver = gcp.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
        gpu_driver_version=request.driver_version
    )
    node_config = gcp.NodePoolNodeConfigArgs(
        machine_type=request.machine_type,
        disk_size_gb=request.disk_size_gb,
        spot=request.spot,
        labels=dict(request.labels),
        taints=[
            gcp.NodePoolNodeConfigTaintArgs(key=t.key, value=t.value, effect=t.effect)
            for t in request.taints
        ],
        guest_accelerators=[
            gcp.NodePoolNodeConfigGuestAcceleratorArgs(
                type=request.accelerator,
                count=request.accelerator_count,
                gpu_driver_installation_config=driver,
            )
        ],
        oauth_scopes=["https://www.googleapis.com/auth/cloud-platform"],
    )
    resource: pulumi.CustomResource = gcp.NodePool(
        resource_name,
        name=request.name,
        cluster=request.cluster,
        location=request.location,
        project=request.project,
        initial_node_count=request.min_nodes,
        autoscaling=gcp.NodePoolAutoscalingArgs(
            total_min_node_count=request.min_nodes,
            total_max_node_count=request.max_nodes,
            location_policy="ANY",
        ),
        node_config=node_config,
        opts=opts,
    )
    return resource


def _eks(
    request: EksNodeGroupRequest, opts: pulumi.ResourceOptions, resource_name: str
) -> pulumi.CustomResource:
    eks: Any = _sdk("pulumi_aws", request.name).eks
    resource: pulumi.CustomResource = eks.NodeGroup(
        resource_name,
        node_group_name=request.name,
        cluster_name=request.cluster_name,
        node_role_arn=request.node_role_arn,
        subnet_ids=list(request.subnet_ids),
        instance_types=list(request.instance_types),
        ami_type=request.ami_type,
        capacity_type=request.capacity_type,
        disk_size=request.disk_size,
        labels=dict(request.labels),
        taints=[
            eks.NodeGroupTaintArgs(key=t.key, value=t.value, effect=t.effect)
            for t in request.taints
        ],
        scaling_config=eks.NodeGroupScalingConfigArgs(
            min_size=request.min_nodes,
            max_size=request.max_nodes,
            desired_size=request.desired_nodes,
        ),
        opts=opts,
    )
    return resource


def _aks(
    request: AksAgentPoolRequest, opts: pulumi.ResourceOptions, resource_name: str
) -> pulumi.CustomResource:
    azure: Any = _sdk("pulumi_azure_native", request.name).containerservice
    spot: dict[str, Any] = (
        {"scale_set_priority": "Spot", "scale_set_eviction_policy": "Delete", "spot_max_price": -1}
        if request.spot
        else {"scale_set_priority": "Regular"}
    )
    resource: pulumi.CustomResource = azure.AgentPool(
        resource_name,
        agent_pool_name=request.name,
        resource_group_name=request.resource_group_name,
        resource_name_=request.cluster_name,
        mode="User",
        os_type="Linux",
        vm_size=request.vm_size,
        os_disk_size_gb=request.os_disk_size_gb,
        enable_auto_scaling=True,
        count=request.min_nodes,
        min_count=request.min_nodes,
        max_count=request.max_nodes,
        node_labels=dict(request.labels),
        node_taints=list(request.taints),
        **spot,
        opts=opts,
    )
    return resource


class _WithInputs:
    """A request whose fields holding Input tokens read as the Inputs' Outputs.

    The cloud SDKs take Inputs for every argument, so a cluster name that is another
    resource's output goes straight to them (and makes the pool depend on it).
    """

    def __init__(self, request: CloudPoolRequest, inputs: Inputs) -> None:
        self._request = request
        self._inputs = inputs

    def __getattr__(self, name: str) -> Any:
        return self._inputs.substitute(getattr(self._request, name))


def register_cloud_pool(
    request: CloudPoolRequest,
    parent: pulumi.Resource,
    inputs: Inputs | None = None,
    prefix: str = "",
) -> pulumi.CustomResource:
    """Register the cloud node pool ``request`` describes as a child of ``parent``.

    ``inputs`` turns the tokens of Pulumi Inputs in the request back into Outputs;
    ``prefix`` scopes the Pulumi name as the component's other children are scoped
    (the unscoped name stays an alias).
    """
    opts = pulumi.ResourceOptions(parent=parent)
    resource_name = request.name
    if prefix:
        resource_name = f"{prefix}:{request.name}"
        alias = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=request.name)])
        opts = pulumi.ResourceOptions.merge(opts, alias)
    fields: Any = _WithInputs(request, inputs) if inputs else request
    if isinstance(request, GkeNodePoolRequest):
        return _gke(fields, opts, resource_name)
    if isinstance(request, EksNodeGroupRequest):
        return _eks(fields, opts, resource_name)
    return _aks(fields, opts, resource_name)
