"""The strategic merge the Trainer applies runtime patches with."""

from __future__ import annotations

from trainjobs.frameworks.trainjob._merge import strategic_merge


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
