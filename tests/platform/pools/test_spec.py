"""The GpuNodePool spec model: defaults, and the upstream spelling on the wire."""

from __future__ import annotations

from fractions import Fraction

from tests.platform.pools.docs import pool
from trainjobs.platform.pools.spec import DEFAULT_TAINT, GpuNodePoolSpec, Taint


def test_defaults() -> None:
    spec = pool().spec
    assert (spec.min_nodes, spec.capacity_type, spec.labels) == (0, "on-demand", {})
    assert spec.taints == [DEFAULT_TAINT]
    assert DEFAULT_TAINT.text() == "nvidia.com/gpu=present:NoSchedule"
    assert spec.karpenter is not None
    assert spec.karpenter.ami_alias == "al2023@latest"
    assert (spec.cpu_value, spec.memory_value) == (Fraction(46), Fraction(500 * 2**30))


def test_every_field_documents_its_meaning() -> None:
    for name, field in GpuNodePoolSpec.model_fields.items():
        assert field.description, name


def test_taints_without_a_value() -> None:
    assert Taint(key="dedicated", effect="NoExecute").text() == "dedicated:NoExecute"
    assert pool(taints=[]).spec.taints == []
