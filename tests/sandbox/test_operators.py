"""Which operators the sandbox runs for a stack: its own installs, else the built-in ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainjobs.render import render
from trainjobs.sandbox.installs import TRAINING_OPERATOR_SCHEMES
from trainjobs.sandbox.operators import PINNED, OperatorRun, Operators, operators_from
from trainjobs.spec import load_path, parse_documents

REPO = Path(__file__).resolve().parents[2]
PLATFORM = Path(__file__).parent / "stacks" / "Pulumi.simulate-platform.yaml"


def test_a_stack_without_operators_gets_the_built_in_ones() -> None:
    stack = load_path(REPO / "stacks" / "Pulumi.demo.yaml")
    assert operators_from(stack.platform, render(stack)) == Operators()
    assert Operators().training_operator == OperatorRun(
        "kubeflow", tuple(f"--enable-scheme={s}" for s in TRAINING_OPERATOR_SCHEMES)
    )


def test_the_stacks_training_operator_replaces_the_built_in_one() -> None:
    stack = load_path(PLATFORM)
    operators = operators_from(stack.platform, render(stack))
    run = operators.training_operator
    assert run is not None
    assert run.namespace == "ml-ops"
    assert run.args == ("--enable-scheme=tfjob",)
    assert run.source == "operators[0] TrainingOperator 'training-operator'"
    (hook,) = run.webhooks
    assert hook["metadata"]["name"] == "validator.training-operator.kubeflow.org"
    assert hook["webhooks"][0]["clientConfig"]["service"]["namespace"] == "ml-ops"
    assert operators.webhook_names == {"validator.training-operator.kubeflow.org"}
    # The kinds the stack does not install stay built-in.
    assert operators.mpi_operator == Operators().mpi_operator
    assert operators.trainer == Operators().trainer
    assert operators.notes == ()


def _operator(kind: str, spec: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": kind,
        "metadata": {"name": "op"},
        "spec": spec,
    }


def test_other_versions_gang_flags_and_unbuilt_operators_are_said() -> None:
    docs = [
        _operator("TrainingOperator", {"version": "v1.8.1", "gangScheduler": "volcano"}),
        _operator("MPIOperator", {"gangScheduler": "volcano"}),
        _operator("Caffe2Operator", {"image": "registry.example/caffe2-operator:3773f5b"}),
    ]
    operators = operators_from(parse_documents(docs, source="<test>").platform)
    run = operators.training_operator
    assert run is not None
    assert "--gang-scheduler-name=volcano" in run.args
    assert "--enable-scheme=mpijob" not in run.args
    assert operators.mpi_operator is not None
    assert operators.mpi_operator.args == ("--gang-scheduling=volcano",)
    notes = "\n".join(operators.notes)
    assert "asks for v1.8.1; the sandbox runs v1.9.4" in notes
    assert "MPIJob v1 is not run by the Training Operator here" in notes
    assert "Caffe2Operator 'op': the sandbox has no program of it" in notes


def test_a_training_operator_of_mpijob_only_beside_an_mpi_operator_is_not_run() -> None:
    """Its only kind is served by the stack's MPI Operator; running it without a scheme
    would run all."""
    docs = [
        _operator("TrainingOperator", {"enabledSchemes": ["MPIJob"]}),
        _operator("MPIOperator", {}),
    ]
    operators = operators_from(parse_documents(docs, source="<test>").platform)
    assert operators.training_operator is None
    assert operators.mpi_operator is not None
    assert operators.mpijob_crd == "mpi-operator-v0.8/kubeflow.org_mpijobs.yaml"
    assert any("runs no other kind" in n for n in operators.notes), operators.notes


@pytest.mark.parametrize("schemes", [["MPIJob"], ["TFJob", "MPIJob"], None])
def test_a_training_operator_running_mpijob_v1_without_an_mpi_operator(
    schemes: list[str] | None,
) -> None:
    """As in the cluster the stack describes: MPIJob v1 from the Training Operator, its
    v1 CRD for mpijobs.kubeflow.org, and no MPI Operator (the same CRD name)."""
    spec: dict[str, object] = {} if schemes is None else {"enabledSchemes": schemes}
    operators = operators_from(
        parse_documents([_operator("TrainingOperator", spec)], source="<test>").platform
    )
    run = operators.training_operator
    assert run is not None and run.runs_mpijob_v1
    assert "--enable-scheme=mpijob" in run.args
    assert operators.mpi_operator is None
    assert operators.mpijob_crd == "training-operator-v1.9.4/kubeflow.org_mpijobs.yaml"
    assert any("runs MPIJob v1 (kubeflow.org/v1)" in n for n in operators.notes)


def test_the_built_in_operators_serve_mpijob_v2beta1() -> None:
    built_in = Operators()
    assert built_in.mpijob_crd == "mpi-operator-v0.8/kubeflow.org_mpijobs.yaml"
    assert built_in.training_operator is not None
    assert not built_in.training_operator.runs_mpijob_v1


def test_pinned_operator_releases_are_the_builds() -> None:
    """The releases the sandbox names are the ones tests/cluster/versions.env builds
    (one place pins versions; this keeps the sandbox's copy equal to it)."""
    env = dict(
        line.split("=", 1)
        for line in (REPO / "tests" / "cluster" / "versions.env").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    keys = {
        "TrainingOperator": "TRAINING_OPERATOR_VERSION",
        "MPIOperator": "MPI_OPERATOR_VERSION",
        "JobSet": "JOBSET_VERSION",
        "Trainer": "TRAINER_VERSION",
    }
    assert {kind: env[key].strip() for kind, key in keys.items()} == PINNED
