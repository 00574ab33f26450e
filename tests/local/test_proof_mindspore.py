"""MindSpore (CPU) under run-local: the 2022 MSJob's scheduler and 2 workers form a
dynamic cluster from MS_ROLE/MS_SCHED_HOST/MS_SCHED_PORT/MS_WORKER_NUM and all-reduce.

MindSpore 2.10 needs protobuf >= 7.34, which the Pulumi SDK forbids beside it, so
`make proof-deps` gives it a venv of its own; the job's `python` comes from there.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from tests.local.proofs import results
from tests.support.paths import EXAMPLES, ROOT
from trainjobs.local import run_local

pytestmark = pytest.mark.proof
MS_BIN = ROOT / ".venv-mindspore" / "bin"


def test_scheduler_and_workers_form_a_cluster_and_all_reduce() -> None:
    if not (MS_BIN / "python").exists():
        pytest.fail(f"{MS_BIN.parent} is missing: run `make proof-deps` (make test does)")
    # The job's `python` is MindSpore's; trainjobs' own folder follows for its helpers.
    # (run-local puts trainjobs' folder first only when PATH lacks it.)
    path = [str(MS_BIN), str(Path(sys.executable).parent), os.environ["PATH"]]
    environ = {**os.environ, "PATH": os.pathsep.join(path)}
    out, err = io.StringIO(), io.StringIO()
    outcome = run_local(
        EXAMPLES / "local-mindspore" / "msjob.yaml", timeout=150, out=out, err=err, environ=environ
    )
    assert outcome.code == 0, err.getvalue() + out.getvalue()
    assert outcome.message == "job succeeded: Worker 0 succeeds"
    found = results(out.getvalue())
    assert sorted(found) == ["local-ms-worker-0", "local-ms-worker-1"]
    assert sorted(r["rank"] for r in found.values()) == [0, 1]
    for name, result in found.items():
        assert (result["size"], result["sum"]) == (2, 3.0)
        assert result["node"] == name  # MS_NODE_ID from the fieldRef metadata.name
        # Workers read MS_SCHED_HOST from the scheduler Service's environment variable.
        assert result["scheduler"] == "127.0.0.2:2222"
