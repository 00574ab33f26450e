"""GpuNodePool: GPU nodes as code, and the placement of the jobs that name them.

Each pool is provided by Karpenter (NodePool + EC2NodeClass objects), by a cloud
(a GKE node pool, EKS node group or AKS agent pool, registered by the component),
or already exists (``static``: only the NVIDIA device plugin). Jobs name it in
``trainjobs.nodePool``; their GPU replicas are placed on it (``placement``), and
every render checks they fit (``schedulability``, run by ``check``).
"""

from __future__ import annotations

from trainjobs.errors import Finding, Rule
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.quantity import quantity_or_zero
from trainjobs.plan import JobPlan
from trainjobs.platform.base import (
    CheckExemption,
    PlanEffect,
    PlatformKind,
    PlatformResource,
    Reference,
)
from trainjobs.platform.pools import karpenter, static
from trainjobs.platform.pools.cloud import CloudPoolRequest, cloud_pool
from trainjobs.platform.pools.placement import (
    bound_templates,
    job_path,
    node_selector,
    place_template,
    placement_of,
)
from trainjobs.platform.pools.shape_check import shape_findings
from trainjobs.platform.pools.spec import GpuNodePool

__all__ = ["KIND", "GpuNodePoolKind"]

_SETTINGS = ("karpenter", "static", "gke", "eks", "aks")
_REQUIRED_SETTINGS = {
    "karpenter": "clusterName and role",
    "gke": "cluster, location and machineType",
    "eks": "clusterName, nodeRoleArn, subnetIds and instanceTypes",
    "aks": "resourceGroupName, clusterName and vmSize",
}

QUANTITY = Rule(
    "pool.quantity",
    "{field} must be a positive Kubernetes quantity",
    hint="e.g. cpu: 94, memory: 1100Gi",
)
MIN_MAX = Rule(
    "pool.min_max",
    "minNodes ({min}) is above maxNodes ({max})",
    hint="lower minNodes to {max} or raise maxNodes",
)
OTHER_SETTINGS = Rule(
    "pool.provider_settings",
    "settings for provider {other!r}, but the pool's provider is {provider!r}",
    hint="remove spec.{other}, or set provider: {other}",
)
MISSING_SETTINGS = Rule(
    "pool.provider_settings",
    "provider {provider!r} needs its settings",
    hint="add spec.{provider} with {required}",
)
GKE_GPU = Rule(
    "pool.gpu_provider",
    "GKE offers no {gpu} GPU",
    hint="use one of a100-40gb, a100-80gb, h100-80gb, l4, t4",
)
AKS_NAME = Rule(
    "pool.aks_name",
    "an AKS agent pool name needs letters or digits",
    hint="rename the pool, e.g. a100",
)


class GpuNodePoolKind(PlatformKind[GpuNodePool]):
    """Renders a GpuNodePool and places jobs on it."""

    category = "nodePool"
    title = "GPU node pool (karpenter, static, gke, eks, aks) and job placement"
    default_namespace = None

    def validate(self, resource: PlatformResource) -> list[Finding]:
        pool = self.document(resource)
        spec = pool.spec
        findings: list[Finding] = []
        for field in ("cpu", "memory"):
            value = getattr(spec, field)
            if quantity_or_zero(value) <= 0:
                findings.append(QUANTITY.at(f"spec.{field}", value, field=field))
        if spec.min_nodes > spec.max_nodes:
            findings.append(
                MIN_MAX.at("spec.minNodes", spec.min_nodes, min=spec.min_nodes, max=spec.max_nodes)
            )
        for other in _SETTINGS:
            if other != spec.provider and getattr(spec, other) is not None:
                findings.append(
                    OTHER_SETTINGS.at(f"spec.{other}", other=other, provider=spec.provider)
                )
        if spec.provider in _REQUIRED_SETTINGS and getattr(spec, spec.provider) is None:
            findings.append(
                MISSING_SETTINGS.at(
                    f"spec.{spec.provider}",
                    provider=spec.provider,
                    required=_REQUIRED_SETTINGS[spec.provider],
                )
            )
        if spec.provider == "gke" and spec.gpu_type.gke_accelerator is None:
            findings.append(GKE_GPU.at("spec.gpu", spec.gpu, gpu=spec.gpu))
        findings += shape_findings(pool)
        if spec.provider == "aks" and not any(c.isalnum() for c in pool.name):
            findings.append(AKS_NAME.at("metadata.name", pool.name))
        return findings

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        pool = self.document(resource)
        if pool.spec.provider == "karpenter":
            return karpenter.manifests(pool)
        if pool.spec.provider == "static":
            return static.manifests(pool)
        return []

    def check_exemptions(
        self, resource: PlatformResource, manifest: Manifest
    ) -> tuple[CheckExemption, ...]:
        """A static pool's device plugin mounts the kubelet's directory (``static``)."""
        pool = self.document(resource)
        return static.exemptions(pool, manifest) if pool.spec.provider == "static" else ()

    def cloud_pool(self, resource: PlatformResource) -> CloudPoolRequest | None:
        """The cloud node pool the component registers (gke, eks, aks); None otherwise."""
        return cloud_pool(self.document(resource))

    def outputs(self, resource: PlatformResource) -> dict[str, str]:
        selector = node_selector(self.document(resource))
        return {"nodeSelector": ",".join(f"{k}={v}" for k, v in selector.items())}

    def apply_to_plan(
        self, resource: PlatformResource, plan: JobPlan, ref: Reference
    ) -> PlanEffect:
        """Place the job's GPU replicas (or the replica types ``ref`` names) on the pool."""
        templates, findings = bound_templates(plan, ref)
        placement = placement_of(self.document(resource))
        prefix = job_path(ref)
        placed = {}
        for template in templates:
            new, problems = place_template(template.template, placement, template.path)
            placed[template.role] = new
            findings += [f.located("", prefix) for f in problems]
        if not placed:
            return PlanEffect(plan, findings)
        return PlanEffect(plan.with_templates(placed), findings)


KIND = GpuNodePoolKind()
