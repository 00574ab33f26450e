"""The capabilities a framework opts into: only the frameworks that need one carry it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.frameworks.test_caffe2 import worked_job
from trainjobs.frameworks.base import Framework, operator_rules
from trainjobs.frameworks.capabilities import (
    Addresses,
    CarriesDefinitions,
    Gang,
    JobSetConversion,
    SuccessRule,
    TrainerConversion,
    training_operator_gang,
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


def test_the_operator_rules_are_opted_into_where_the_operator_differs() -> None:
    def holders(capability: type) -> list[str]:
        return sorted(f.name for f in REGISTRY if isinstance(f, capability))

    assert holders(Gang) == ["mindspore", "mpi", "trainjob"]
    assert "paddle-edl" not in holders(SuccessRule) + holders(Addresses)
    assert "mpi-v1" not in holders(Addresses) and "mpi-v1" in holders(SuccessRule)


def test_a_plan_without_the_operator_rules_takes_the_defaults() -> None:
    # Caffe2 has no Gang: the Training Operator's rule over its pod sets.
    caffe2 = REGISTRY.named("caffe2")
    assert not isinstance(caffe2, Gang)
    job = caffe2.default(worked_job())
    plan = caffe2.plan(job)
    gang = plan.with_rules(operator_rules(caffe2, job, plan)).gang
    assert plan.pod_sets and gang == training_operator_gang(plan.pod_sets)
    assert [(m.role, m.task) for m in gang.members] == [("Worker", "worker")]
    assert gang.min_member == plan.pods
    # MindSpore (an MSJob's workers) has Addresses; the EDL job, without it, has none
    # (tests/frameworks/test_paddle_edl.py).


def test_no_framework_has_a_capabilitys_method_without_the_capability() -> None:
    # An override outside its capability would be silently ignored by the plan.
    methods = {
        "gang_facts": Gang,
        "scheduling_policy": Gang,
        "success_policy": SuccessRule,
        "addresses": Addresses,
        "trainer_plan": TrainerConversion,
        "jobset": JobSetConversion,
        "with_definitions": CarriesDefinitions,
        "definition_manifests": CarriesDefinitions,
    }
    for framework in REGISTRY:
        for method, capability in methods.items():
            if callable(getattr(framework, method, None)):
                assert isinstance(framework, capability), (framework.name, method)
