"""The operator's rules on real processes: success policy, restarts, backoff, timeout."""

from __future__ import annotations

import io
import re
import sys
from dataclasses import replace
from pathlib import Path

from trainjobs.local.hosts import HostMap
from trainjobs.local.plan import LocalPlan, ProcessSpec
from trainjobs.local.supervisor import Outcome, Supervisor
from trainjobs.local.ui import Console
from trainjobs.plan import Replica, ReplicaRestartPolicy, RunRules, SuccessPolicy

FOREVER = "import time; print('serving', flush=True); time.sleep(60)"


def _process(
    role: str, index: int, code: str, policy: ReplicaRestartPolicy = "Never", cwd: Path = Path(".")
) -> ProcessSpec:
    replica = Replica(role, index, f"job-{role.lower()}-{index}", policy)
    return ProcessSpec(
        replica=replica,
        address=f"127.0.0.{index + 2}",
        container="main",
        image="img",
        argv=(sys.executable, "-c", code),
        env={},
        cwd=cwd,
        grace_seconds=2,
    )


def _run(
    processes: list[ProcessSpec],
    success: SuccessPolicy,
    *,
    backoff_limit: int | None = None,
    timeout: float | None = 30,
) -> tuple[Outcome, str, str]:
    lifecycle = RunRules(tuple(p.replica for p in processes), success, backoff_limit)
    plan = LocalPlan("Job ns/job", tuple(processes), (), HostMap({}, {}), lifecycle, Path("."))
    out, err = io.StringIO(), io.StringIO()
    outcome = Supervisor(
        plan, Console(out, err), {"PATH": ""}, timeout=timeout, restart_delay=0.1
    ).run()
    return outcome, out.getvalue(), err.getvalue()


CHIEF = SuccessPolicy(roles=("Chief",), summary="the Chief succeeds")


def test_the_chief_decides_and_the_servers_are_stopped() -> None:
    outcome, out, err = _run(
        [_process("Chief", 0, "print('done')"), _process("PS", 0, FOREVER)], CHIEF
    )
    assert outcome == Outcome(0, "job succeeded: the Chief succeeds")
    assert "job-chief-0 | done" in out
    final = err.splitlines()[-2:]  # the last status table's rows
    assert "job-chief-0" in final[0] and "succeeded (exit 0)" in final[0]
    assert "job-ps-0" in final[1] and "stopped" in final[1]


def test_a_failure_that_is_not_retried_fails_the_job() -> None:
    outcome, _, _ = _run(
        [
            _process("Chief", 0, FOREVER),
            _process("Worker", 0, "print('boom'); raise SystemExit(3)"),
        ],
        CHIEF,
    )
    assert outcome == Outcome(
        1, "job failed: job-worker-0 exited with code 3 (restartPolicy Never); last output: 'boom'"
    )


def test_tolerated_failures_do_not_fail_the_job() -> None:
    rule = SuccessPolicy(roles=("Chief",), tolerated=("Worker",), summary="the Chief succeeds")
    outcome, _, _ = _run(
        [
            _process("Chief", 0, "import time; time.sleep(1)"),
            _process("Worker", 0, "raise SystemExit(1)"),
        ],
        rule,
    )
    assert outcome.code == 0


def test_on_failure_restarts_until_it_succeeds(tmp_path: Path) -> None:
    flaky = (
        "import pathlib, sys; p = pathlib.Path('tries'); "
        "n = len(p.read_text()) if p.exists() else 0; "
        "p.write_text('x' * (n + 1)); sys.exit(0 if n >= 2 else 1)"
    )
    outcome, _, err = _run([_process("Worker", 0, flaky, "OnFailure", tmp_path)], SuccessPolicy())
    assert outcome == Outcome(0, "job succeeded: every replica succeeds")
    assert "run-local: job-worker-0 exited with code 1; restarting (OnFailure, restart 2)" in err
    assert (tmp_path / "tries").read_text() == "xxx"


def test_backoff_limit_counts_restarts_over_the_job() -> None:
    outcome, _, err = _run(
        [_process("Worker", 0, "print('bad'); raise SystemExit(2)", "OnFailure")],
        SuccessPolicy(),
        backoff_limit=2,
    )
    assert outcome == Outcome(
        1,
        "job-worker-0 exited with code 2 and the job's backoffLimit (2 restarts) is used up; "
        "last output: 'bad'",
    )
    assert "restarting (OnFailure, restart 2 of 2)" in err


def test_exit_code_policy_retries_only_codes_from_128(tmp_path: Path) -> None:
    retried = (
        "import pathlib, sys; p = pathlib.Path('t'); first = not p.exists(); "
        "p.touch(); sys.exit(137 if first else 0)"
    )
    outcome, _, _ = _run([_process("Worker", 0, retried, "ExitCode", tmp_path)], SuccessPolicy())
    assert outcome.code == 0
    outcome, _, _ = _run(
        [_process("Worker", 0, "raise SystemExit(1)", "ExitCode")], SuccessPolicy()
    )
    assert outcome.message.startswith(
        "job failed: job-worker-0 exited with code 1 (restartPolicy ExitCode)"
    )


