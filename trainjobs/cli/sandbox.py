"""``trainjobs sandbox up|down|status|kubeconfig|deploy|destroy``: this folder's local cluster."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from trainjobs.cli.common import EXIT_BAD_INPUT, EXIT_OK
from trainjobs.errors import TrainjobsError
from trainjobs.output import format_table

__all__ = ["cmd_sandbox", "sandbox_options"]

NO_MPI_OPERATOR_ASKED = (
    "the MPI Operator is left out (--no-mpi-operator): MPIJobs stay unreconciled"
)


def cmd_sandbox(args: argparse.Namespace) -> int:
    """a local Kubernetes cluster of real programs, to pulumi up onto

    One per folder (state in .trainjobs/sandbox): etcd, kube-apiserver, controller-manager,
    scheduler, kwok nodes and the Training Operator, MPI Operator, JobSet and Trainer, on
    loopback, built from the pinned versions (once per machine) or named by
    TRAINJOBS_BIN_<NAME>. `up` starts it (`--nodes-from STACK`: nodes shaped like the
    stack's pools; `--operators-from STACK`: the operators the stack installs, where and as
    it declares them), `down` stops it (no process or port left),
    `status` says whether it runs, `kubeconfig` prints its kubeconfig's path; `deploy
    STACK` runs `pulumi up` of a stack onto it and prints what runs where, `destroy
    STACK` undoes that.
    """
    raise TrainjobsError("sandbox needs an action: up, down, status, kubeconfig, deploy or destroy")


def sandbox_options(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    up = actions.add_parser("up", help="start this folder's sandbox")
    up.add_argument(
        "--nodes-from",
        metavar="STACK",
        help="kwok nodes shaped like the stack's GpuNodePools (labels, taints, GPUs, cpu, "
        "memory; maxNodes of each) instead of the 4 default nodes",
    )
    up.add_argument(
        "--operators-from",
        metavar="STACK",
        help="run the operators the stack installs where and as it declares them (namespace, "
        "job kinds, gang scheduler, its webhooks; the pinned versions); the built-in ones for "
        "the kinds it does not install",
    )
    up.add_argument(
        "--no-mpi-operator",
        action="store_true",
        help="leave the MPI Operator out (MPIJobs stay unreconciled): it always binds port "
        "8080, one per machine, and `make test`'s control plane needs that port",
    )
    up.add_argument(
        "--from-path",
        action="store_true",
        help="take programs that are not built from PATH (e.g. your own kwok or kube-apiserver)",
    )
    up.add_argument(
        "--no-build", action="store_true", help="fail instead of building missing programs"
    )
    up.add_argument(
        "--reuse",
        action="store_true",
        help="when the sandbox already runs, say so and exit 0 (default: exit 2)",
    )
    up.set_defaults(func=_up)
    down = actions.add_parser("down", help="stop this folder's sandbox and remove its state")
    down.set_defaults(func=_down)
    status = actions.add_parser("status", help="whether this folder's sandbox runs")
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    status.set_defaults(func=_status)
    kubeconfig = actions.add_parser("kubeconfig", help="print the path of the sandbox's kubeconfig")
    kubeconfig.set_defaults(func=_kubeconfig)
    deploy = actions.add_parser(
        "deploy",
        help="pulumi up STACK onto the sandbox, then print its objects and where each pod runs",
    )
    deploy.add_argument("stack", metavar="STACK", help="a stack file, e.g. stacks/Pulumi.demo.yaml")
    deploy.set_defaults(func=_deploy)
    destroy = actions.add_parser("destroy", help="pulumi destroy STACK from the sandbox")
    destroy.add_argument("stack", metavar="STACK")
    destroy.set_defaults(func=_destroy)


def _up(args: argparse.Namespace) -> int:
    from trainjobs.sandbox import AlreadyRunning, Sandbox
    from trainjobs.sandbox.nodes import default_nodes, stack_nodes
    from trainjobs.sandbox.operators import Operators, stack_operators

    sandbox = Sandbox()
    nodes = stack_nodes(args.nodes_from) if args.nodes_from else default_nodes()
    operators = stack_operators(args.operators_from) if args.operators_from else Operators()
    if args.no_mpi_operator:
        operators = dataclasses.replace(
            operators,
            mpi_operator=None,
            notes=(*operators.notes, NO_MPI_OPERATOR_ASKED),
        )
    try:
        state = sandbox.up(
            nodes=nodes,
            operators=operators,
            from_path=args.from_path,
            build=not args.no_build,
            progress=sys.stderr,
        )
    except AlreadyRunning as exc:
        if args.reuse:
            print(f"sandbox already running: {sandbox.kubeconfig}")
            return EXIT_OK
        raise TrainjobsError(str(exc)) from None
    print(f"sandbox up in {state.started_in:.1f}s")
    rows = [
        ("context", state.context),
        ("kubeconfig", _shown(Path(state.kubeconfig))),
        ("nodes", _nodes_line(nodes)),
        ("programs", ", ".join(p.name for p in state.programs)),
        *(("operator", line) for line in operators.described({p.name for p in state.programs})),
    ]
    print(format_table(rows))
    for note in (*operators.notes, *state.notes):
        print(f"note: {note}")
    print(
        f"next: kubectl --kubeconfig {_shown(sandbox.kubeconfig)} get nodes; "
        "`trainjobs sandbox down` stops it"
    )
    return EXIT_OK


def _nodes_line(nodes: list[dict[str, object]]) -> str:
    from collections import Counter

    shapes: Counter[str] = Counter()
    for node in nodes:
        status = node["status"]
        assert isinstance(status, dict)
        cap = status["capacity"]
        shapes[f"{cap['cpu']} cpu, {cap['memory']}, {cap.get('nvidia.com/gpu', '0')} GPU"] += 1
    return "; ".join(f"{n} x {shape}" for shape, n in shapes.items())


def _shown(path: Path) -> str:
    """``path`` relative to the current folder when below it (shorter to copy)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _down(args: argparse.Namespace) -> int:
    from trainjobs.sandbox import Sandbox

    stopped = Sandbox().down()
    if stopped:
        print(f"sandbox down: stopped {', '.join(stopped)}")
    else:
        print("no sandbox was running here; nothing to stop")
    return EXIT_OK


def _status(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from trainjobs.sandbox import Sandbox

    sandbox = Sandbox()
    status = sandbox.status()
    if args.json:
        doc = {
            "state": status.state,
            "exited": list(status.exited),
            "sandbox": asdict(status.recorded) if status.recorded else None,
        }
        print(json.dumps(doc, indent=2, sort_keys=True))
    elif status.recorded is None or status.state == "stopped":
        print(f"stopped: no sandbox runs in {sandbox.folder}")
    else:
        rec = status.recorded
        print(f"{status.state}: since {rec.started_at}, context {rec.context}")
        print(f"kubeconfig {_shown(Path(rec.kubeconfig))}")
        rows = [("PROGRAM", "PID", "STATE", "LOG")]
        rows += [
            (p.name, str(p.pid), "exited" if p.name in status.exited else "running", p.log)
            for p in rec.programs
        ]
        print(format_table(rows))
        for note in rec.notes:
            print(f"note: {note}")
    return EXIT_OK if status.state == "running" else EXIT_BAD_INPUT


def _kubeconfig(args: argparse.Namespace) -> int:
    from trainjobs.sandbox import NotRunning, Sandbox

    sandbox = Sandbox()
    if sandbox.status().state == "stopped":
        raise NotRunning(f"no sandbox runs in {sandbox.folder}; `trainjobs sandbox up` starts one")
    print(sandbox.kubeconfig)
    return EXIT_OK


def _deploy(args: argparse.Namespace) -> int:
    from trainjobs.sandbox.deploy import deploy

    return deploy(Path(args.stack), out=sys.stdout, progress=sys.stderr)


def _destroy(args: argparse.Namespace) -> int:
    from trainjobs.sandbox.deploy import destroy

    return destroy(Path(args.stack), progress=sys.stderr)
