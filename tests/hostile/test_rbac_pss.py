"""Hostile and careless operator stacks: refused with the field path and a fix.

Each case is a stack a user could write when installing an operator (a kind the
release does not run, an RBAC or Pod Security mode that does not exist, a level
looser than any the check knows); each must end in exit 2 with the offending field
and a way out, no traceback, bounded cost, and no file of the user's touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.hostile.harness import TreeState, assert_refused, run_cli

OPERATOR = {"apiVersion": "trainjobs.dev/v1alpha1", "metadata": {"name": "op"}}


def _stack(tmp_path: Path, config: dict[str, Any]) -> Path:
    path = tmp_path / "Pulumi.hostile.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return path


def _operator(kind: str, spec: Any) -> dict[str, Any]:
    return {"trainjobs:operators": [{**OPERATOR, "kind": kind, "spec": spec}]}


CASES: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "kind the release does not run": (
        _operator("TrainingOperator", {"enabledSchemes": ["Caffe2Job"]}),
        ("operators[0].spec.enabledSchemes[0]", "Caffe2Job", "fix:"),
    ),
    "MXJob on v1.9.4": (
        _operator("TrainingOperator", {"enabledSchemes": ["TFJob", "MXJob"]}),
        ("operators[0].spec.enabledSchemes[1]", "version: v1.8.1"),
    ),
    "no kind at all": (
        _operator("TrainingOperator", {"enabledSchemes": []}),
        ("operators[0].spec.enabledSchemes", "fix:"),
    ),
    "schemes as one string": (
        _operator("TrainingOperator", {"enabledSchemes": "TFJob"}),
        ("operators[0].spec.enabledSchemes", "fix:"),
    ),
    "rbac mode that does not exist": (
        _operator("TrainingOperator", {"rbac": "cluster-admin"}),
        ("operators[0].spec.rbac", "least-privilege", "upstream"),
    ),
    "rbac wildcard on MPIOperator": (
        _operator("MPIOperator", {"rbac": "*"}),
        ("operators[0].spec.rbac", "least-privilege"),
    ),
    "rbac as a list of rules": (
        _operator("MPIOperator", {"rbac": [{"apiGroups": ["*"], "verbs": ["*"]}]}),
        ("operators[0].spec.rbac", "fix:"),
    ),
    "pod security mode that does not exist": (
        _operator("TrainingOperator", {"podSecurity": "privileged"}),
        ("operators[0].spec.podSecurity", "restricted", "upstream"),
    ),
    "pod security on JobSet as a bool": (
        _operator("JobSet", {"podSecurity": False}),
        ("operators[0].spec.podSecurity", "fix:"),
    ),
    "release that does not exist": (
        _operator("TrainingOperator", {"version": "v1.10.0"}),
        ("operators[0].spec.version", "v1.9.4"),
    ),
    "unknown operator field": (
        _operator("TrainingOperator", {"clusterAdmin": True}),
        ("operators[0].spec.clusterAdmin", "fix:"),
    ),
    "stack level looser than the check knows": (
        {"trainjobs:podSecurity": "privileged"},
        ("trainjobs:podSecurity", "baseline", "restricted"),
    ),
    "stack level of the wrong type": (
        {"trainjobs:podSecurity": ["restricted"]},
        ("trainjobs:podSecurity", "fix:"),
    ),
    "operator namespace that is not a DNS label": (
        {
            "trainjobs:operators": [
                {
                    **OPERATOR,
                    "kind": "TrainingOperator",
                    "metadata": {"name": "op", "namespace": "Kube_Flow"},
                }
            ]
        },
        ("operators[0].metadata.namespace", "Kube_Flow", "fix:"),
    ),
    "gang scheduler of the wrong type": (
        _operator("TrainingOperator", {"gangScheduler": {"name": "volcano"}}),
        ("operators[0].spec.gangScheduler", "fix:"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_operator_stack_is_refused(case: str, tmp_path: Path) -> None:
    config, fragments = CASES[case]
    stack = _stack(tmp_path, config)
    (tmp_path / "notes.txt").write_text("the user's own file\n")
    before = TreeState.of(tmp_path)
    for command in (["check", stack.name], ["render", stack.name, "-o", "out"]):
        outcome = run_cli(command, tmp_path)
        assert_refused(outcome, *fragments)
        assert "None" not in outcome.stderr
    assert before.changes(TreeState.of(tmp_path)) == []
