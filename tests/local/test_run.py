"""run-local end to end with tiny Python commands: addresses, selection, bad input, the CLI."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES
from trainjobs.cli import main
from trainjobs.errors import SpecError
from trainjobs.local import run_local
from trainjobs.local.run import local_environ


def _print_env(folder: Path) -> str:
    """Print the env, then wait until both workers have printed theirs: worker 0's
    success ends the job and stops worker 1, which must not happen before it printed."""
    return f"""
import json, os, pathlib, time
keys = ['TF_CONFIG', 'GLOO_SOCKET_IFNAME', 'PYTHONUNBUFFERED', 'PORT']
print('env ' + json.dumps({{k: os.environ.get(k) for k in keys}}), flush=True)
index = json.loads(os.environ['TF_CONFIG'])['task']['index']
folder = pathlib.Path({str(folder)!r})
(folder / f'printed-{{index}}').touch()
while not all((folder / f'printed-{{i}}').exists() for i in (0, 1)):
    time.sleep(0.05)
"""


def _tfjob(command: str, name: str = "echo", extra: str = "") -> str:
    return f"""
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {{name: {name}, namespace: ml}}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: tensorflow
              image: tf:1
              command: {json.dumps([sys.executable, "-c", command])}
              env: [{{name: PORT, value: "$(TF_CONFIG)"}}]
{extra}"""


def _write(tmp_path: Path, *docs: str) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text("---".join(docs))
    return path


def _lines(out: str, prefix: str) -> list[dict[str, str]]:
    return [
        json.loads(line.split(" | env ", 1)[1])
        for line in out.splitlines()
        if line.startswith(prefix)
    ]


def test_replicas_see_loopback_addresses_and_the_runner_env(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    job = _tfjob(_print_env(tmp_path))
    outcome = run_local(_write(tmp_path, job), out=out, err=err, timeout=60)
    assert outcome.code == 0, err.getvalue()
    [worker1] = _lines(out.getvalue(), "echo-worker-1 |")
    config = (
        '{"cluster":{"worker":["127.0.0.2:2222","127.0.0.3:2223"]},'
        '"task":{"type":"worker","index":1},"environment":"cloud"}'
    )
    assert worker1 == {
        "TF_CONFIG": config,
        "GLOO_SOCKET_IFNAME": "lo",
        "PYTHONUNBUFFERED": "1",
        # env entries are expanded against the ones before them: TF_CONFIG comes after
        "PORT": "$(TF_CONFIG)",
    }
    assert "run-local: job succeeded: Worker 0 succeeds" in err.getvalue()
    assert "echo-worker-1  127.0.0.3  2222->2223  Never" in err.getvalue()


def test_several_jobs_need_a_choice(tmp_path: Path) -> None:
    path = _write(tmp_path, _tfjob("pass", "a"), _tfjob("pass", "b"))
    with pytest.raises(SpecError) as info:
        run_local(path, out=io.StringIO(), err=io.StringIO())
    assert str(info.value.findings[0]) == (
        f"error: {path}: the input has several jobs (got ['a', 'b']); "
        "fix: choose one with --job NAME (one of: a, b)"
    )
    with pytest.raises(SpecError, match="no job named 'c'"):
        run_local(path, job="c", out=io.StringIO(), err=io.StringIO())
    assert run_local(path, job="b", out=io.StringIO(), err=io.StringIO()).code == 0


def test_a_port_in_use_is_reported_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        ports = f"              ports: [{{name: tfjob-port, containerPort: {port}}}]\n"
        path = _write(tmp_path, _tfjob("pass") + ports)
        with pytest.raises(SpecError) as info:
            run_local(path, out=io.StringIO(), err=io.StringIO())
    assert str(info.value.findings[0]) == (
        f"error: {path}: echo-worker-0 (container 'tensorflow'): containerPort {port}: cannot "
        f"listen on 0.0.0.0:{port}: another process is listening on it (got {port}); "
        "fix: stop what uses the port, or change the containerPort"
    )


def test_a_command_that_is_not_installed_is_bad_input(tmp_path: Path) -> None:
    text = _tfjob("pass").replace(json.dumps([sys.executable, "-c", "pass"]), '["no-such-trainer"]')
    path = _write(tmp_path, text)
    with pytest.raises(SpecError) as info:
        run_local(path, out=io.StringIO(), err=io.StringIO())
    assert [str(f) for f in info.value.findings] == [
        f"error: {path}: echo-worker-{i} (container 'tensorflow'): command: the command is not "
        "installed on this machine (got 'no-such-trainer'); fix: install it (see the example's "
        "README), or fix the command"
        for i in (0, 1)
    ]


def test_the_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok = _write(tmp_path, _tfjob("print('hi')"))
    assert main(["run-local", str(ok)]) == 0
    assert "echo-worker-0 | hi" in capsys.readouterr().out
    failing = _write(tmp_path, _tfjob("raise SystemExit(4)"))
    assert main(["run-local", str(failing)]) == 1
    # Both workers fail; whichever is seen first fails the job.
    assert re.search(r"job failed: echo-worker-[01] exited with code 4", capsys.readouterr().err)
    hanging = _write(tmp_path, _tfjob("import time; time.sleep(30)"))
    assert main(["run-local", str(hanging), "--timeout", "0.5"]) == 124
    # A timeout that is no time at all is bad input, not a job that timed out at once.
    for bad in ("-1", "0", "nan", "inf", "ten"):
        with pytest.raises(SystemExit) as exited:
            main(["run-local", str(hanging), "--timeout", bad])
        assert exited.value.code == 2
        assert (
            f"argument --timeout: must be a number above 0 (got '{bad}'); fix: e.g. --timeout 600"
        ) in capsys.readouterr().err
    no_command = _write(tmp_path, _tfjob("pass").replace("command:", "args:"))
    assert main(["run-local", str(no_command)]) == 2
    err = capsys.readouterr().err
    assert "the container sets no command" in err
    assert err.rstrip().endswith("2 errors; nothing was started")


def test_python_of_trainjobs_comes_first_on_path() -> None:
    env = local_environ({"PATH": "/usr/bin", "GLOO_SOCKET_IFNAME": "eth0"})
    assert env["PATH"] == f"{Path(sys.executable).parent}:/usr/bin"
    assert env["GLOO_SOCKET_IFNAME"] == "lo"


def _sigint_as_at_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 130)])
def test_ctrl_c_and_sigterm_stop_every_replica(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    path = _write(tmp_path, _tfjob("import time; print('up', flush=True); time.sleep(60)"))
    runner = subprocess.Popen(
        [sys.executable, "-m", "trainjobs", "run-local", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as at a terminal: a suite started in the background (`make test &`)
        # inherits SIGINT ignored, and Python then never makes it a KeyboardInterrupt,
        # so run-local would rightly go on running.
        preexec_fn=_sigint_as_at_a_terminal,
    )
    assert runner.stdout is not None
    seen = [runner.stdout.readline(), runner.stdout.readline()]  # both replicas are up
    if not all(seen):
        pytest.fail(f"run-local ended early: {runner.communicate(timeout=30)[1]}")
    assert sorted(line.split(" |")[0] for line in seen) == ["echo-worker-0", "echo-worker-1"]
    runner.send_signal(sig)
    _, err = runner.communicate(timeout=30)
    assert runner.returncode == code, err
    assert "run-local: interrupted; stopped every replica" in err
    pids = [int(p) for p in re.findall(r"^echo-worker-\d\s+(\d+)\s", err, re.M)]
    assert len(set(pids)) == 2
    for pid in set(pids):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_framework_without_a_lifecycle_is_refused_with_a_reason() -> None:
    # The EDL TrainingJob's trainers are one parallel batch Job: not described for run-local.
    path = EXAMPLES / "paddle-edl-fit-a-line" / "trainingjob.yaml"
    with pytest.raises(SpecError) as info:
        run_local(path, out=io.StringIO(), err=io.StringIO())
    assert [str(f) for f in info.value.findings] == [
        f"error: {path}: jobs[0]: the paddle-edl framework does not describe its replicas "
        "(Framework.run_rules), so run-local cannot run it (got 'paddlepaddle.org/v1 "
        "TrainingJob'); fix: run it on a cluster, or add run_rules() to the framework plugin"
    ]


def _trainjob(fetch: str, train: str) -> str:
    return f"""
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {{name: with-data, namespace: ml, labels: {{trainer.kubeflow.org/framework: torch}}}}
spec:
  mlPolicy: {{numNodes: 1, torch: {{}}}}
  template:
    spec:
      volumeClaimPolicies:
        - templates:
            - metadata: {{name: initializer}}
              spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}
      replicatedJobs:
        - name: dataset-initializer
          template:
            metadata:
              labels: {{trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
            spec:
              template:
                spec:
                  containers:
                    - name: dataset-initializer
                      image: init:1
                      command: {json.dumps([sys.executable, "-c", fetch, "/workspace/data"])}
                      volumeMounts: [{{name: initializer, mountPath: /workspace}}]
        - name: node
          dependsOn: [{{name: dataset-initializer, status: Complete}}]
          template:
            metadata:
              labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: torch:1
                      volumeMounts: [{{name: initializer, mountPath: /workspace}}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: tj, namespace: ml}}
spec:
  runtimeRef: {{name: with-data, kind: TrainingRuntime}}
  initializer:
    dataset: {{storageUri: "hf://org/set"}}
  trainer:
    numNodes: 2
    command: {json.dumps([sys.executable, "-c", train, "/workspace/data"])}
"""


FETCH = """
import os, pathlib, sys, time
time.sleep(0.5)  # the nodes must not start before this has ended
pathlib.Path(sys.argv[1]).write_text(os.environ['STORAGE_URI'])
print('fetched', flush=True)
"""
TRAIN = """
import json, os, pathlib, sys
keys = ['PET_NODE_RANK', 'JOB_COMPLETION_INDEX', 'PET_MASTER_ADDR', 'PET_NNODES']
seen = {k: os.environ[k] for k in keys}
seen['data'] = pathlib.Path(sys.argv[1]).read_text()
print('env ' + json.dumps(seen), flush=True)
"""


def test_a_trainjob_runs_its_initializer_first_then_every_node(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    outcome = run_local(_write(tmp_path, _trainjob(FETCH, TRAIN)), out=out, err=err, timeout=60)
    assert outcome.code == 0, err.getvalue() + out.getvalue()
    assert outcome.message == "job succeeded: every pod succeeds (JobSet successPolicy All)"
    lines = out.getvalue().splitlines()
    assert lines[0] == "tj-dataset-initializer-0-0 | fetched"
    for index in (0, 1):
        assert _lines(out.getvalue(), f"tj-node-0-{index} ") == [
            {
                "PET_NODE_RANK": str(index),
                "JOB_COMPLETION_INDEX": str(index),
                "PET_MASTER_ADDR": "127.0.0.3",
                "PET_NNODES": "2",
                "data": "hf://org/set",
            }
        ]
    assert "  order: node starts once dataset-initializer Complete (dependsOn)" in err.getvalue()
    assert "run-local: node: dataset-initializer Complete; starting" in err.getvalue()


def test_a_failed_initializer_fails_the_job_before_any_node_starts(tmp_path: Path) -> None:
    text = _trainjob("raise SystemExit(3)", TRAIN)
    # Retried up to the Job's backoffLimit (6, Kubernetes' default): make it short.
    text = text.replace(
        "            spec:\n              template:\n                spec:\n                  "
        "containers:\n                    - name: dataset-initializer",
        "            spec:\n              backoffLimit: 1\n              template:\n"
        "                spec:\n                  containers:\n"
        "                    - name: dataset-initializer",
    )
    out, err = io.StringIO(), io.StringIO()
    outcome = run_local(_write(tmp_path, text), out=out, err=err, timeout=60)
    assert outcome.code == 1, err.getvalue()
    assert outcome.message.startswith(
        "tj-dataset-initializer-0-0 exited with code 3 and the job's backoffLimit (1 restarts) "
        "is used up"
    )
    assert "tj-node-0-" not in out.getvalue()
    final = err.getvalue().splitlines()[-3:-1]  # the last status table's node rows
    assert [row.split()[0] for row in final] == ["tj-node-0-0", "tj-node-0-1"]
    assert all("stopped" in row and " - " in f" {row} " for row in final)
