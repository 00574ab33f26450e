"""The strategic merge the Trainer applies runtime patches with."""

from __future__ import annotations

from fractions import Fraction

from trainjobs.frameworks.trainjob._merge import format_like, strategic_merge


def test_keyed_lists_merge_and_others_are_replaced() -> None:
    original = {
        "containers": [{"name": "node", "env": [{"name": "A", "value": "1"}]}],
        "tolerations": [{"key": "a"}],
        "volumes": [{"name": "data", "configMap": {"name": "c"}}, {"name": "keep", "emptyDir": {}}],
        "nodeSelector": {"x": "1"},
    }
    patch = {
        "containers": [{"name": "node", "env": [{"name": "B", "value": "2"}]}, {"name": "side"}],
        "tolerations": [{"key": "b"}],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "nodeSelector": {"y": "2"},
    }
    assert strategic_merge(original, patch) == {
        "containers": [
            {"name": "node", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
            {"name": "side"},
        ],
        "tolerations": [{"key": "b"}],
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "keep", "emptyDir": {}}],
        "nodeSelector": {"x": "1", "y": "2"},
    }
    assert original["tolerations"] == [{"key": "a"}]  # input untouched


def test_quantities_print_as_go_does() -> None:
    assert format_like(Fraction(12 * 2**30), "3Gi") == "12Gi"
    assert format_like(Fraction(3, 2) * 2**30, "1536Mi") == "1536Mi"
    assert format_like(Fraction(8000), "4000") == "8k"
    assert format_like(Fraction(1, 2), 0.5) == "500m"
    assert format_like(Fraction(2), 2) == "2"
