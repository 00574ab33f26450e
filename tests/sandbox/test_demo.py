"""``make demo`` and ``make demo-down``: the Makefile's own recipe lines, run in a folder
of their own (its ``stacks`` the clone's), with the real programs and the real Pulumi.

Proves: the demo ends with the table of the stack's objects and every pod Running on
a sandbox node; a second ``make demo`` keeps the sandbox (same processes) and its
``pulumi up`` changes nothing; ``make demo-down`` leaves no process and no port behind
(listed before and after).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.processes import listening, processes_mentioning
from trainjobs.sandbox import PULUMI_BINARIES, binaries

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin"


def recipe(target: str) -> list[str]:
    """The shell lines of a Makefile target's recipe, $(BIN) made this venv's."""
    lines = (REPO / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    body = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        body.append(line[1:].lstrip("-@").replace("$(BIN)", str(VENV_BIN)))
    assert body, f"Makefile has no recipe for {target}"
    return body


def run(folder: Path, lines: list[str], *, ok_fail: bool = False) -> str:
    """Run recipe lines as make does (each a shell of its own; stop at the first failure)."""
    out = []
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    for line in lines:
        proc = subprocess.run(
            line, shell=True, cwd=folder, env=env, capture_output=True, text=True, timeout=900
        )
        out.append(proc.stdout)
        if proc.returncode != 0 and not ok_fail:
            raise AssertionError(f"$ {line}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return "".join(out)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    binaries()
    binaries(PULUMI_BINARIES)
    here = tmp_path_factory.mktemp("demo")
    (here / "stacks").symlink_to(REPO / "stacks")
    try:
        yield here
    finally:
        run(here, recipe("demo-down"), ok_fail=True)


def test_make_demo_then_again_then_down(folder: Path) -> None:
    began = time.monotonic()
    first = run(folder, recipe("demo"))
    cold = time.monotonic() - began
    table = first[first.index("KIND") :]
    for kind, name in [("TFJob", "tf-benchmarks"), ("Namespace", "training")]:
        assert re.search(rf"^{kind}\s+\S+\s+{name}\b", table, re.MULTILINE), table
    pods = [line.split() for line in table.splitlines() if line.startswith("Pod ")]
    # tf-mnist (chief, 2 workers, ps), pytorch-ddp (master, 3 workers): the stack's own
    # pods; tf-benchmarks' 4 workers: the Training Operator's.
    assert len(pods) == 12, table
    nodes = {f"sandbox-{i}" for i in range(4)}
    for pod in pods:
        assert pod[3] in nodes and pod[4] == "Running", pod
    assert any("TFJob tf-benchmarks" in line for line in table.splitlines()), table
    # The operators' namespace is the stack's sharedNamespaces: read, not made.
    assert re.search(r"^Namespace\s+-\s+kubeflow\s+read \(shared\)\s*$", table, re.M), table
    assert re.search(r"^Namespace\s+-\s+training\s+the stack\s*$", table, re.M), table
    assert "look further:" in first and "make demo-down" in first
    # Port 8080 stays free for make test's control plane: no MPI Operator, said in a note.
    assert "the MPI Operator is left out (--no-mpi-operator)" in first

    state = json.loads((folder / ".trainjobs/sandbox/state.json").read_text())
    assert "mpi-operator" not in {p["name"] for p in state["programs"]}
    began = time.monotonic()
    second = run(folder, recipe("demo"))
    warm = time.monotonic() - began
    assert "sandbox already running" in second
    assert json.loads((folder / ".trainjobs/sandbox/state.json").read_text()) == state
    print(f"make demo: first {cold:.0f}s, second {warm:.0f}s")
    assert warm < cold

    root = str(folder / ".trainjobs" / "sandbox")
    ports = sorted(state["ports"].values())
    assert processes_mentioning(root) and listening(ports) == ports
    down = run(folder, recipe("demo-down"))
    assert "sandbox down: stopped" in down
    assert processes_mentioning(root) == []
    assert listening(ports) == []
