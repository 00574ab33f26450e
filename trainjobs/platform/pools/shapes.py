"""A small catalog of GPU instance shapes per provider, and the pool checks it drives.

A GpuNodePool states ``gpusPerNode``, ``cpu`` and ``memory`` itself; the cloud only
has certain shapes. A Karpenter pool asking for 4 H100 per node maps to family p5,
whose only size has 8: Karpenter can never launch a node, and the jobs wait forever.
The catalog lets ``check`` say so, naming the sizes that exist.

Numbers are the providers' published specifications (GPUs per node, GPU model and
memory, vCPUs, memory as sold; a node's allocatable is a little less):

* AWS — https://aws.amazon.com/ec2/instance-types/p4/ (p4d, p4de),
  https://aws.amazon.com/ec2/instance-types/p5/ (p5, p5e),
  https://aws.amazon.com/ec2/instance-types/g5/, https://aws.amazon.com/ec2/instance-types/g6/
* GCP — https://cloud.google.com/compute/docs/accelerator-optimized-machines
  (A2 standard and ultra, A3 High, G2)
* Azure — https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nca100v4-series,
  .../ndasra100v4-series, .../ndma100v4-series, .../nd-h100-v5-series,
  .../ncadsh100v5-series, .../ncast4v3-series

Only the shapes listed are known: a machine type outside the catalog is not judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["SHAPES", "Cloud", "InstanceShape", "family_shapes", "shape"]

Cloud = Literal["aws", "gcp", "azure"]


@dataclass(frozen=True)
class InstanceShape:
    """One instance type / machine type / VM size with GPUs.

    Attributes:
        cloud: aws, gcp or azure.
        name: the provider's name for it (``p5.48xlarge``, ``a2-highgpu-4g``).
        family: the family (``p5``, ``a2``, ``NC_A100_v4``).
        gpus: GPUs per node.
        gpu: the GPU, as pools name it (``h100-80gb``); a name no pool can use
            (``h200-141gb``) for GPUs outside ``gputypes``.
        gpu_memory_gib: memory of one GPU in GiB, as sold.
        vcpus: vCPUs of the node.
        memory_gib: memory of the node in GiB (GCP sells GB; listed as sold).
    """

    cloud: Cloud
    name: str
    family: str
    gpus: int
    gpu: str
    gpu_memory_gib: int
    vcpus: int
    memory_gib: int


_Row = tuple[Cloud, str, str, int, str, int, int, int]
"""One catalog row: cloud, family, GPU, GPU memory GiB, name, GPUs, vCPUs, memory GiB
(family first, so the rows of one family read as a block)."""

_AWS_G_SIZES = (
    # size, GPUs, vCPUs, memory GiB: g5 and g6 come in the same sizes
    ("xlarge", 1, 4, 16),
    ("2xlarge", 1, 8, 32),
    ("4xlarge", 1, 16, 64),
    ("8xlarge", 1, 32, 128),
    ("16xlarge", 1, 64, 256),
    ("12xlarge", 4, 48, 192),
    ("24xlarge", 4, 96, 384),
    ("48xlarge", 8, 192, 768),
)

_ROWS: tuple[_Row, ...] = (
    ("aws", "p4d", "a100-40gb", 40, "p4d.24xlarge", 8, 96, 1152),
    ("aws", "p4de", "a100-80gb", 80, "p4de.24xlarge", 8, 96, 1152),
    ("aws", "p5", "h100-80gb", 80, "p5.48xlarge", 8, 192, 2048),
    ("aws", "p5e", "h200-141gb", 141, "p5e.48xlarge", 8, 192, 2048),
    *(
        ("aws", family, gpu, 24, f"{family}.{size}", gpus, vcpus, memory)
        for family, gpu in (("g5", "a10g"), ("g6", "l4"))
        for size, gpus, vcpus, memory in _AWS_G_SIZES
    ),
    ("gcp", "a2", "a100-40gb", 40, "a2-highgpu-1g", 1, 12, 85),
    ("gcp", "a2", "a100-40gb", 40, "a2-highgpu-2g", 2, 24, 170),
    ("gcp", "a2", "a100-40gb", 40, "a2-highgpu-4g", 4, 48, 340),
    ("gcp", "a2", "a100-40gb", 40, "a2-highgpu-8g", 8, 96, 680),
    ("gcp", "a2", "a100-40gb", 40, "a2-megagpu-16g", 16, 96, 1360),
    ("gcp", "a2", "a100-80gb", 80, "a2-ultragpu-1g", 1, 12, 170),
    ("gcp", "a2", "a100-80gb", 80, "a2-ultragpu-2g", 2, 24, 340),
    ("gcp", "a2", "a100-80gb", 80, "a2-ultragpu-4g", 4, 48, 680),
    ("gcp", "a2", "a100-80gb", 80, "a2-ultragpu-8g", 8, 96, 1360),
    ("gcp", "a3", "h100-80gb", 80, "a3-highgpu-1g", 1, 26, 234),
    ("gcp", "a3", "h100-80gb", 80, "a3-highgpu-2g", 2, 52, 468),
    ("gcp", "a3", "h100-80gb", 80, "a3-highgpu-4g", 4, 104, 936),
    ("gcp", "a3", "h100-80gb", 80, "a3-highgpu-8g", 8, 208, 1872),
    ("gcp", "g2", "l4", 24, "g2-standard-4", 1, 4, 16),
    ("gcp", "g2", "l4", 24, "g2-standard-8", 1, 8, 32),
    ("gcp", "g2", "l4", 24, "g2-standard-12", 1, 12, 48),
    ("gcp", "g2", "l4", 24, "g2-standard-16", 1, 16, 64),
    ("gcp", "g2", "l4", 24, "g2-standard-24", 2, 24, 96),
    ("gcp", "g2", "l4", 24, "g2-standard-32", 1, 32, 128),
    ("gcp", "g2", "l4", 24, "g2-standard-48", 4, 48, 192),
    ("gcp", "g2", "l4", 24, "g2-standard-96", 8, 96, 384),
    ("azure", "NC_A100_v4", "a100-80gb", 80, "Standard_NC24ads_A100_v4", 1, 24, 220),
    ("azure", "NC_A100_v4", "a100-80gb", 80, "Standard_NC48ads_A100_v4", 2, 48, 440),
    ("azure", "NC_A100_v4", "a100-80gb", 80, "Standard_NC96ads_A100_v4", 4, 96, 880),
    ("azure", "ND_A100_v4", "a100-40gb", 40, "Standard_ND96asr_v4", 8, 96, 900),
    ("azure", "NDm_A100_v4", "a100-80gb", 80, "Standard_ND96amsr_A100_v4", 8, 96, 1900),
    ("azure", "ND_H100_v5", "h100-80gb", 80, "Standard_ND96isr_H100_v5", 8, 96, 1900),
    ("azure", "NCads_H100_v5", "h100-nvl-94gb", 94, "Standard_NC40ads_H100_v5", 1, 40, 320),
    ("azure", "NCads_H100_v5", "h100-nvl-94gb", 94, "Standard_NC80adis_H100_v5", 2, 80, 640),
    ("azure", "NCasT4_v3", "t4", 16, "Standard_NC4as_T4_v3", 1, 4, 28),
    ("azure", "NCasT4_v3", "t4", 16, "Standard_NC8as_T4_v3", 1, 8, 56),
    ("azure", "NCasT4_v3", "t4", 16, "Standard_NC16as_T4_v3", 1, 16, 110),
    ("azure", "NCasT4_v3", "t4", 16, "Standard_NC64as_T4_v3", 4, 64, 440),
)

SHAPES: dict[str, InstanceShape] = {
    name: InstanceShape(cloud, name, family, gpus, gpu, gpu_memory, vcpus, memory)
    for cloud, family, gpu, gpu_memory, name, gpus, vcpus, memory in _ROWS
}
"""Every known shape by its provider name (names do not clash across providers)."""


def shape(name: str) -> InstanceShape | None:
    """The shape called ``name``; None when the catalog does not know it."""
    return SHAPES.get(name)


def family_shapes(cloud: Cloud, families: tuple[str, ...]) -> list[InstanceShape]:
    """The known shapes of ``families`` on ``cloud``, in catalog order."""
    return [s for s in SHAPES.values() if s.cloud == cloud and s.family in families]
