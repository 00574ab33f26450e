"""What run-local prints: the plan, prefixed output, status tables, and never a secret."""

from __future__ import annotations

import io
from pathlib import Path

from trainjobs.local.hosts import HostMap
from trainjobs.local.plan import LocalPlan, ProcessSpec
from trainjobs.local.ui import Console, StatusRow
from trainjobs.plan import Replica, RunRules, SuccessPolicy


def _plan() -> LocalPlan:
    chief = ProcessSpec(
        replica=Replica("Chief", 0, "mnist-chief-0", "Never"),
        address="127.0.0.2",
        container="tensorflow",
        image="tf:1",
        argv=("python", "train.py", "--token=hunter22"),
        env={},
        cwd=Path("."),
        ports=((2222, 2222),),
        skipped=("init-data",),
        secrets=frozenset({"hunter22", "no"}),
    )
    worker = ProcessSpec(
        replica=Replica("Worker", 0, "mnist-worker-0", "OnFailure"),
        address="127.0.0.3",
        container="tensorflow",
        image="tf:1",
        argv=("python", "train.py"),
        env={},
        cwd=Path("."),
        ports=((2222, 2223),),
    )
    lifecycle = RunRules(
        (chief.replica, worker.replica), SuccessPolicy(("Chief",), summary="the Chief succeeds"), 3
    )
    return LocalPlan(
        "TFJob kubeflow/mnist", (chief, worker), (), HostMap({}, {}), lifecycle, Path(".")
    )


def test_header_output_and_status() -> None:
    out, err = io.StringIO(), io.StringIO()
    console = Console(out, err)
    console.header(_plan())
    console.log("mnist-worker-0", "step 1, token hunter22, answer no\n")
    console.status(
        [
            StatusRow("mnist-chief-0", 41, "succeeded", 0, 0),
            StatusRow("mnist-worker-0", None, "restarting", 2),
        ]
    )
    console.message("job succeeded: the Chief succeeds")
    # Secrets shorter than four characters are not hidden: that would hide ordinary words.
    assert out.getvalue() == "mnist-worker-0 | step 1, token <redacted>, answer no\n"
    assert err.getvalue().splitlines() == [
        "run-local: TFJob kubeflow/mnist, 2 replicas; succeeds when the Chief succeeds",
        "  images (not pulled; commands run on this machine): tf:1",
        "  REPLICA         ADDRESS    PORTS       RESTART    COMMAND",
        "  mnist-chief-0   127.0.0.2  2222        Never      python train.py --token=<redacted>",
        "  mnist-worker-0  127.0.0.3  2222->2223  OnFailure  python train.py",
        "  runner env (the container's own env wins): GLOO_SOCKET_IFNAME=lo "
        "OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo PYTHONUNBUFFERED=1; "
        "TMPDIR a folder of each replica's own (a pod's /tmp)",
        "  backoffLimit: 3 restarts in all",
        "  not run (init and extra containers): init-data",
        "REPLICA         PID  STATE               RESTARTS",
        "mnist-chief-0   41   succeeded (exit 0)  0",
        "mnist-worker-0  -    restarting          2",
        "run-local: job succeeded: the Chief succeeds",
    ]


def test_colours_only_when_asked() -> None:
    out = io.StringIO()
    console = Console(out, io.StringIO(), color=True)
    console.header(_plan())
    console.log("mnist-chief-0", "hi")
    assert out.getvalue() == "\x1b[36mmnist-chief-0 \x1b[0m | hi\n"
