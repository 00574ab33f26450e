"""The registry: every plugin once, each with a shipped CRD and a README row."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from pydantic import BaseModel

from tests.support.paths import ROOT
from trainjobs.frameworks import REGISTRY, Framework
from trainjobs.k8s.crds import load_crd


def test_every_framework_is_registered_once_by_name_and_kind() -> None:
    names = [fw.name for fw in REGISTRY]
    assert names[:2] == ["tensorflow", "pytorch"]
    assert {"xgboost", "paddle", "jax", "mxnet"} <= set(names)
    assert len(set(names)) == len(names)
    for fw in REGISTRY:
        assert REGISTRY.by_name(fw.name) is fw
        assert REGISTRY.by_kind(fw.kind.api_version, fw.kind.kind) is fw


@pytest.mark.parametrize("fw", list(REGISTRY), ids=lambda fw: fw.name)
def test_crd_file_declares_the_frameworks_kind(fw: Framework[Any]) -> None:
    crd = load_crd(fw.crd_file)
    assert crd["metadata"]["name"] == fw.kind.crd_name
    assert crd["spec"]["group"] == fw.kind.group
    assert crd["spec"]["names"]["kind"] == fw.kind.kind
    assert crd["spec"]["names"]["plural"] == fw.kind.plural
    assert [v["name"] for v in crd["spec"]["versions"]] == [fw.kind.version]


@pytest.mark.parametrize("fw", list(REGISTRY), ids=lambda fw: fw.name)
def test_readme_lists_the_framework(fw: Framework[Any]) -> None:
    readme = (ROOT / "README.md").read_text()
    row = (
        f"| {fw.name} | {fw.kind.api_version} {fw.kind.kind} | {', '.join(fw.targets)} "
        f"| {fw.operator}{' (legacy)' if fw.legacy else ''} |"
    )
    assert row in readme.splitlines()


def _crd_spec_schema(fw: Framework[Any]) -> dict[str, Any]:
    crd = load_crd(fw.crd_file)
    (version,) = crd["spec"]["versions"]
    spec: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside ``X | None``, ``dict[str, X]`` or ``list[X]``, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _differences(model: type[BaseModel], schema: dict[str, Any], path: str) -> list[str]:
    """Fields the CRD has and the model lacks (rejected input), and the reverse (pruned)."""
    if "additionalProperties" in schema and "properties" not in schema:
        schema = schema["additionalProperties"]  # a map of replica specs
    if schema.get("type") == "array":
        schema = schema["items"]
    crd_fields = set(schema.get("properties", {}))
    wire = {(info.alias or name): info for name, info in model.model_fields.items()}
    # An excluded field is never written: one the model refuses with its replacement
    # (TrainJob's v2.0/v2.1 podSpecOverrides …) need not be in the CRD.
    written = {key for key, info in wire.items() if not info.exclude}
    problems = [f"{path}.{f}: in the CRD, not in {model.__name__}" for f in crd_fields - set(wire)]
    problems += [f"{path}.{f}: in {model.__name__}, not in the CRD" for f in written - crd_fields]
    for name in sorted(crd_fields & set(wire)):
        sub = _model_of(wire[name].annotation)
        if sub is not None:
            problems += _differences(sub, schema["properties"][name], f"{path}.{name}")
    return sorted(problems)


@pytest.mark.parametrize("fw", list(REGISTRY), ids=lambda fw: fw.name)
def test_spec_model_has_exactly_the_crd_fields(fw: Framework[Any]) -> None:
    spec_model = _model_of(fw.model.model_fields["spec"].annotation)
    assert spec_model is not None
    assert _differences(spec_model, _crd_spec_schema(fw), "spec") == []


def test_a_framework_reads_the_model_its_base_is_parameterised_with() -> None:
    from trainjobs.frameworks.kubeflow_v1 import KubeflowV1Framework
    from trainjobs.frameworks.tensorflow import TensorFlow, TFJob

    assert TensorFlow().model is TFJob
    assert TensorFlow.kind == TFJob.kind_ref()

    class Renamed(TensorFlow):  # inherits the model, names nothing new
        name = "renamed"

    assert Renamed().model is TFJob
    assert "model" not in Renamed.__dict__
    with pytest.raises(TypeError, match=r"Bare has no model: parameterise its base"):

        class Bare(KubeflowV1Framework):  # type: ignore[type-arg]
            name = "bare"


def test_a_document_finds_its_framework_by_api_version_and_kind() -> None:
    tfjob = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "t"}}
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime"}
    assert REGISTRY.of_document(tfjob) is REGISTRY.named("tensorflow")
    assert REGISTRY.of_document(tfjob, defining=True) is None
    assert REGISTRY.of_document(runtime) is None
    assert REGISTRY.of_document(runtime, defining=True) is REGISTRY.named("trainjob")
    for body in ({"kind": "TFJob"}, {"apiVersion": "kubeflow.org/v1", "kind": 3}, {}):
        assert REGISTRY.of_document(body) is None