def test_a_replica_waiting_for_a_peer_times_out_with_a_clear_message() -> None:
    waiting = "import time; print('waiting for rank 3', flush=True); time.sleep(60)"
    outcome, _, _ = _run([_process("Worker", 0, waiting)], SuccessPolicy(), timeout=1)
    assert outcome.code == 124
    assert outcome.message.startswith(
        "timed out after 1s and stopped every replica; still running: job-worker-0 (pid "
    )
    assert "last output: 'waiting for rank 3')" in outcome.message
    assert (
        "compare the rendezvous env (WORLD_SIZE, RANK, TF_CONFIG, NUM_PROCESSES" in outcome.message
    )


def test_every_replica_ended_without_meeting_the_rule() -> None:
    rule = SuccessPolicy(roles=("Chief",), tolerated=("Chief",), summary="the Chief succeeds")
    outcome, _, _ = _run([_process("Chief", 0, "raise SystemExit(1)")], rule)
    assert outcome == Outcome(
        1, "job failed: every replica has ended, but the job succeeds only when the Chief succeeds"
    )


def test_a_command_that_cannot_start_fails_its_replica() -> None:
    process = _process("Worker", 0, "")
    broken = ProcessSpec(**{**process.__dict__, "argv": ("/nonexistent/trainer",)})
    outcome, _, _ = _run([broken], SuccessPolicy())
    assert outcome.message == (
        "job failed: job-worker-0 exited with code 127 (restartPolicy Never); last output: "
        "\"cannot start '/nonexistent/trainer': No such file or directory\""
    )


def test_a_running_backend_does_not_keep_a_finished_job_alive() -> None:
    from dataclasses import replace

    backend = replace(_process("Redis", 0, FOREVER, "Always"), backend=True)
    rule = SuccessPolicy(roles=("Chief",), tolerated=("Chief",), summary="the Chief succeeds")
    chief = _process("Chief", 0, "raise SystemExit(1)")
    lifecycle = RunRules((chief.replica,), rule)
    plan = LocalPlan("Job ns/job", (backend, chief), (), HostMap({}, {}), lifecycle, Path("."))
    err = io.StringIO()
    outcome = Supervisor(plan, Console(io.StringIO(), err), {"PATH": ""}, timeout=20).run()
    assert outcome.message == (
        "job failed: every replica has ended, but the job succeeds only when the Chief succeeds"
    )
    assert "run-local: backends ready: job-redis-0" in err.getvalue()
    assert "job-redis-0  " in err.getvalue().splitlines()[-2]
    assert "stopped" in err.getvalue().splitlines()[-2]


def _after(process: ProcessSpec, *needs: tuple[str, str]) -> ProcessSpec:
    return replace(process, replica=replace(process.replica, depends_on=needs))


def test_a_replica_starts_once_what_it_depends_on_has_completed(tmp_path: Path) -> None:
    # The initializer leaves a file behind and ends; the worker fails without it.
    init = _process("Init", 0, "import time, pathlib; time.sleep(0.5); pathlib.Path('d').touch()")
    worker = _process("Worker", 0, "import pathlib; assert pathlib.Path('d').exists()")
    outcome, _, err = _run(
        [replace(init, cwd=tmp_path), _after(replace(worker, cwd=tmp_path), ("Init", "Complete"))],
        SuccessPolicy(),
    )
    assert outcome == Outcome(0, "job succeeded: every replica succeeds")
    first = err.split("run-local: Worker: Init Complete; starting")[0]
    assert re.search(r"job-worker-0\s+-\s+pending", first)


def test_ready_waits_only_until_the_dependency_runs() -> None:
    server = _process("Server", 0, FOREVER)
    client = _after(_process("Client", 0, "print('hello')"), ("Server", "Ready"))
    outcome, out, err = _run(
        [server, client], SuccessPolicy(roles=("Client",), summary="the Client succeeds")
    )
    assert outcome == Outcome(0, "job succeeded: the Client succeeds")
    assert "job-client-0 | hello" in out
    assert "run-local: Client: Server Ready; starting" in err


def test_a_failed_dependency_fails_the_job_and_its_dependents_never_start() -> None:
    init = _process("Init", 0, "raise SystemExit(5)")
    worker = _after(_process("Worker", 0, "print('ran')"), ("Init", "Complete"))
    outcome, out, err = _run([init, worker], SuccessPolicy())
    assert outcome == Outcome(
        1, "job failed: job-init-0 exited with code 5 (restartPolicy Never); last output: ''"
    )
    assert "ran" not in out
    last = [line for line in err.splitlines() if line.startswith("job-worker-0 ")][-1]
    assert re.search(r"job-worker-0\s+-\s+stopped", last)
