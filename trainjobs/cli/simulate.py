"""``trainjobs simulate STACK``: the stack's jobs on a throwaway sandbox of its node pools."""

from __future__ import annotations

import argparse
import sys

from trainjobs.cli.common import EXIT_OK
from trainjobs.errors import TrainjobsError

__all__ = ["EXIT_WOULD_NOT_START", "cmd_simulate", "simulate_options"]

EXIT_WOULD_NOT_START = 1


def cmd_simulate(args: argparse.Namespace) -> int:
    """run the stack on a throwaway sandbox; exit 1 when a job would not start

    Starts a throwaway sandbox with kwok nodes shaped like the stack's GpuNodePools
    (maxNodes of each), applies what the stack makes, lets the real scheduler and
    operators act for a bounded time, and reports per job whether it started, each pod's
    node or the scheduler's reason for leaving it Pending, and where that differs from
    `trainjobs check`. Exit 0 when every job starts, 1 when one would not, 2 bad input.
    """
    from trainjobs.sandbox.simulate import simulate, write_report

    if args.seconds <= 0 or args.seconds > 600:
        raise TrainjobsError(f"--seconds {args.seconds}: must be above 0 and at most 600")
    report = simulate(args.stack, seconds=args.seconds, progress=sys.stderr)
    if args.json:
        print(report.json())
    else:
        write_report(report, sys.stdout)
    return EXIT_OK if report.ok else EXIT_WOULD_NOT_START


def simulate_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("stack", metavar="STACK", help="a stack file, e.g. stacks/Pulumi.gpu.yaml")
    parser.add_argument("--json", action="store_true", help="print the report as JSON (for CI)")
    parser.add_argument(
        "--seconds",
        type=float,
        default=30.0,
        help="how long the scheduler and operators may act (default 30, at most 600)",
    )
