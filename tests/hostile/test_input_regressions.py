"""Inputs the fuzzer (test_input_fuzz.py) once found crashing, kept as fixed cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.harness import assert_refused, run_cli

# A null where a container belongs, in a job wired to a backend: the backend's env and
# mounts were added to every container, and None has no .get (exit 3).
NULL_CONTAINER_WITH_BACKEND = """\
apiVersion: trainjobs.dev/v1alpha1
kind: RedisBackend
metadata: {name: rendezvous, namespace: default}
spec: {port: 16379, password: true}
---
apiVersion: kubeflow.org/v1alpha1
kind: Caffe2Job
metadata: {name: local-caffe2, namespace: default}
spec:
  replicaSpecs:
    replicas: 3
    template:
      spec:
        containers: [CONTAINER]
trainjobs: {backend: rendezvous}
"""


@pytest.mark.parametrize("container", ["null", "7", "'a string'", "[]"])
@pytest.mark.parametrize("command", ["check", "render"])
def test_a_container_that_is_not_a_mapping_is_a_finding(
    tmp_path: Path, command: str, container: str
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(NULL_CONTAINER_WITH_BACKEND.replace("CONTAINER", container))
    outcome = run_cli([command, str(job)], cwd=tmp_path)
    assert_refused(outcome, "containers")
