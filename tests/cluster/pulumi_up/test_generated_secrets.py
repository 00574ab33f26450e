"""Generated secrets and backend NetworkPolicies on the real engine, provider and cluster.

A stack of a RedisBackend (password and NetworkPolicy by default: nothing asked for)
and an MPIJob on the ``pods`` target (which needs an SSH key pair) that names the
backend is brought up with the real Pulumi CLI, its Python language host, the
``pulumi-resource-pulumi-python`` plugin that runs trainjobs' generating resources, the
Kubernetes provider and the control plane. The proofs read the cluster: the values
reach the pods, stay the same across ``up``s, never show in ``pulumi stack export``, and
the NetworkPolicy admits exactly the job's pods.

Without the change that made these resources trainjobs' own (they were the random and
tls providers' resources, whose plugins cannot be built here), the first ``up`` fails:
``no resource plugin 'pulumi-resource-random' found``. Without secure defaults, the
Redis has no Secret and no NetworkPolicy, and the job's pods no label.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import string
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.cluster.control_plane import ControlPlane
from tests.cluster.kube import poll
from tests.cluster.pulumi_up.pulumi_cli import Project

STACK = "secured"
NS = "secured"
JOB = "allreduce"
JOB_PODS = f"training.kubeflow.org/job-name={JOB}"
SMALL = "{requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}"
STACK_FILE = f"""\
config:
  trainjobs:k8sVersion: "1.32"
  trainjobs:namespaces: [{NS}]
  trainjobs:backends:
    - apiVersion: trainjobs.dev/v1alpha1
      kind: RedisBackend
      metadata: {{name: redis, namespace: {NS}}}
  trainjobs:jobs:
    - apiVersion: kubeflow.org/v2beta1
      kind: MPIJob
      metadata: {{name: {JOB}, namespace: {NS}}}
      spec:
        slotsPerWorker: 1
        runPolicy: {{ttlSecondsAfterFinished: 86400}}
        mpiReplicaSpecs:
          Launcher:
            replicas: 1
            restartPolicy: OnFailure
            template:
              spec:
                containers:
                  - name: launcher
                    image: mpioperator/openmpi:0.6.0
                    command: [mpirun, -np, "2", hostname]
                    resources: {SMALL}
          Worker:
            replicas: 2
            template:
              spec:
                containers:
                  - name: worker
                    image: mpioperator/openmpi:0.6.0
                    resources: {SMALL}
      trainjobs: {{target: pods, backend: redis}}
