"""The capabilities a framework opts into: only the frameworks that need one carry it."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.frameworks.trainjob.model import ClusterTrainingRuntime, TrainingRuntime
from trainjobs.k8s.kinds import KindRef


def test_only_the_trainjob_framework_has_definitions() -> None:
    having = [f.name for f in REGISTRY if f.definitions is not None]
    assert having == ["trainjob"]
    runtimes = REGISTRY.named("trainjob").definitions
    assert runtimes is not None
    assert runtimes.model("TrainingRuntime") is TrainingRuntime
    assert runtimes.model("ClusterTrainingRuntime") is ClusterTrainingRuntime
    shipped = runtimes.shipped()
    assert len(shipped) == 8 and {m["kind"] for m in shipped} == {"ClusterTrainingRuntime"}


def test_definition_kinds_without_the_capability_are_refused() -> None:
    with pytest.raises(TypeError, match="definition_kinds and definitions go together"):

        class Half(Framework[Any]):
            definition_kinds = (KindRef("example.dev/v1", "Thing", "things"),)
