"""Updates of one stack across ``pulumi up`` runs, as a platform team makes them.

A stack of two jobs in one namespace is brought up with the real engine; then one
thing is changed and ``pulumi preview --diff`` must show that change, and only that.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.jobs import small_tfjob_entry
from tests.cluster.pulumi_up.pulumi_cli import Project

STACK = "updates"
SECRET = "s3cr3t-token-for-the-test"
"""The env value set with ``pulumi config set --secret``: must never be in plain text."""
STACK_FILE = """\
config:
  trainjobs:k8sVersion: "1.32"
  trainjobs:namespaces: [updates]
  trainjobs:jobs:
    # operator target; its TOKEN env is set with `pulumi config set --secret --path`.
    - apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      metadata: {name: alpha, namespace: updates}
      spec:
        runPolicy: {ttlSecondsAfterFinished: 86400}
        pytorchReplicaSpecs:
          Master:
            replicas: 1
            restartPolicy: Never
            template:
              spec:
                containers:
                  - name: pytorch
                    image: ghcr.io/example/pytorch-mnist:1.0
                    env: [{name: TOKEN, value: placeholder}]
                    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}
      trainjobs: {target: operator}
    # pods target, nothing secret in it.
""" + small_tfjob_entry("beta", "updates", "pods")
SECRET_PATH = (
    "trainjobs:jobs[0].spec.pytorchReplicaSpecs.Master.template.spec.containers[0].env[0].value"
)


@pytest.fixture(scope="module")
def project(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Project]:
    """The stack, brought up once for the module; destroyed after."""
    workdir = tmp_path_factory.mktemp("pulumi-updates")
    proj = Project(workdir, kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    proj.init(STACK, STACK_FILE)
    proj.pulumi("config", "set", "--secret", "--path", SECRET_PATH, SECRET, "--stack", STACK)
    proj.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)
    yield proj
    shutil.rmtree(workdir / "state" / ".pulumi" / "locks", ignore_errors=True)
    proj.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK, ok=(0, 255))


def test_a_plain_jobs_change_shows_in_the_diff_next_to_a_secret_job(project: Project) -> None:
    """Job beta holds nothing secret: its image change reads as the images, not ``[secret]``.

    Pulumi marks the whole ``trainjobs:jobs`` setting secret as soon as one job holds a
    ``secure:`` value; the program used to encrypt every job of it, so ``preview --diff``
    of any job showed ``image: [secret] => [secret]``. The secret job stays encrypted:
    its value is in neither the preview nor ``pulumi stack export``.
    """
    stack_file = project.stack_file(STACK)
    original = stack_file.read_text()
    stack_file.write_text(original.replace("tf-mnist:1.0", "tf-mnist:2.0"))
    try:
        diff = project.pulumi("preview", "--diff", "--stack", STACK)
    finally:
        stack_file.write_text(original)
    assert "ghcr.io/example/tf-mnist:1.0" in diff.stdout, str(diff)
    assert "ghcr.io/example/tf-mnist:2.0" in diff.stdout, str(diff)
    assert "[secret] => [secret]" not in diff.stdout, str(diff)
    assert SECRET not in diff.stdout + diff.stderr
    state = project.pulumi("stack", "export", "--stack", STACK).stdout
    assert SECRET not in state
    alpha = [
        r
        for r in json.loads(state)["deployment"]["resources"]
        if r["type"] == "kubernetes:kubeflow.org/v1:PyTorchJob"
    ]
    assert len(alpha) == 1
    assert "ciphertext" in json.dumps(alpha[0]["outputs"]["spec"])
