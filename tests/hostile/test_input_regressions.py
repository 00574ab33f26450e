"""Inputs the fuzzer (test_input_fuzz.py) once found crashing, kept as fixed cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.harness import assert_refused, run_cli
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.k8s.yamlio import dump_all
from trainjobs.spec import load_path

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


def test_a_mount_without_name_or_path_is_left_to_the_schema(tmp_path: Path) -> None:
    # Found by the fuzzer: an MSJob (a seed kind, whose rules check mounts themselves)
    # with `volumeMounts: [{}]` got "add a volume named None".
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MSJob",
        "metadata": {"name": "m"},
        "spec": {
            "replicaSpecs": [
                {
                    "replicaType": "MASTER",
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "mindspore", "image": "m:1", "volumeMounts": [{}, {}]}
                            ]
                        }
                    },
                }
            ]
        },
    }
    path = tmp_path / "job.yaml"
    path.write_text(dump_all([job]))
    with pytest.raises(SpecError) as info:
        run(load_path(path))
    lines = [str(f) for f in info.value.findings]
    assert not [line for line in lines if "None" in line], lines
    assert any("'name' is a required property" in line for line in lines), lines
