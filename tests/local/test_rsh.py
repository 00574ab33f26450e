"""The local stand-in for ssh: the agent mpirun calls, and a plan with remote-shell workers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trainjobs.frameworks.tensorflow import TensorFlow, TFJob
from trainjobs.local import rsh
from trainjobs.local.environment import Machine
from trainjobs.local.plan import build_plan
from trainjobs.plan import RunRules
from trainjobs.render import render_job
from trainjobs.spec import load_path
from trainjobs.spec.entry import JobEntry


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["-o", "ConnectionAttempts=10", "127.0.0.3", "orted", "-mca", "x"],
            ("127.0.0.3", "orted -mca x"),
        ),
        (["-x", "-p", "22", "-l", "root", "h", "echo hi"], ("h", "echo hi")),
        (["h"], ("h", "")),
    ],
)
def test_remote_command_skips_ssh_options(args: list[str], expected: tuple[str, str]) -> None:
    assert rsh.remote_command(args) == expected


def test_remote_command_needs_a_host() -> None:
    with pytest.raises(ValueError, match="no host given"):
        rsh.remote_command(["-o", "X"])


def _agent(folder: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainjobs.local.agent", "agent", str(folder), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_the_agent_runs_the_command_in_the_workers_folder_and_env(tmp_path: Path) -> None:
    worker = tmp_path / "worker"
    worker.mkdir()
    (tmp_path / "127.0.0.3.json").write_bytes(
        rsh.host_file("pi-worker-0", worker, {"ROLE": "worker"}, ["LAUNCHER_ONLY"])
    )
    env = {"PATH": "/usr/bin:/bin", "LAUNCHER_ONLY": "x", "KEPT": "y", "ROLE": "launcher"}
    result = _agent(
        tmp_path,
        "-o",
        "ConnectionAttempts=10",
        "127.0.0.3",
        'echo "$ROLE ${LAUNCHER_ONLY:-unset} $KEPT $(pwd)"',
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"worker unset y {worker}\n"
    unknown = _agent(tmp_path, "127.0.0.9", "true", env=env)
    assert unknown.returncode == 255
    assert unknown.stderr == (
        "run-local agent: no replica of this job has the address '127.0.0.9' "
        "(workers: 127.0.0.3); is the hostfile right?\n"
    )


class _RemoteWorkers(TensorFlow):
    """A TFJob whose workers serve a remote shell, as MPI workers do."""

    def run_rules(self, job: TFJob) -> RunRules:
        lifecycle = super().run_rules(job)
        replicas = tuple(
            r if r.role != "Worker" else type(r)(**{**r.__dict__, "remote_shell": True})
            for r in lifecycle.replicas
        )
        return RunRules(replicas, lifecycle.success, lifecycle.backoff_limit)


def test_a_plan_with_remote_shell_workers(tmp_path: Path) -> None:
    job_file = tmp_path / "job.yaml"
    job_file.write_text(
        """
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: pi, namespace: ml}
spec:
  tfReplicaSpecs:
    Chief:
      template:
        spec:
          containers:
            - name: tensorflow
              image: i
              command: [mpirun, python, pi.py]
              env: [{name: ROLE, value: launcher}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: tensorflow, image: i, env: [{name: ROLE, value: worker}]}]
"""
    )
    loaded = load_path(job_file).jobs[0]
    entry = JobEntry(loaded.job, _RemoteWorkers(), loaded.options, loaded.path, loaded.source)
    rendered, findings = render_job(entry, "pods")
    assert rendered is not None and not findings
    scratch = tmp_path / "scratch"
    plan = build_plan(
        rendered, scratch=scratch, base_dir=tmp_path, machine=Machine(), generate=str, python="/py"
    )
    chief, worker0, _ = plan.processes
    assert chief.argv == ("mpirun", "python", "pi.py")
    assert worker0.argv == ("/py", "-m", "trainjobs.local.agent", "serve", "pi-worker-0")
    agent = str(scratch / "rsh" / "agent")
    assert {chief.env["OMPI_MCA_plm_rsh_agent"], worker0.env["HYDRA_LAUNCHER_EXEC"]} == {agent}
    files = {f.path.name: f for f in plan.files}
    assert files["agent"].mode == 0o755
    assert files["agent"].content.decode() == (
        f"#!/bin/sh\nexec '/py' -m trainjobs.local.agent agent '{scratch / 'rsh'}' \"$@\"\n"
    )
    host = json.loads(files["127.0.0.3.json"].content)
    assert host["name"] == "pi-worker-0"
    assert host["env"]["ROLE"] == "worker"
    assert "OMPI_MCA_plm_rsh_agent" not in host["env"]
    assert host["cwd"] == str(tmp_path)
