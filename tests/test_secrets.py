"""No render holds a secret: Secrets carry placeholders only, and nothing looks like a key.

The scan covers every example and stack on every target, unredacted (what
``render --show-secrets`` prints), so it also guards frameworks added later.
The last test follows the MPI key pair through the Pulumi component.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.paths import example_job_files, stack_files
from tests.support.pulumi_harness import run_program
from trainjobs.check import run
from trainjobs.cli import main
from trainjobs.components import TrainingJob
from trainjobs.k8s.generated import parse
from trainjobs.k8s.redact import REDACTED, redact
from trainjobs.k8s.yamlio import dump_all
from trainjobs.spec import load_path

KEY_MATERIAL = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\b(ssh-rsa|ssh-ed25519|ssh-dss|ecdsa-sha2-nistp\d+) AAAA"),
    # A long base64 run: a key or certificate body.
    re.compile(r"[A-Za-z0-9+/]{100,}={0,2}"),
]


def _cases() -> list[tuple[Path, str]]:
    return [(p, t) for p in [*example_job_files(), *stack_files()] for t in ("operator", "pods")]


@pytest.mark.parametrize(
    ("path", "target"), _cases(), ids=lambda v: v.stem if isinstance(v, Path) else str(v)
)
def test_no_render_contains_key_material(path: Path, target: str) -> None:
    stack = load_path(path)
    if not all(target in e.framework.targets for e in stack.jobs):
        pytest.skip(f"{path.name} has no {target} target")  # not a result: no such output
    manifests = run(stack, target=target).manifests  # type: ignore[arg-type]
    text = dump_all(manifests)
    for pattern in KEY_MATERIAL:
        assert not pattern.search(text), f"{path}: {pattern.pattern}"
    for secret in (m for m in manifests if m["kind"] == "Secret"):
        values = {**secret.get("data", {}), **secret.get("stringData", {})}
        if not values:
            continue  # an operator's webhook certificate Secret, filled at run time
        parsed = [parse(v) for v in values.values()]
        assert all(parsed), secret["metadata"]
        assert len({p.group for p in parsed if p}) == 1, secret["metadata"]
        assert set(redact(secret)["stringData"].values()) == {REDACTED}


def test_the_mpi_examples_do_render_a_secret() -> None:
    # Guards the scan above against passing because there is nothing to scan.
    path = next(p for p in example_job_files() if p.parent.name == "mpi-horovod-benchmarks")
    kinds = [m["kind"] for m in run(load_path(path), target="pods").manifests]
    assert kinds.count("Secret") == 1


def test_show_secrets_prints_placeholders(capsys: pytest.CaptureFixture[str]) -> None:
    path = next(p for p in example_job_files() if p.parent.name == "pytorch-horovod")
    assert main(["render", str(path), "--target", "pods", "--show-secrets"]) == 0
    out = capsys.readouterr().out
    assert "ssh-privatekey: <generated:ecdsa-p521-private:training/pytorch-horovod-ssh>" in out
    assert main(["render", str(path), "--target", "pods"]) == 0
    out = capsys.readouterr().out
    assert "ssh-privatekey: <redacted>" in out and "<generated:" not in out


def test_the_mpi_key_pair_is_generated_once_and_applied_as_a_secret() -> None:
    path = next(p for p in example_job_files() if p.parent.name == "pytorch-horovod")
    (entry,) = load_path(path).jobs
    resources = run_program(lambda: TrainingJob("pytorch-horovod", entry.job, target="pods"))
    keys = [r for r in resources if r.type == "tls:index/privateKey:PrivateKey"]
    assert [(k.name, k.inputs) for k in keys] == [
        ("training/pytorch-horovod-ssh", {"algorithm": "ECDSA", "ecdsaCurve": "P521"})
    ]
    (secret,) = [r for r in resources if r.type == "kubernetes:core/v1:Secret"]
    assert secret.options["secret_inputs"] == ["stringData"]
    assert secret.inputs["stringData"] == {
        "ssh-privatekey": "mock-private-key:training/pytorch-horovod-ssh",
        "ssh-publickey": "mock-public-key:training/pytorch-horovod-ssh",
    }
