"""The stack config schema (schema/stack-config.schema.json) and Pulumi.yaml's typed
config: generated from the parser's models, current, and as strict as the program."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
import yaml

from tests.support.paths import ROOT, stack_files
from trainjobs.components.config_schema import (
    SCHEMA_PATH,
    pulumi_config_types,
    stack_config_schema,
)


def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((ROOT / SCHEMA_PATH).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(doc: Any) -> list[str]:
    return sorted("/".join(str(p) for p in e.absolute_path) for e in _validator().iter_errors(doc))


def test_the_schema_file_is_current() -> None:
    """Regenerate with: python -m trainjobs.components.config_schema"""
    assert json.loads((ROOT / SCHEMA_PATH).read_text()) == stack_config_schema()


def test_pulumi_yaml_declares_every_setting_typed() -> None:
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    assert project["config"] == pulumi_config_types(project["name"])


@pytest.mark.parametrize("path", stack_files(), ids=lambda p: p.stem)
def test_every_stack_file_is_valid_and_names_the_schema(path: Any) -> None:
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=../schema/stack-config.schema.json")
    assert _errors(yaml.safe_load(text)) == []


def _stack(**config: Any) -> dict[str, Any]:
    return {"config": config}


def test_the_schema_refuses_what_the_program_refuses() -> None:
    job = {"file": "../examples/tf-mnist/tfjob.yaml"}
    assert _errors(_stack(**{"trainjobs:jobs": [job]})) == []
    # A misspelt setting; another provider's settings pass.
    assert _errors(_stack(**{"trainjobs:job": [job], "kubernetes:context": "kind"})) == ["config"]
    # A misspelt job option, and an unknown target.
    bad_options = {**job, "trainjobs": {"targt": "pods"}}
    assert _errors(_stack(**{"trainjobs:jobs": [bad_options]})) == ["config/trainjobs:jobs/0"]
    assert _errors(_stack(**{"trainjobs:target": "kubectl"})) == ["config/trainjobs:target"]
    # An unquoted version is a number.
    assert _errors(_stack(**{"trainjobs:k8sVersion": 1.3})) == ["config/trainjobs:k8sVersion"]
    # A platform resource's spec is checked by its own model.
    redis = {"kind": "RedisBackend", "metadata": {"name": "r"}, "spec": {"pasword": True}}
    assert _errors(_stack(**{"trainjobs:backends": [redis]})) == ["config/trainjobs:backends/0"]
    good = {"kind": "RedisBackend", "metadata": {"name": "r"}, "spec": {"password": True}}
    assert _errors(_stack(**{"trainjobs:backends": [good]})) == []
