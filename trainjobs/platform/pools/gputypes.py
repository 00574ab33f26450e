"""The GPU type table: one normalised name → each provider's labels for that GPU.

A pool names its GPU once (``a100-80gb``); placement and the providers read every
label value from here, so there is one place to check them against their sources:

* ``product`` — the ``nvidia.com/gpu.product`` label NVIDIA GPU feature discovery
  puts on a node: the NVML device name with spaces turned into dashes
  (github.com/NVIDIA/k8s-device-plugin, ``internal/lm/resource.go`` ``sanitise``, tag
  v0.20.0; e.g. NVML ``Tesla T4`` → ``Tesla-T4``, as in the GPU Operator's time-slicing
  docs, ``nvidia.com/gpu.product=Tesla-T4``). SXM4 is the A100 form factor of p4d/p4de
  and A2 machines, so the A100 strings are the SXM4 ones.
* ``gke_accelerator`` — the ``cloud.google.com/gke-accelerator`` node label and the
  accelerator type of a GKE node pool (GKE "GPUs" docs; the same names as the Cloud
  AI Platform ``AcceleratorType`` enum: ``nvidia-tesla-t4``, ``nvidia-l4``,
  ``nvidia-tesla-a100``, ``nvidia-a100-80gb``, ``nvidia-h100-80gb``). None where GCP
  has no such GPU (the A10G is AWS-only).
* ``karpenter_gpu_name`` — the ``karpenter.k8s.aws/instance-gpu-name`` well-known
  label; ``ec2_families`` and ``memory_mib`` (the per-GPU
  ``karpenter.k8s.aws/instance-gpu-memory``) come from the same page:
  github.com/aws/karpenter-provider-aws tag v1.14.1,
  ``website/content/en/preview/reference/instance-types.md`` (p4d.24xlarge: a100,
  40960; p4de.24xlarge: a100, 81920; p5.48xlarge: h100, 81920; g6.*: l4, 22888;
  g4dn.*: t4, 16384; g5.*: a10g, 22888).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GPU_TYPES", "GpuType", "gpu_type"]


@dataclass(frozen=True)
class GpuType:
    """One GPU model and how each provider labels it.

    Attributes:
        name: the normalised name pools use (``a100-80gb``).
        product: the GPU feature discovery ``nvidia.com/gpu.product`` value.
        gke_accelerator: the GKE accelerator type, or None where GKE has none.
        karpenter_gpu_name: the ``karpenter.k8s.aws/instance-gpu-name`` value.
        ec2_families: the EC2 instance families that carry this GPU.
        memory_mib: memory of one GPU in MiB, as EC2 reports it.
    """

    name: str
    product: str
    gke_accelerator: str | None
    karpenter_gpu_name: str
    ec2_families: tuple[str, ...]
    memory_mib: int


GPU_TYPES: dict[str, GpuType] = {
    t.name: t
    for t in (
        GpuType("a100-40gb", "NVIDIA-A100-SXM4-40GB", "nvidia-tesla-a100", "a100", ("p4d",), 40960),
        GpuType("a100-80gb", "NVIDIA-A100-SXM4-80GB", "nvidia-a100-80gb", "a100", ("p4de",), 81920),
        GpuType("h100-80gb", "NVIDIA-H100-80GB-HBM3", "nvidia-h100-80gb", "h100", ("p5",), 81920),
        GpuType("l4", "NVIDIA-L4", "nvidia-l4", "l4", ("g6",), 22888),
        GpuType("t4", "Tesla-T4", "nvidia-tesla-t4", "t4", ("g4dn",), 16384),
        GpuType("a10g", "NVIDIA-A10G", None, "a10g", ("g5",), 22888),
    )
}
"""Every GPU type a pool may name, by normalised name."""


def gpu_type(name: str) -> GpuType:
    """The GPU type called ``name``; KeyError when there is none (the spec model prevents it)."""
    return GPU_TYPES[name]
