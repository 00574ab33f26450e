"""``trainjobs sandbox up --operators-from STACK`` with the real programs: the Training
Operator the stack installs runs where the stack installs it, with its job kinds.

tests/sandbox/stacks/Pulumi.simulate-platform.yaml installs it in namespace ml-ops with
TFJob only. Proves, on the running sandbox: ``up`` names it; the operator process runs
in ml-ops (its environment) with only ``--enable-scheme=tfjob`` (its command line); its
webhook Secret is in ml-ops and the webhook configuration registered is the stack's, by
URL; the MPI Operator, JobSet and Trainer are the built-in ones; ``down`` leaves no
process behind.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.processes import processes_mentioning
from tests.sandbox.test_sandbox_cli import trainjobs
from trainjobs.sandbox import binaries

pytestmark = pytest.mark.cluster

STACK = Path(__file__).parent / "stacks" / "Pulumi.simulate-platform.yaml"


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    binaries()
    here = tmp_path_factory.mktemp("sandbox-operators")
    done = trainjobs(here, "sandbox", "up", "--operators-from", str(STACK))
    try:
        assert done.returncode == 0, done.stderr
        yield here, done.stdout
    finally:
        trainjobs(here, "sandbox", "down")
        assert processes_mentioning(str(here)) == []


def _program(folder: Path, name: str) -> dict[str, Any]:
    state = json.loads((folder / ".trainjobs/sandbox/state.json").read_text())
    (program,) = [p for p in state["programs"] if p["name"] == name]
    return dict(program)


def _proc(pid: int, what: str) -> list[str]:
    return Path(f"/proc/{pid}/{what}").read_bytes().decode().split("\0")


def test_up_names_the_stacks_operator_and_the_built_in_ones(up: tuple[Path, str]) -> None:
    _, out = up
    assert "training-operator in namespace ml-ops (operators[0] TrainingOperator" in out, out
    # The MPI Operator binds port 8080 on every address: when the test session's own
    # control plane runs one, the sandbox says why it has none instead of naming it.
    built_in = "mpi-operator in namespace mpi-operator (built-in)" in out
    port_taken = "the MPI Operator is not running: port 8080" in out
    assert built_in != port_taken, out
    assert "trainer-controller-manager in namespace kubeflow-system (built-in)" in out, out


def test_the_training_operator_runs_in_the_stacks_namespace_with_its_kinds(
    up: tuple[Path, str],
) -> None:
    folder, _ = up
    pid = _program(folder, "training-operator")["pid"]
    assert "MY_POD_NAMESPACE=ml-ops" in _proc(pid, "environ")
    schemes = [a for a in _proc(pid, "cmdline") if a.startswith("--enable-scheme")]
    assert schemes == ["--enable-scheme=tfjob"]


def test_its_webhook_secret_and_configuration_are_the_stacks(up: tuple[Path, str]) -> None:
    folder, _ = up
    kubeconfig = trainjobs(folder, "sandbox", "kubeconfig").stdout.strip()
    kubectl = json.loads((folder / ".trainjobs/sandbox/state.json").read_text())["binaries"][
        "kubectl"
    ]

    def get(*args: str) -> dict[str, Any]:
        out = subprocess.run(
            [kubectl, f"--kubeconfig={kubeconfig}", "get", *args, "-o", "json"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        found: dict[str, Any] = json.loads(out.stdout)
        return found

    assert get("secret", "-n", "ml-ops", "training-operator-webhook-cert")["data"]["tls.crt"]
    config = get("validatingwebhookconfiguration", "validator.training-operator.kubeflow.org")
    # The stack enables TFJob only: one webhook, TFJob's, reached by URL on loopback.
    (hook,) = config["webhooks"]
    assert hook["rules"][0]["resources"] == ["tfjobs"]
    assert hook["clientConfig"]["url"].startswith("https://127.0.0.1:")