"""


@dataclass(frozen=True)
class Values:
    """The generated values as the cluster holds them."""

    password: str
    private_key: str
    public_key: str

    def fragments(self) -> dict[str, str]:
        """Every text a value could leak as: itself, its base64, and its long pieces."""
        out: dict[str, str] = {}
        for name, value in vars(self).items():
            out[name] = value
            out[f"base64({name})"] = base64.b64encode(value.encode()).decode()
        for i, line in enumerate(self.private_key.splitlines()):
            if len(line) >= 40:
                out[f"private key line {i}"] = line
        out["public key body"] = self.public_key.split()[1]
        return out


def _secret(cluster: ControlPlane, name: str) -> dict[str, str]:
    found = cluster.client.get(f"/api/v1/namespaces/{NS}/secrets/{name}")
    assert found is not None, f"Secret {NS}/{name} is missing"
    return {k: base64.b64decode(v).decode() for k, v in found["data"].items()}


def _values(cluster: ControlPlane) -> Values:
    ssh = _secret(cluster, f"{JOB}-ssh")
    return Values(
        _secret(cluster, "redis-auth")["password"],
        ssh["ssh-privatekey"],
        ssh["ssh-publickey"],
    )


def _pods(cluster: ControlPlane, selector: str) -> list[dict[str, Any]]:
    return cluster.client.items(f"/api/v1/namespaces/{NS}/pods?labelSelector={selector}")


def _job_pods(cluster: ControlPlane) -> list[dict[str, Any]]:
    """The launcher's and the two workers' pods (the launcher's Job makes its pod a moment
    after ``up``)."""
    found: list[dict[str, Any]] = poll(
        "the MPIJob's 3 pods",
        lambda: p if len(p := _pods(cluster, JOB_PODS)) == 3 else None,
        timeout=60,
    )
    return found


@pytest.fixture(scope="module")
def project(
    cluster: ControlPlane,
    kwok_node: str,
    pulumi_dirs: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Project]:
    """The stack, brought up once for the module; destroyed after."""
    workdir = tmp_path_factory.mktemp("pulumi-secrets")
    proj = Project(workdir, kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    proj.init(STACK, STACK_FILE)
    proj.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)
    yield proj
    shutil.rmtree(workdir / "state" / ".pulumi" / "locks", ignore_errors=True)
    proj.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK, ok=(0, 255))


@pytest.fixture(scope="module")
def first(project: Project, cluster: ControlPlane) -> Values:
    """The values after the first ``up``."""
    return _values(cluster)


def test_the_generating_resources_run_in_the_python_dynamic_provider(project: Project) -> None:
    types = sorted(r["type"] for r in project.export(STACK))
    assert "pulumi:providers:pulumi-python" in types
    assert types.count("pulumi-python:dynamic/trainjobs:GeneratedPassword") == 1
    assert types.count("pulumi-python:dynamic/trainjobs:GeneratedKeyPair") == 1
    assert not [t for t in types if t.startswith(("random:", "tls:"))]


def test_the_password_reaches_redis_and_the_jobs_pods(first: Values, cluster: ControlPlane) -> None:
    assert len(first.password) == 32 and set(first.password) <= set(
        string.ascii_letters + string.digits
    )
    ref = {"secretKeyRef": {"name": "redis-auth", "key": "password"}}
    (redis,) = _pods(cluster, "app.kubernetes.io/instance=redis")
    env = {e["name"]: e.get("valueFrom") for e in redis["spec"]["containers"][0]["env"]}
    assert env["REDIS_PASSWORD"] == ref and env["REDISCLI_AUTH"] == ref
    assert "--requirepass" in redis["spec"]["containers"][0]["args"]
    for pod in _job_pods(cluster):
        env = {e["name"]: e.get("valueFrom") for e in pod["spec"]["containers"][0]["env"]}
        assert env["REDIS_PASSWORD"] == ref, pod["metadata"]["name"]


def test_the_ssh_key_pair_is_ecdsa_p521_and_mounted_in_every_pod(
    first: Values, cluster: ControlPlane
) -> None:
    key = serialization.load_pem_private_key(first.private_key.encode(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP521R1)
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    assert first.public_key.strip() == public.decode()
    for pod in _job_pods(cluster):
        secrets = [v["secret"]["secretName"] for v in pod["spec"]["volumes"] if "secret" in v]
        assert f"{JOB}-ssh" in secrets, pod["metadata"]["name"]


def test_the_network_policy_admits_exactly_the_jobs_pods(cluster: ControlPlane) -> None:
    policy = cluster.client.get(f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies/redis")
    assert policy is not None
    spec = policy["spec"]
    assert spec["policyTypes"] == ["Ingress"]
    (rule,) = spec["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]
    assert rule["from"] == [{"podSelector": {"matchLabels": {"trainjobs.dev/backend": "redis"}}}]
    (selected,) = _pods(cluster, "app.kubernetes.io/name=redis,app.kubernetes.io/instance=redis")
    assert selected["metadata"]["name"].startswith("redis-")
    admitted = {p["metadata"]["name"] for p in _pods(cluster, "trainjobs.dev/backend=redis")}
    job_pods = {p["metadata"]["name"] for p in _job_pods(cluster)}
    assert admitted == job_pods


def test_a_second_up_changes_nothing_and_keeps_the_values(
    project: Project, cluster: ControlPlane, first: Values
) -> None:
    project.pulumi("preview", "--expect-no-changes", "--stack", STACK)
    out = project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK).stdout
    summary = out.rpartition("Resources:")[2]
    assert "unchanged" in summary and not re.search(
        r"\d+ (to )?(create|update|delete|replace)", summary
    ), out
    assert _values(cluster) == first


def test_the_stack_export_never_holds_a_value(project: Project, first: Values) -> None:
    """Searched for each value read from the cluster, and for its base64."""
    exported = project.pulumi("stack", "export", "--stack", STACK).stdout
    leaks = [name for name, text in first.fragments().items() if text in exported]
    assert leaks == []
    generating = [
        r
        for r in json.loads(exported)["deployment"]["resources"]
        if r["type"].startswith("pulumi-python:dynamic/trainjobs:")
    ]
    assert len(generating) == 2
    for resource in generating:
        for name in ("result", "private_key_pem", "public_key_openssh"):
            if name in resource["outputs"]:
                assert "ciphertext" in json.dumps(resource["outputs"][name]), name
    # The same export with --show-secrets does hold them: the search above can find them.
    shown = project.pulumi("stack", "export", "--show-secrets", "--stack", STACK).stdout
    assert first.password in shown
