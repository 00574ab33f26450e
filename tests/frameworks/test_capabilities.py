"""The capabilities a framework opts into: only the frameworks that need one carry it."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.capabilities import (
    CarriesDefinitions,
    JobSetConversion,
    TrainerConversion,
)
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


def test_definition_kinds_without_the_capabilities_are_refused() -> None:
    with pytest.raises(TypeError, match="definition_kinds and definitions go together"):

        class Half(Framework[Any]):
            definition_kinds = (KindRef("example.dev/v1", "Thing", "things"),)

    with pytest.raises(TypeError, match="definition_kinds needs CarriesDefinitions"):

        class Uncarried(Framework[Any]):
            definition_kinds = (KindRef("example.dev/v1", "Thing", "things"),)
            definitions = REGISTRY.named("trainjob").definitions


def test_each_capability_is_held_by_the_frameworks_that_need_it() -> None:
    def holders(capability: type) -> list[str]:
        return sorted(f.name for f in REGISTRY if isinstance(f, capability))

    assert holders(TrainerConversion) == ["mpi", "pytorch"]
    assert holders(JobSetConversion) == ["trainjob"]
    assert holders(CarriesDefinitions) == ["trainjob"]
    # A target listed by a framework is one its capabilities can render.
    for framework in REGISTRY:
        assert ("trainer" in framework.targets) == isinstance(framework, TrainerConversion)
        assert ("jobset" in framework.targets) == isinstance(framework, JobSetConversion)


def test_a_conversion_target_without_its_capability_is_refused() -> None:
    with pytest.raises(TypeError, match="the trainer target needs TrainerConversion"):

        class Half(Framework[Any]):
            targets = ("operator", "trainer")


def test_a_framework_without_a_conversion_has_no_such_target_input() -> None:
    tensorflow = REGISTRY.named("tensorflow")
    for target in ("trainer", "jobset"):
        with pytest.raises(NotImplementedError, match=f"tensorflow has no {target} target"):
            tensorflow.target_input(None, target)
