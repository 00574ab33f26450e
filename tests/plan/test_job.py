"""A job's plan is data: its edits change its own fields, and the operator's rules are
read only once stated."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from tests.frameworks.test_caffe2 import worked_job
from tests.support.v1jobs import job, replica
from trainjobs.frameworks.base import operator_rules
from trainjobs.frameworks.caffe2 import ENV_ORDER
from trainjobs.frameworks.kubeflow_v1 import KubeflowV1Framework
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.plan import BackendBinding, JobPlan

PYTORCH: KubeflowV1Framework[Any] = REGISTRY.named("pytorch")  # type: ignore[assignment]


def _defaulted() -> Any:
    return PYTORCH.default(job(PYTORCH, {"Master": replica("pytorch", 1)}, "pt"))


def test_a_plan_holds_no_resource_and_no_framework() -> None:
    names = {f.name for f in fields(JobPlan)}
    assert not names & {"resource", "editor"}


def test_edits_change_the_plans_own_fields_and_the_framework_writes_them_back() -> None:
    defaulted = _defaulted()
    plan = PYTORCH.plan(defaulted)
    (master,) = plan.pod_sets
    template = {**master.template, "metadata": {"labels": {"pool": "a"}}}
    binding = BackendBinding("redis", "cache", env=({"name": "REDIS_HOST", "value": "r"},))
    edited = plan.with_templates({"Master": template, "Nobody": {}}).with_labels({"q": "x"})
    edited = edited.with_backend(binding)
    (pod_set,) = edited.pod_sets
    assert pod_set.template["metadata"] == {"labels": {"pool": "a"}}
    assert pod_set.template["spec"]["containers"][0]["env"][-1] == binding.env[0]
    assert edited.labels == {"q": "x"} and edited.backends == (binding,)
    # The defaulted job is untouched; the write-back puts every edit in one step.
    assert PYTORCH.plan(defaulted) == plan
    written = PYTORCH.written(defaulted, edited)
    assert written.metadata.labels == {"q": "x"}
    assert written.replica_specs["Master"].template == pod_set.template
    assert PYTORCH.written(defaulted, plan) is defaulted


def test_the_operators_rules_are_read_only_once_stated() -> None:
    defaulted = _defaulted()
    plan = PYTORCH.plan(defaulted)
    with pytest.raises(ValueError, match="not stated yet"):
        _ = plan.gang
    with pytest.raises(ValueError, match="not stated yet"):
        _ = plan.addresses
    stated = plan.with_rules(operator_rules(PYTORCH, defaulted, plan))
    assert stated.gang.min_member == 1
    assert stated.addresses == {"master": "pt-master-0:23456"}
    # Trainer v2 names its own pods: the operator's addresses do not hold there.
    assert operator_rules(PYTORCH, defaulted, plan, "trainer").addresses == {}


def test_a_backend_the_resource_names_is_written_there_and_its_env_left_out() -> None:
    caffe2 = REGISTRY.named("caffe2")
    defaulted = caffe2.default(worked_job())
    env = ({"name": ENV_ORDER[0], "value": "redis"}, {"name": "REDIS_PASSWORD", "value": "p"})
    binding = BackendBinding("redis", "redis", host="redis", port=6379, env=env)
    plan = caffe2.plan(defaulted).with_backend(binding)
    names = [e["name"] for e in plan.pod_sets[0].template["spec"]["containers"][0]["env"]]
    assert "REDIS_PASSWORD" in names and ENV_ORDER[0] not in names
    written = caffe2.written(defaulted, plan)
    assert written.spec.backend_specs is not None
    assert written.spec.backend_specs.redis_host == "redis"
