"""The GPU type table: every name the spec accepts is in it, with each provider's label."""

from __future__ import annotations

from typing import get_args

from trainjobs.platform.pools.gputypes import GPU_TYPES, gpu_type
from trainjobs.platform.pools.spec import GpuName


def test_the_spec_accepts_exactly_the_table() -> None:
    assert sorted(get_args(GpuName)) == sorted(GPU_TYPES)


def test_labels_of_each_gpu() -> None:
    rows = {
        name: (t.product, t.gke_accelerator, t.karpenter_gpu_name, t.ec2_families, t.memory_mib)
        for name, t in GPU_TYPES.items()
    }
    assert rows == {
        "a100-40gb": ("NVIDIA-A100-SXM4-40GB", "nvidia-tesla-a100", "a100", ("p4d",), 40960),
        "a100-80gb": ("NVIDIA-A100-SXM4-80GB", "nvidia-a100-80gb", "a100", ("p4de",), 81920),
        "h100-80gb": ("NVIDIA-H100-80GB-HBM3", "nvidia-h100-80gb", "h100", ("p5",), 81920),
        "l4": ("NVIDIA-L4", "nvidia-l4", "l4", ("g6",), 22888),
        "t4": ("Tesla-T4", "nvidia-tesla-t4", "t4", ("g4dn",), 16384),
        "a10g": ("NVIDIA-A10G", None, "a10g", ("g5",), 22888),
    }


def test_product_strings_are_valid_label_values() -> None:
    # GPU feature discovery turns spaces into dashes and drops other characters.
    for t in GPU_TYPES.values():
        assert " " not in t.product and len(t.product) <= 63
        assert gpu_type(t.name) is t
