"""The provider's schema: committed, generated from the models, typed where they are."""

from __future__ import annotations

import json
from typing import Any

from tests.support.paths import ROOT
from trainjobs.frameworks import REGISTRY
from trainjobs.platform import PLATFORM
from trainjobs.provider.schema import SCHEMA_PATH, package_schema, schema_text, token


def _schema() -> dict[str, Any]:
    return package_schema()


def _type(name: str) -> dict[str, Any]:
    found: dict[str, Any] = _schema()["types"][token(name)]
    return found


def test_the_committed_schema_is_what_the_models_generate() -> None:
    committed = (ROOT / SCHEMA_PATH).read_text()
    assert committed == schema_text(), (
        f"{SCHEMA_PATH} is stale: run `python -m trainjobs.provider.schema` and commit it"
    )


def test_every_job_kind_is_a_typed_choice_of_a_training_job() -> None:
    job = _schema()["resources"][token("TrainingJob")]["inputProperties"]["job"]
    kinds = set()
    for choice in job["oneOf"]:
        found = _type(choice["$ref"].rsplit(":", 1)[-1])
        assert {"apiVersion", "kind", "metadata", "spec"} <= set(found["required"])
        props = found["properties"]
        kinds.add((props["apiVersion"]["const"], props["kind"]["const"]))
    # Every kind at every apiVersion (MPIJob v1 and v2beta1 are two choices).
    assert kinds == {(f.kind.api_version, f.kind.kind) for f in REGISTRY}


def test_replica_specs_elastic_policy_and_the_trainer_are_object_types() -> None:
    replicas = _type("TFJobSpec")["properties"]["tfReplicaSpecs"]
    assert replicas["additionalProperties"] == {"$ref": f"#/types/{token('ReplicaSpec')}"}
    replica = _type("ReplicaSpec")
    assert replica["required"] == ["template"]
    assert replica["properties"]["replicas"]["type"] == "integer"
    assert "Number of pods" in replica["properties"]["replicas"]["description"]
    policy = _type("PyTorchJobSpec")["properties"]["elasticPolicy"]
    assert policy["$ref"] == f"#/types/{token('ElasticPolicy')}"
    assert _type("ElasticPolicy")["properties"]["maxReplicas"]["type"] == "integer"
    trainer = _type("TrainJobSpec")["properties"]["trainer"]["$ref"].rsplit(":", 1)[-1]
    assert "numNodes" in _type(trainer)["properties"]


def test_fixed_choices_are_enums() -> None:
    restart = _type("ReplicaSpec")["properties"]["restartPolicy"]["$ref"].rsplit(":", 1)[-1]
    values = [v["value"] for v in _type(restart)["enum"]]
    assert values == ["Always", "OnFailure", "Never", "ExitCode"]
    target = _schema()["resources"][token("TrainingJob")]["inputProperties"]["target"]
    enum = _type(target["$ref"].rsplit(":", 1)[-1])
    assert [v["value"] for v in enum["enum"]] == ["operator", "pods", "trainer", "jobset"]


def test_every_platform_kind_is_a_component_with_its_typed_spec() -> None:
    resources = _schema()["resources"]
    for plugin in PLATFORM:
        resource = resources[token(plugin.kind)]
        assert resource["isComponent"] is True
        ref = resource["inputProperties"]["spec"]["$ref"]
        assert ref.startswith("#/types/trainjobs:index:") and ref.endswith("Spec")
    redis = resources[token("RedisBackend")]["inputProperties"]
    assert redis["password"]["secret"] is True
    assert set(resources) >= {token("TrainingJob"), token("Stack")}


def test_no_type_shares_a_resource_token_and_every_reference_resolves() -> None:
    schema = _schema()
    assert not set(schema["types"]) & set(schema["resources"])
    text = json.dumps(schema)
    refs = {part.split('"', 1)[0] for part in text.split('"$ref": "')[1:]}
    for ref in refs:
        if ref.startswith("#/types/"):
            assert ref.removeprefix("#/types/") in schema["types"], ref
        elif ref.startswith("#/resources/"):
            assert ref.removeprefix("#/resources/") in schema["resources"], ref
        else:
            assert ref == "pulumi.json#/Any", ref
