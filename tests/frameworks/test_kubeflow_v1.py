"""The shared Training Operator v1 engine: the hooks and helpers plugins build on."""

from __future__ import annotations

import json

from tests.support.v1jobs import job, lines, replica
from trainjobs.frameworks.jax import FRAMEWORK as JAX
from trainjobs.frameworks.kubeflow_v1 import (
    LegacyRunPolicy,
    RunPolicy,
    env_field_ref,
    go_json,
)
from trainjobs.frameworks.mxnet import FRAMEWORK as MX
from trainjobs.frameworks.xgboost import FRAMEWORK as XGB


def test_go_json_is_compact_keeps_key_order_and_escapes_like_go() -> None:
    value = {"b": [1, {"url": "x", "port": 2}], "a": "<é&\u2028>"}
    assert go_json(value) == '{"b":[1,{"url":"x","port":2}],"a":"\\u003cé\\u0026\\u2028\\u003e"}'
    assert json.loads(go_json(value)) == value


def test_env_field_ref() -> None:
    assert env_field_ref("POD_IP", "status.podIP") == {
        "name": "POD_IP",
        "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
    }


def test_run_policy_models() -> None:
    assert "managed_by" not in LegacyRunPolicy.model_fields
    assert list(RunPolicy.model_fields)[-1] == "managed_by"
    assert XGB.run_policy_model is RunPolicy
    assert MX.run_policy_model is LegacyRunPolicy
    defaulted = MX.default(job(MX, {"Worker": replica("mxnet")}, "m", jobMode="MXTrain"))
    assert type(defaulted.run_policy) is LegacyRunPolicy


def test_run_policy_of_a_job() -> None:
    assert job(XGB, {"Master": replica("xgboost")}, "x").run_policy is None
    with_policy = job(XGB, {"Master": replica("xgboost")}, "x", runPolicy={"backoffLimit": 2})
    assert with_policy.run_policy == RunPolicy(backoff_limit=2)


def test_camel_case_types_default_to_every_replica_type() -> None:
    defaulted = JAX.default(job(JAX, {"wOrKeR": replica("jax")}, "j"))
    assert list(defaulted.replica_specs) == ["Worker"]


def test_an_empty_job_is_pointed_at_its_workers() -> None:
    assert lines(MX, job(MX, {}, "m", jobMode="MXTrain"))[0] == (
        "error: spec.mxReplicaSpecs: MXJob needs at least one replica type; fix: add e.g. "
        "mxReplicaSpecs.Worker with a pod template"
    )
