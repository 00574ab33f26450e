"""An MPIJob (v2beta1) under run-local: mpirun in the launcher reaches 2 workers through
run-local's ssh agent, with the rendered hostfile, and mpi4py's allreduce adds up."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.local.proofs import require, results, run_example
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.proof


def test_mpirun_allreduces_across_both_workers() -> None:
    require("mpi4py", "numpy")
    assert shutil.which("mpirun"), "mpirun is missing: run `make proof-deps` (make test does)"
    outcome, out, err = run_example(EXAMPLES / "local-mpi" / "mpijob.yaml", timeout=90)
    assert outcome.code == 0, err + out
    assert outcome.message == "job succeeded: the Launcher succeeds"
    # The ranks' output reaches mpirun, so it is the launcher's.
    ranks = [
        r
        for line in out.splitlines()
        if line.startswith("local-allreduce-launcher |")
        for r in results(line).values()
    ]
    assert sorted(r["rank"] for r in ranks) == [0, 1]
    assert all(r["size"] == 2 and r["sum"] == 3 for r in ranks)
    assert all(r["vector"] == [1.0, 2.0, 2.0] for r in ranks)
    # Each rank ran in its worker's environment (fieldRef metadata.name, K_MPI_JOB_ROLE).
    assert {(r["worker"], r["role"]) for r in ranks} == {
        ("local-allreduce-worker-0", "worker"),
        ("local-allreduce-worker-1", "worker"),
    }
    assert "local-allreduce-worker-0  127.0.0.3" in err


def test_the_training_operators_mpijob_v1_uses_the_same_agent(tmp_path: Path) -> None:
    """MPIJob kubeflow.org/v1 points mpirun at kubexec.sh (kubectl exec); run-local's agent
    takes its place, and the launcher reaches workers by their bare pod names."""
    require("mpi4py", "numpy")
    shutil.copy(EXAMPLES / "local-mpi" / "allreduce.py", tmp_path)
    text = (EXAMPLES / "local-mpi" / "mpijob.yaml").read_text()
    text = text.replace("kubeflow.org/v2beta1", "kubeflow.org/v1").replace(
        "  slotsPerWorker: 1\n", ""
    )
    (tmp_path / "mpijob.yaml").write_text(text)
    outcome, out, err = run_example(tmp_path / "mpijob.yaml", timeout=90)
    assert outcome.code == 0, err + out
    ranks = [r for line in out.splitlines() for r in results(line).values()]
    assert sorted((r["rank"], r["sum"], r["worker"]) for r in ranks) == [
        (0, 3, "local-allreduce-worker-0"),
        (1, 3, "local-allreduce-worker-1"),
    ]
